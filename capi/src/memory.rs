//! Memory at a location: allocate, free, read, write, fill, copy between any two
//! (umem's `copy_to` / `copy_from`, on the route the transfer matrix picks), ask
//! whether code at a location reaches it in place, and its host address when host code
//! does. Every range is checked before anything is written.

use std::ffi::{c_char, c_void};

use locus_rs::Memory;

use crate::handles::{LocusMemory, MEMORY};
use crate::text::{location_arg, out_arg, text_out};
use crate::{call, Fail, LocusStatus};

/// A byte range argument: NULL only when `len` is 0.
fn bytes_arg<'a>(p: *const c_void, len: usize, what: &str) -> Result<&'a [u8], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Fail::new(
            LocusStatus::LocusErrorNull,
            format!("{what} is NULL for {len} bytes"),
        ));
    }
    // SAFETY: the caller passes `len` readable bytes at `p` for the call (the header's
    // contract).
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
}

/// Allocates `bytes` at `location` (`"host"`, `"opencl:0"`, `"cuda:1"`, ...) through
/// its default memory resource, and stores the new handle in `*out`. Free it with
/// `locus_memory_free`.
///
/// # Safety
/// `location` is NULL or a NUL-terminated string; `out` is NULL or points to a
/// `LocusMemory *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_new(
    location: *const c_char,
    bytes: usize,
    out: *mut *mut LocusMemory,
) -> LocusStatus {
    call("locus_memory_new", || {
        let location = location_arg(location, "location")?;
        let out = out_arg(out, "out")?;
        *out = MEMORY.insert(Memory::from_resource(
            &locus_rs::resource::default_for(location)?,
            bytes,
        )?);
        Ok(())
    })
}

/// Frees memory made by `locus_memory_new` (after any call using it on another thread
/// returns). NULL does nothing; a handle freed already is `LOCUS_ERROR_BAD_HANDLE`.
#[no_mangle]
pub extern "C" fn locus_memory_free(memory: *mut LocusMemory) -> LocusStatus {
    call("locus_memory_free", || MEMORY.remove(memory, "the memory"))
}

/// Its size in bytes, into `*bytes`.
///
/// # Safety
/// `bytes` is NULL or points to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_size(
    memory: *const LocusMemory,
    bytes: *mut usize,
) -> LocusStatus {
    call("locus_memory_size", || {
        let m = MEMORY.get(memory, "memory")?;
        *out_arg(bytes, "bytes")? = m.len();
        Ok(())
    })
}

/// Its location's name, into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`).
///
/// # Safety
/// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_location(
    memory: *const LocusMemory,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> LocusStatus {
    call("locus_memory_location", || {
        let m = MEMORY.get(memory, "memory")?;
        text_out(&m.location().to_string(), buf, capacity, needed)
    })
}

/// Copies `len` bytes from host memory at `src` into the memory at `offset`.
///
/// # Safety
/// `src` holds `len` readable bytes (it may be NULL when `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn locus_memory_write(
    memory: *const LocusMemory,
    offset: usize,
    src: *const c_void,
    len: usize,
) -> LocusStatus {
    call("locus_memory_write", || {
        let m = MEMORY.get(memory, "memory")?;
        Ok(m.write(offset, bytes_arg(src, len, "src")?)?)
    })
}

/// Copies `len` bytes of the memory at `offset` into host memory at `dst`.
///
/// # Safety
/// `dst` holds `len` writable bytes (it may be NULL when `len` is 0) that no other
/// thread uses during the call.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_read(
    memory: *const LocusMemory,
    offset: usize,
    dst: *mut c_void,
    len: usize,
) -> LocusStatus {
    call("locus_memory_read", || {
        let m = MEMORY.get(memory, "memory")?;
        if len == 0 {
            return Ok(m.read(offset, &mut [])?);
        }
        if dst.is_null() {
            return Err(Fail::new(
                LocusStatus::LocusErrorNull,
                format!("dst is NULL for {len} bytes"),
            ));
        }
        // SAFETY: `dst` holds `len` writable bytes no one else uses during the call (the
        // caller's contract).
        let dst = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), len) };
        Ok(m.read(offset, dst)?)
    })
}

/// Sets `len` bytes at `offset` to `byte` (umem's `set`).
#[no_mangle]
pub extern "C" fn locus_memory_fill(
    memory: *const LocusMemory,
    offset: usize,
    len: usize,
    byte: u8,
) -> LocusStatus {
    call("locus_memory_fill", || {
        let m = MEMORY.get(memory, "memory")?;
        let end = offset.checked_add(len).ok_or_else(|| {
            Fail::new(
                LocusStatus::LocusErrorInvalid,
                format!("offset {offset} + length {len} overflows"),
            )
        })?;
        Ok(m.fill(offset..end, &[byte])?)
    })
}

/// Copies `len` bytes from `src` at `src_offset` to `dst` at `dst_offset`, any two
/// locations, on the route the transfer matrix picks (umem's `copy_to`). Both ranges
/// are checked first; nothing is written when either is out of range.
#[no_mangle]
pub extern "C" fn locus_memory_copy(
    src: *const LocusMemory,
    src_offset: usize,
    dst: *const LocusMemory,
    dst_offset: usize,
    len: usize,
) -> LocusStatus {
    call("locus_memory_copy", || {
        let (s, d) = (MEMORY.get(src, "src")?, MEMORY.get(dst, "dst")?);
        s.copy_to(src_offset, &d, dst_offset, len)?;
        Ok(())
    })
}

/// Whether code running at `location` uses this memory in place (no copy), into
/// `*result`.
///
/// # Safety
/// `location` is NULL or a NUL-terminated string; `result` is NULL or points to a
/// `bool`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_is_accessible_from(
    memory: *const LocusMemory,
    location: *const c_char,
    result: *mut bool,
) -> LocusStatus {
    call("locus_memory_is_accessible_from", || {
        let m = MEMORY.get(memory, "memory")?;
        let at = location_arg(location, "location")?;
        locus_rs::registry().device(at)?;
        *out_arg(result, "result")? = m.is_accessible_from(at);
        Ok(())
    })
}

/// The host address of the memory's first byte, when host code reaches it with plain
/// loads and stores (host memory, OpenMP's initial device, USM a CPU reaches), into
/// `*address`; `LOCUS_ERROR_NOT_HOST_ACCESSIBLE` otherwise. Valid until the memory is
/// freed.
///
/// # Safety
/// `address` is NULL or points to a `void *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_host_pointer(
    memory: *const LocusMemory,
    address: *mut *mut c_void,
) -> LocusStatus {
    call("locus_memory_host_pointer", || {
        let m = MEMORY.get(memory, "memory")?;
        let out = out_arg(address, "address")?;
        let ptr = m.host_pointer().ok_or_else(|| {
            Fail::new(
                LocusStatus::LocusErrorNotHostAccessible,
                format!(
                    "{} memory has no host address; copy it with locus_memory_read",
                    m.location()
                ),
            )
        })?;
        *out = ptr.cast();
        Ok(())
    })
}

/// Wraps host memory the C program owns (`pointer`, `bytes` long) as locus memory at
/// `host`, into `*out`, registered in place ("pinned" where it lies) with every runtime
/// whose copies need page-locked memory (CUDA's `cuMemHostRegister`, HIP's
/// `hipHostRegister`): copies between it and those devices then go by DMA. Other
/// locations use it as any host memory. `locus_memory_free` of the handle undoes the
/// registration; locus never frees the memory itself. A runtime that refuses (memory
/// registered already, by another library) is an error naming it, and nothing stays
/// registered.
///
/// # Safety
/// `pointer` is `bytes` bytes of writable host memory, valid until `locus_memory_free` of
/// the handle returns; `out` is NULL or points to a `LocusMemory *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_register_host(
    pointer: *mut c_void,
    bytes: usize,
    out: *mut *mut LocusMemory,
) -> LocusStatus {
    call("locus_memory_register_host", || {
        let out = out_arg(out, "out")?;
        if pointer.is_null() && bytes > 0 {
            return Err(Fail::new(
                LocusStatus::LocusErrorNull,
                format!("pointer is NULL for {bytes} bytes"),
            ));
        }
        let ptr = pointer.cast::<u8>();
        // SAFETY: the caller keeps `bytes` bytes at `pointer` alive until the handle is
        // freed; the deleter below drops the registrations then, before the caller may
        // free the memory.
        let registrations = unsafe { locus_rs::register_host_memory(ptr, bytes) }?;
        let native = locus_rs::Native::Host { ptr };
        // SAFETY: as above: live host memory of `bytes` bytes until the handle is freed;
        // the deleter only ends the registrations.
        let memory = unsafe {
            Memory::adopt(locus_rs::Location::Host, native, bytes, move |_| {
                drop(registrations)
            })
        }?;
        *out = MEMORY.insert(memory);
        Ok(())
    })
}

/// Allocates `bytes` that every one of the `count` locations in `locations` uses in
/// place, of the best kind they share (the owner's own memory, managed, USM shared, SVM,
/// host-visible, USM host or pinned host memory), and stores the new handle in `*out`;
/// `LOCUS_ERROR_INVALID` naming, for each kind tried, the location that does not reach
/// it. Free it with `locus_memory_free`.
///
/// # Safety
/// `locations` is NULL (with `count` 0) or points to `count` NUL-terminated strings;
/// `out` is NULL or points to a `LocusMemory *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_new_reachable(
    locations: *const *const c_char,
    count: usize,
    bytes: usize,
    out: *mut *mut LocusMemory,
) -> LocusStatus {
    call("locus_memory_new_reachable", || {
        let out = out_arg(out, "out")?;
        if locations.is_null() && count > 0 {
            return Err(Fail::new(
                LocusStatus::LocusErrorNull,
                format!("locations is NULL for {count} locations"),
            ));
        }
        let names: &[*const c_char] = if count == 0 {
            &[]
        } else {
            // SAFETY: `count` readable pointers at `locations` (the contract above).
            unsafe { std::slice::from_raw_parts(locations, count) }
        };
        let at = names
            .iter()
            .map(|&p| location_arg(p, "a location"))
            .collect::<Result<Vec<_>, _>>()?;
        *out = MEMORY.insert(Memory::reachable_from(&at, bytes)?);
        Ok(())
    })
}
