//! libumem's C API (`umem.h`), source-compatible, over locus.
//!
//! umem's contexts are C structs a program declares itself (`umemHost host;
//! umemHost_ctor(&host);`) whose first member is a [`UmemVirtual`] with a table of
//! methods; `umem.h`'s inline functions (`umem_alloc`, `umem_copy_to`, ...) call through
//! that table, so the layouts here are umem's, field for field. The methods are umem's
//! own algorithms (its `umem.c`, `umem_host.c`, `umem_file.c`, `umem_connect.c`), ported,
//! with their gaps closed (a `calloc` whose size overflows, a `_dtor` twice, an address
//! that was never allocated: a status, never a crash). The contexts behind locus
//! locations (`umemLocus`, and umem's CUDA ones) are in [`locus_context`]; their
//! addresses are kept in [`addresses`].
//!
//! Errors are reported as umem reports them: in the status of the context whose method
//! failed (`umem_is_ok`, `umem_get_message`), with the message appended to an earlier
//! one until `umem_clear_status`.

mod addresses;
mod connect;
mod file;
mod host;
mod locus_context;
mod status;
mod virtual_context;

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use connect::*;
pub use file::*;
pub use host::*;
pub use locus_context::*;
pub use status::*;
pub use virtual_context::*;

/// umem's `umemDeviceType`: which kind of context a [`UmemVirtual`] is.
pub type UmemDeviceType = c_int;
pub const UMEM_VIRTUAL_DEVICE: UmemDeviceType = 0;
pub const UMEM_HOST_DEVICE: UmemDeviceType = 1;
pub const UMEM_FILE_DEVICE: UmemDeviceType = 2;
pub const UMEM_CUDA_DEVICE: UmemDeviceType = 3;
pub const UMEM_CUDA_HOST_DEVICE: UmemDeviceType = 4;
pub const UMEM_CUDA_MANAGED_DEVICE: UmemDeviceType = 5;
pub const UMEM_MMAP_DEVICE: UmemDeviceType = 6;
pub const UMEM_RMM_DEVICE: UmemDeviceType = 7;
/// locus's own: memory at any locus location (`umemLocus`).
pub const UMEM_LOCUS_DEVICE: UmemDeviceType = 8;

/// umem's `umemStatusType`.
pub type UmemStatusType = c_int;
pub const UMEM_OK: UmemStatusType = 0;
pub const UMEM_MEMORY_ERROR: UmemStatusType = 1;
pub const UMEM_RUNTIME_ERROR: UmemStatusType = 2;
pub const UMEM_IO_ERROR: UmemStatusType = 3;
pub const UMEM_VALUE_ERROR: UmemStatusType = 4;
pub const UMEM_TYPE_ERROR: UmemStatusType = 5;
pub const UMEM_INDEX_ERROR: UmemStatusType = 6;
pub const UMEM_NOT_IMPLEMENTED_ERROR: UmemStatusType = 7;
pub const UMEM_NOT_SUPPORTED_ERROR: UmemStatusType = 8;
pub const UMEM_ASSERT_ERROR: UmemStatusType = 9;

/// umem's `umemStatus`: the message is owned by the context (C's `malloc`), changed only
/// by `umem_set_status` / `umem_clear_status`.
#[repr(C)]
pub struct UmemStatus {
    pub kind: UmemStatusType,
    pub message: *mut c_char,
}

/// umem's `umemVirtual`, the first member of every context.
#[repr(C)]
pub struct UmemVirtual {
    pub vptr: *const UmemVtbl,
    pub kind: UmemDeviceType,
    pub status: UmemStatus,
    pub host_ctx: *mut c_void,
}

pub type Ctx = *mut UmemVirtual;

/// umem's `struct umemVtbl`, in umem's order.
#[repr(C)]
pub struct UmemVtbl {
    pub dtor: unsafe extern "C" fn(Ctx),
    pub is_accessible_from: unsafe extern "C" fn(Ctx, Ctx) -> bool,
    pub alloc: unsafe extern "C" fn(Ctx, usize) -> usize,
    pub calloc: unsafe extern "C" fn(Ctx, usize, usize) -> usize,
    pub free: unsafe extern "C" fn(Ctx, usize),
    pub aligned_alloc: unsafe extern "C" fn(Ctx, usize, usize) -> usize,
    pub aligned_origin: unsafe extern "C" fn(Ctx, usize) -> usize,
    pub aligned_free: unsafe extern "C" fn(Ctx, usize),
    pub set: unsafe extern "C" fn(Ctx, usize, c_int, usize),
    pub copy_to: unsafe extern "C" fn(Ctx, usize, Ctx, usize, usize),
    pub copy_from: unsafe extern "C" fn(Ctx, usize, Ctx, usize, usize),
}

/// umem's `umemHost`.
#[repr(C)]
pub struct UmemHost {
    pub base: UmemVirtual,
}

/// umem's `umemFile`.
#[repr(C)]
pub struct UmemFile {
    pub base: UmemVirtual,
    pub host: UmemHost,
    pub fp: usize,
    pub filename: *const c_char,
    pub mode: *const c_char,
}

/// umem's `umemCuda`.
#[repr(C)]
pub struct UmemCuda {
    pub base: UmemVirtual,
    pub host: UmemHost,
    pub device: c_int,
}

/// umem's `umemCudaHost`.
#[repr(C)]
pub struct UmemCudaHost {
    pub base: UmemVirtual,
    pub host: UmemHost,
    pub flags: c_uint,
}

/// umem's `umemCudaManaged`.
#[repr(C)]
pub struct UmemCudaManaged {
    pub base: UmemVirtual,
    pub host: UmemHost,
    pub flags: c_uint,
    pub is_async: bool,
    pub stream: usize,
}

/// The longest location name a `umemLocus` holds, its NUL included.
pub const UMEM_LOCUS_NAME_CAPACITY: usize = 32;

/// locus's context: memory at one locus location (`"opencl:0"`, `"sycl:1"`, ...).
#[repr(C)]
pub struct UmemLocus {
    pub base: UmemVirtual,
    pub host: UmemHost,
    /// The location's name, NUL-terminated.
    pub location: [c_char; UMEM_LOCUS_NAME_CAPACITY],
}

// Calls through a context's table, as umem.h's inline functions do.

/// # Safety
/// `ctx` is a constructed context.
pub(crate) unsafe fn vtbl<'a>(ctx: Ctx) -> &'a UmemVtbl {
    // SAFETY: a constructed context's `vptr` points to a static table (the caller's
    // contract).
    unsafe { &*(*ctx).vptr }
}

/// # Safety
/// `ctx` is a constructed context.
pub(crate) unsafe fn is_ok(ctx: Ctx) -> bool {
    // SAFETY: the caller's contract.
    unsafe { (*ctx).status.kind == UMEM_OK }
}

/// # Safety
/// `ctx` is a constructed context.
pub(crate) unsafe fn kind(ctx: Ctx) -> UmemDeviceType {
    // SAFETY: the caller's contract.
    unsafe { (*ctx).kind }
}

/// C's `errno` of the calling thread, where this platform names it.
fn errno() -> Option<*mut c_int> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: returns the calling thread's `errno` location; no preconditions.
    return Some(unsafe { libc::__errno_location() });
    #[allow(unreachable_code)]
    None
}

/// Keeps C's `errno` as it was across locus's work (finding runtimes tries libraries
/// that may be absent, which sets it): umem's callers, its own tests among them, treat
/// a changed `errno` as a failure.
pub(crate) struct KeepErrno(Option<c_int>);

impl KeepErrno {
    pub(crate) fn new() -> KeepErrno {
        // SAFETY: the calling thread's `errno`.
        KeepErrno(errno().map(|e| unsafe { *e }))
    }
}

impl Drop for KeepErrno {
    fn drop(&mut self) {
        if let (Some(saved), Some(e)) = (self.0, errno()) {
            // SAFETY: the calling thread's `errno`.
            unsafe { *e = saved };
        }
    }
}

/// Runs a method's body; a panic inside becomes a status on `ctx` (nothing unwinds into
/// C) and the method returns `fallback`. C's `errno` is left as it was.
///
/// # Safety
/// `ctx` is a constructed context.
pub(crate) unsafe fn guarded<R>(ctx: Ctx, method: &str, fallback: R, f: impl FnOnce() -> R) -> R {
    let _errno = KeepErrno::new();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let what = crate::panic_text(panic.as_ref());
            // SAFETY: the caller's contract.
            unsafe {
                set_status_text(
                    ctx,
                    UMEM_RUNTIME_ERROR,
                    &format!("{method}: locus failed inside ({what}); please report this message"),
                )
            };
            fallback
        }
    }
}
