//! Typed buffers in C (HAMR's model): data made at a producer's location, used at a
//! consumer's by declaring the access; locus moves it lazily and serves it in place
//! where the consumer reaches it. An access returns the runtime's own handle (a host or
//! device pointer, a `cl_mem` and offset, ...) for the caller's kernels; ending it tells
//! locus what the caller wrote. While a write access is open, nothing else may use the
//! buffer; reads may overlap reads.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

use locus_rs::{Buffer, Location, Memory, Technology};

use crate::handles::Handles;
use crate::native::{native_of, LocusNative};
use crate::text::{location_arg, out_arg};
use crate::{call, Fail, LocusStatus};

/// The element type of a buffer.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocusElement {
    LocusU8 = 0,
    LocusI8 = 1,
    LocusU16 = 2,
    LocusI16 = 3,
    LocusU32 = 4,
    LocusI32 = 5,
    LocusU64 = 6,
    LocusI64 = 7,
    LocusF32 = 8,
    LocusF64 = 9,
}

/// How an access uses the data.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocusAccessMode {
    /// Reads only: the data is current there; other copies stay valid.
    LocusRead = 0,
    /// Reads and writes: the data is current there, and that copy becomes the only
    /// valid one when the access ends.
    LocusReadWrite = 1,
}

/// A typed buffer, made by `locus_buffer_new` / `locus_buffer_from_host`, freed by
/// `locus_buffer_free`.
pub struct LocusBuffer {
    _opaque: [u8; 0],
}

/// An open access to a buffer, made by `locus_buffer_access`, ended by
/// `locus_access_end`.
pub struct LocusAccess {
    _opaque: [u8; 0],
}

macro_rules! any_buffer {
    ($($variant:ident($t:ty) = $element:ident),* $(,)?) => {
        enum AnyBuffer { $($variant(Buffer<$t>)),* }

        impl AnyBuffer {
            fn zeroed(element: i32, location: Location, count: usize) -> Result<AnyBuffer, Fail> {
                $(if element == LocusElement::$element as i32 {
                    return Ok(AnyBuffer::$variant(Buffer::<$t>::zeroed(location, count)?));
                })*
                Err(bad_element(element))
            }

            fn from_bytes(element: i32, location: Location, bytes: &[u8]) -> Result<AnyBuffer, Fail> {
                $(if element == LocusElement::$element as i32 {
                    let data: Vec<$t> = bytes
                        .chunks_exact(std::mem::size_of::<$t>())
                        .map(bytemuck::pod_read_unaligned)
                        .collect();
                    return Ok(AnyBuffer::$variant(Buffer::<$t>::from_slice(location, &data)?));
                })*
                Err(bad_element(element))
            }
        }

        fn element_size(element: i32) -> Result<usize, Fail> {
            $(if element == LocusElement::$element as i32 {
                return Ok(std::mem::size_of::<$t>());
            })*
            Err(bad_element(element))
        }

        macro_rules! on_buffer {
            ($any:expr, $b:ident => $body:expr) => {
                match $any { $(AnyBuffer::$variant($b) => $body),* }
            };
        }
    };
}

any_buffer!(
    U8(u8) = LocusU8,
    I8(i8) = LocusI8,
    U16(u16) = LocusU16,
    I16(i16) = LocusI16,
    U32(u32) = LocusU32,
    I32(i32) = LocusI32,
    U64(u64) = LocusU64,
    I64(i64) = LocusI64,
    F32(f32) = LocusF32,
    F64(f64) = LocusF64,
);

fn bad_element(element: i32) -> Fail {
    Fail::new(
        LocusStatus::LocusErrorInvalid,
        format!("element type {element} is not a LocusElement (0 ..= 9)"),
    )
}

/// A buffer and its open accesses.
struct Shared {
    buffer: AnyBuffer,
    readers: usize,
    writer: Option<Location>,
}

pub(crate) struct BufferHandle {
    shared: Mutex<Shared>,
}

impl BufferHandle {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct Access {
    buffer: Arc<BufferHandle>,
    memory: Arc<Memory>,
    write: bool,
}

/// A handle for a new buffer, with no access open.
fn new_handle(buffer: AnyBuffer) -> *mut LocusBuffer {
    BUFFERS.insert(BufferHandle {
        shared: Mutex::new(Shared {
            buffer,
            readers: 0,
            writer: None,
        }),
    })
}

static BUFFERS: Handles<BufferHandle> = Handles::new(
    "locus buffer handle",
    "locus_buffer_new or locus_buffer_from_host",
);
static ACCESSES: Handles<Access> = Handles::new("locus access handle", "locus_buffer_access");

/// The refusal of a use of a buffer with an open write access.
fn written_at(at: Location) -> Fail {
    Fail::new(
        LocusStatus::LocusErrorInvalid,
        format!("the buffer has an open write access at {at}; end it with locus_access_end first"),
    )
}

/// A zeroed buffer of `count` elements of `element` (a `LocusElement`) made at
/// `location`, into `*out`.
///
/// # Safety
/// `location` is NULL or NUL-terminated; `out` is NULL or points to a `LocusBuffer *`.
#[no_mangle]
pub unsafe extern "C" fn locus_buffer_new(
    location: *const c_char,
    element: i32,
    count: usize,
    out: *mut *mut LocusBuffer,
) -> LocusStatus {
    call("locus_buffer_new", || {
        let at = location_arg(location, "location")?;
        let out = out_arg(out, "out")?;
        let buffer = AnyBuffer::zeroed(element, at, count)?;
        *out = new_handle(buffer);
        Ok(())
    })
}

/// A buffer at `location` holding a copy of `count` elements of `element` at `data` (host
/// memory), into `*out`.
///
/// # Safety
/// `data` holds `count` elements (NULL when `count` is 0); `location` and `out` as for
/// `locus_buffer_new`.
#[no_mangle]
pub unsafe extern "C" fn locus_buffer_from_host(
    location: *const c_char,
    element: i32,
    data: *const c_void,
    count: usize,
    out: *mut *mut LocusBuffer,
) -> LocusStatus {
    call("locus_buffer_from_host", || {
        let at = location_arg(location, "location")?;
        let out = out_arg(out, "out")?;
        let bytes = count.checked_mul(element_size(element)?).ok_or_else(|| {
            Fail::new(
                LocusStatus::LocusErrorInvalid,
                format!("{count} elements overflow a size_t"),
            )
        })?;
        let slice: &[u8] = if bytes == 0 {
            &[]
        } else if data.is_null() {
            return Err(Fail::new(
                LocusStatus::LocusErrorNull,
                format!("data is NULL for {count} elements"),
            ));
        } else {
            // SAFETY: `data` holds `count` elements (the caller's contract).
            unsafe { std::slice::from_raw_parts(data.cast::<u8>(), bytes) }
        };
        let buffer = AnyBuffer::from_bytes(element, at, slice)?;
        *out = new_handle(buffer);
        Ok(())
    })
}

/// Declares an access to the buffer at `location` and opens it: the data is current
/// there when this returns (moved, or served in place where `location` reaches a copy),
/// `*native` is the runtime's handle of the memory to use, `*out` the access to end
/// with `locus_access_end`. A write access while any other access is open, or any access
/// while a write is open, is `LOCUS_ERROR_INVALID`.
///
/// # Safety
/// `location` is NULL or NUL-terminated; `native` is NULL or points to a `LocusNative`;
/// `out` is NULL or points to a `LocusAccess *`.
#[no_mangle]
pub unsafe extern "C" fn locus_buffer_access(
    buffer: *const LocusBuffer,
    location: *const c_char,
    mode: i32,
    native: *mut LocusNative,
    out: *mut *mut LocusAccess,
) -> LocusStatus {
    call("locus_buffer_access", || {
        let handle = BUFFERS.get(buffer, "buffer")?;
        let at = location_arg(location, "location")?;
        let write = match mode {
            m if m == LocusAccessMode::LocusRead as i32 => false,
            m if m == LocusAccessMode::LocusReadWrite as i32 => true,
            m => {
                return Err(Fail::new(
                    LocusStatus::LocusErrorInvalid,
                    format!("access mode {m} is not a LocusAccessMode"),
                ))
            }
        };
        let (native_out, out) = (out_arg(native, "native")?, out_arg(out, "out")?);
        let mut shared = handle.lock();
        if let Some(w) = shared.writer {
            return Err(written_at(w));
        }
        if write && shared.readers > 0 {
            return Err(Fail::new(
                LocusStatus::LocusErrorInvalid,
                format!(
                    "the buffer has {} open read access(es); end them before writing",
                    shared.readers
                ),
            ));
        }
        // Host and OpenMP code needs an address: data another technology's object holds
        // (an OpenCL or WebGPU buffer the host reaches only by mapping) is served by a
        // replica at `at` itself, never as a handle with a NULL pointer.
        let needs_address = matches!(at.technology(), Technology::Host | Technology::OpenMp);
        let memory = on_buffer!(&mut shared.buffer, b => {
            if write {
                let mut g = b.access_mut(at)?;
                if needs_address && !g.memory().native().is_pointer() {
                    drop(g);
                    g = b.access_mut_at(at)?;
                }
                g.wait()?;
                Arc::clone(g.memory())
            } else {
                let mut g = b.access(at)?;
                if needs_address && !g.memory().native().is_pointer() {
                    drop(g);
                    g = b.access_at(at)?;
                }
                g.wait()?;
                Arc::clone(g.memory())
            }
        });
        let c_native =
            native_of(memory.native(), memory.location().ordinal()).ok_or_else(|| {
                Fail::new(
                    LocusStatus::LocusErrorInvalid,
                    format!("{} memory has no C handle", memory.location()),
                )
            })?;
        if write {
            shared.writer = Some(at);
        } else {
            shared.readers += 1;
        }
        drop(shared);
        *native_out = c_native;
        *out = ACCESSES.insert(Access {
            buffer: handle,
            memory,
            write,
        });
        Ok(())
    })
}

/// Ends an access: after a write, the memory it served holds the only current copy.
/// Ending the same access twice is `LOCUS_ERROR_BAD_HANDLE`.
#[no_mangle]
pub extern "C" fn locus_access_end(access: *mut LocusAccess) -> LocusStatus {
    call("locus_access_end", || {
        let a = ACCESSES.take(access, "the access")?;
        let mut shared = a.buffer.lock();
        if a.write {
            on_buffer!(&mut shared.buffer, b => b.declare_written(&a.memory));
            shared.writer = None;
        } else {
            shared.readers = shared.readers.saturating_sub(1);
        }
        Ok(())
    })
}

/// Copies the buffer's current data (every element) into host memory at `dst` of
/// `capacity` bytes; a capacity smaller than the data is `LOCUS_ERROR_INVALID`.
///
/// # Safety
/// `dst` holds `capacity` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn locus_buffer_read(
    buffer: *const LocusBuffer,
    dst: *mut c_void,
    capacity: usize,
) -> LocusStatus {
    call("locus_buffer_read", || {
        let handle = BUFFERS.get(buffer, "buffer")?;
        let shared = handle.lock();
        if let Some(w) = shared.writer {
            return Err(written_at(w));
        }
        on_buffer!(&shared.buffer, b => {
            let data = b.to_vec()?;
            let bytes: &[u8] = bytemuck::cast_slice(&data);
            if capacity < bytes.len() {
                return Err(Fail::new(
                    LocusStatus::LocusErrorInvalid,
                    format!("the buffer holds {} bytes; dst has {capacity}", bytes.len()),
                ));
            }
            if !bytes.is_empty() {
                if dst.is_null() {
                    return Err(Fail::new(LocusStatus::LocusErrorNull, "dst is NULL"));
                }
                // SAFETY: `dst` holds `capacity` >= `bytes.len()` writable bytes.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.cast::<u8>(), bytes.len()) };
            }
            Ok(())
        })
    })
}

/// The buffer's element count, into `*count`.
///
/// # Safety
/// `count` is NULL or points to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_buffer_len(
    buffer: *const LocusBuffer,
    count: *mut usize,
) -> LocusStatus {
    call("locus_buffer_len", || {
        let handle = BUFFERS.get(buffer, "buffer")?;
        let n = on_buffer!(&handle.lock().buffer, b => b.len());
        *out_arg(count, "count")? = n;
        Ok(())
    })
}

/// Frees a buffer handle; memory an open access uses stays valid until it ends. NULL
/// does nothing.
#[no_mangle]
pub extern "C" fn locus_buffer_free(buffer: *mut LocusBuffer) -> LocusStatus {
    call("locus_buffer_free", || BUFFERS.remove(buffer, "the buffer"))
}
