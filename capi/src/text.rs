//! Text in and out of C, and the calls about locations: which this machine has, why a
//! technology is missing, the route between two.

use std::ffi::{c_char, CStr};

use locus_rs::{Location, Technology};

use crate::{call, Fail, LocusStatus};

/// A C string argument as UTF-8 text.
pub(crate) fn text_arg<'a>(p: *const c_char, what: &str) -> Result<&'a str, Fail> {
    if p.is_null() {
        return Err(Fail::new(
            LocusStatus::LocusErrorNull,
            format!("{what} is NULL"),
        ));
    }
    // SAFETY: the caller passes a NUL-terminated string (the header's contract); it is
    // only read, for the duration of the call.
    let text = unsafe { CStr::from_ptr(p) };
    text.to_str().map_err(|_| {
        Fail::new(
            LocusStatus::LocusErrorInvalid,
            format!("{what} is not UTF-8 text"),
        )
    })
}

/// A location argument (`"host"`, `"opencl:1"`, ...).
pub(crate) fn location_arg(p: *const c_char, what: &str) -> Result<Location, Fail> {
    Ok(text_arg(p, what)?.parse::<Location>()?)
}

/// A pointer argument that must not be NULL.
pub(crate) fn out_arg<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Fail> {
    // SAFETY: a non-NULL output pointer points to a `T` the caller owns for the call
    // (the header's contract).
    unsafe { p.as_mut() }
        .ok_or_else(|| Fail::new(LocusStatus::LocusErrorNull, format!("{what} is NULL")))
}

/// Writes `text` and its NUL into `buf` of `capacity` bytes, and the bytes it takes
/// (NUL included) into `*needed` when `needed` is not NULL. A `buf` too small (or NULL)
/// is `LOCUS_ERROR_BUFFER_TOO_SMALL`, with `*needed` set and `buf` untouched.
pub(crate) fn text_out(
    text: &str,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> Result<(), Fail> {
    let size = text.len() + 1;
    if !needed.is_null() {
        *out_arg(needed, "needed")? = size;
    }
    if buf.is_null() || capacity < size {
        return Err(Fail::new(
            LocusStatus::LocusErrorBufferTooSmall,
            format!("the text takes {size} bytes with its NUL; the buffer has {capacity}"),
        ));
    }
    // SAFETY: `buf` holds `capacity >= size` bytes (the caller's contract), and `text`
    // is a Rust string, so the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
        *buf.add(text.len()) = 0;
    }
    Ok(())
}

/// How many locations this machine has (the host first), into `*count`.
///
/// # Safety
/// `count` is NULL or points to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_location_count(count: *mut usize) -> LocusStatus {
    call("locus_location_count", || {
        *out_arg(count, "count")? = locus_rs::available().len();
        Ok(())
    })
}

/// The name of location `index` (0 ..< `locus_location_count`), such as `"opencl:1"`,
/// into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`).
///
/// # Safety
/// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_location_name(
    index: usize,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> LocusStatus {
    call("locus_location_name", || {
        let locations = locus_rs::available();
        let location = locations.get(index).ok_or_else(|| {
            Fail::new(
                LocusStatus::LocusErrorInvalid,
                format!(
                    "index {index} is past the {} locations this machine has",
                    locations.len()
                ),
            )
        })?;
        text_out(&location.to_string(), buf, capacity, needed)
    })
}

/// Why `technology` (`"cuda"`, `"opencl"`, ...) has no location here, into `buf`: the
/// empty string when it has one.
///
/// # Safety
/// `technology` is NULL or a NUL-terminated string; `buf` and `needed` as for
/// `locus_location_name`.
#[no_mangle]
pub unsafe extern "C" fn locus_technology_missing(
    technology: *const c_char,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> LocusStatus {
    call("locus_technology_missing", || {
        let technology: Technology = text_arg(technology, "technology")?.parse()?;
        let registry = locus_rs::registry();
        let reason = registry
            .missing()
            .get(&technology)
            .cloned()
            .unwrap_or_default();
        text_out(&reason, buf, capacity, needed)
    })
}

/// The route a copy of `bytes` from memory at `src` to memory at `dst` takes, as text
/// (`"opencl:0 -> host: direct (...)"`), into `buf`.
///
/// # Safety
/// `src` and `dst` are NULL or NUL-terminated strings; `buf` and `needed` as for
/// `locus_location_name`.
#[no_mangle]
pub unsafe extern "C" fn locus_route(
    src: *const c_char,
    dst: *const c_char,
    bytes: usize,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> LocusStatus {
    call("locus_route", || {
        let (s, d) = (location_arg(src, "src")?, location_arg(dst, "dst")?);
        let route = locus_rs::transfer::copy_route_for(locus_rs::registry(), s, d, bytes)?;
        text_out(&route.to_string(), buf, capacity, needed)
    })
}
