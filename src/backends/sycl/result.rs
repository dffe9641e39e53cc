//! The dpctl calls locus makes that can fail, as thin wrappers over the bindings
//! (`sys.rs`) that return a typed [`SyclError`]: the layer between the raw bindings
//! and the safe device types (cudarc's `result` layer). dpctl's C API reports a failure
//! by returning a null handle (the SYCL runtime prints the reason on stderr); it has no
//! status codes, so the error carries the call. Calls that cannot fail (queries,
//! deletes, waits) are made on the bindings directly.

use std::ffi::{c_void, CStr};
use std::fmt;
use std::ptr;

use super::sys::*;
use crate::core::native::UsmKind;

/// A dpctl call that returned no handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyclError {
    /// The call (`DPCTLmalloc_device`, `DPCTLQueue_Memcpy`, ...).
    pub call: &'static str,
}

impl fmt::Display for SyclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} returned no handle (the SYCL runtime printed the reason on stderr)",
            self.call
        )
    }
}

fn handle<T>(call: &'static str, handle: *mut T) -> Result<*mut T, SyclError> {
    if handle.is_null() {
        Err(SyclError { call })
    } else {
        Ok(handle)
    }
}

/// The allocation call for a USM kind.
pub fn malloc_call(kind: UsmKind) -> &'static str {
    match kind {
        UsmKind::Device => "DPCTLaligned_alloc_device",
        UsmKind::Shared => "DPCTLaligned_alloc_shared",
        UsmKind::Host => "DPCTLaligned_alloc_host",
    }
}

/// `sycl::malloc_device` / `malloc_shared` / `malloc_host` of `size` bytes.
///
/// # Safety
/// `queue` is live and its device has the USM aspect for `kind` (otherwise the runtime
/// throws a C++ exception across the C API, which aborts the process).
pub unsafe fn malloc(
    api: &DpctlApi,
    queue: DPCTLSyclQueueRef,
    kind: UsmKind,
    size: usize,
) -> Result<*mut u8, SyclError> {
    let size = size as size_t;
    // Every locus allocation starts at a multiple of ALIGNMENT (plain `malloc_device`
    // gives the runtime's own, smaller, alignment).
    let align = crate::core::device::ALIGNMENT as size_t;
    // SAFETY: per the caller's contract; NULL is returned on failure.
    let ptr = unsafe {
        match kind {
            UsmKind::Device => api.DPCTLaligned_alloc_device(align, size, queue),
            UsmKind::Shared => api.DPCTLaligned_alloc_shared(align, size, queue),
            UsmKind::Host => api.DPCTLaligned_alloc_host(align, size, queue),
        }
    };
    handle(malloc_call(kind), ptr).map(|p| p.cast())
}

/// `queue.memcpy(dst, src, len)` after `deps`; the returned event is the caller's to
/// wait for and delete.
///
/// # Safety
/// `queue` is live; `dst` and `src` address `len` bytes of USM of the queue's context or
/// host memory that stay valid until the event completes; the `deps` events are live.
pub unsafe fn memcpy(
    api: &DpctlApi,
    queue: DPCTLSyclQueueRef,
    dst: *mut u8,
    src: *const u8,
    len: usize,
    deps: &[DPCTLSyclEventRef],
) -> Result<DPCTLSyclEventRef, SyclError> {
    // SAFETY: per the caller's contract.
    unsafe {
        if deps.is_empty() {
            let event = api.DPCTLQueue_Memcpy(queue, dst.cast(), src.cast(), len as size_t);
            handle("DPCTLQueue_Memcpy", event)
        } else {
            let event = api.DPCTLQueue_MemcpyWithEvents(
                queue,
                dst.cast(),
                src.cast(),
                len as size_t,
                deps.as_ptr(),
                deps.len() as size_t,
            );
            handle("DPCTLQueue_MemcpyWithEvents", event)
        }
    }
}

/// Fills `len` bytes at `dst` with `pattern` repeated, natively where the pattern is one
/// byte (`queue.memset`) or 2, 4 or 8 bytes at an address aligned for it (`queue.fill`);
/// `None` for any other pattern (the caller fills by writes).
///
/// # Safety
/// `queue` is live; `dst` addresses `len` bytes of USM of the queue's context; `len` is
/// a multiple of the pattern's length.
pub unsafe fn fill(
    api: &DpctlApi,
    queue: DPCTLSyclQueueRef,
    dst: *mut u8,
    len: usize,
    pattern: &[u8],
) -> Option<Result<DPCTLSyclEventRef, SyclError>> {
    let aligned = (dst as usize).is_multiple_of(pattern.len().max(1));
    let count = (len / pattern.len().max(1)) as size_t;
    let d: *mut c_void = dst.cast();
    // SAFETY: `count` elements of the pattern's size fit the range (caller's contract)
    // and the address is aligned for them.
    let (call, event) = unsafe {
        match (pattern.len(), aligned) {
            (1, _) => (
                "DPCTLQueue_Memset",
                api.DPCTLQueue_Memset(queue, d, pattern[0], len as size_t),
            ),
            (2, true) => (
                "DPCTLQueue_Fill16",
                api.DPCTLQueue_Fill16(
                    queue,
                    d,
                    u16::from_ne_bytes([pattern[0], pattern[1]]),
                    count,
                ),
            ),
            (4, true) => {
                let v = u32::from_ne_bytes(pattern.try_into().unwrap_or_default());
                (
                    "DPCTLQueue_Fill32",
                    api.DPCTLQueue_Fill32(queue, d, v, count),
                )
            }
            (8, true) => {
                let v = u64::from_ne_bytes(pattern.try_into().unwrap_or_default());
                (
                    "DPCTLQueue_Fill64",
                    api.DPCTLQueue_Fill64(queue, d, v, count),
                )
            }
            _ => return None,
        }
    };
    Some(handle(call, event))
}

/// Waits for `event` and deletes it.
///
/// # Safety
/// `event` is live and deleted here, once.
pub unsafe fn wait_and_delete(api: &DpctlApi, event: DPCTLSyclEventRef) {
    // SAFETY: per the caller's contract.
    unsafe {
        api.DPCTLEvent_Wait(event);
        api.DPCTLEvent_Delete(event);
    }
}

/// A kernel bundle built from OpenCL C `source` for `device`, and kernel `name` in it;
/// the caller owns (and deletes) both.
///
/// # Safety
/// `context` and `device` are live.
pub unsafe fn opencl_kernel(
    api: &DpctlApi,
    context: DPCTLSyclContextRef,
    device: DPCTLSyclDeviceRef,
    source: &CStr,
    name: &CStr,
) -> Result<(DPCTLSyclKernelBundleRef, DPCTLSyclKernelRef), SyclError> {
    // SAFETY: live context and device (caller's contract); NUL-terminated strings; a
    // bundle whose kernel cannot be found is deleted here.
    unsafe {
        let bundle = handle(
            "DPCTLKernelBundle_CreateFromOCLSource",
            api.DPCTLKernelBundle_CreateFromOCLSource(
                context,
                device,
                source.as_ptr(),
                c"".as_ptr(),
            ),
        )?;
        match handle(
            "DPCTLKernelBundle_GetKernel",
            api.DPCTLKernelBundle_GetKernel(bundle, name.as_ptr()),
        ) {
            Ok(kernel) => Ok((bundle, kernel)),
            Err(e) => {
                api.DPCTLKernelBundle_Delete(bundle);
                Err(e)
            }
        }
    }
}

/// Submits `kernel` over `range` (`dims` of its three entries, slowest first) with
/// `args` of `types`, after the events `deps`; the returned event is the caller's to
/// wait for and delete.
///
/// # Safety
/// `kernel` and `queue` are live; `args[i]` points to a value of `types[i]` (a USM
/// argument is the pointer itself), matching the kernel's parameters; the events in
/// `deps` are live for the call.
#[allow(clippy::too_many_arguments)] // one per parameter of DPCTLQueue_SubmitRange
pub unsafe fn submit_range(
    api: &DpctlApi,
    kernel: DPCTLSyclKernelRef,
    queue: DPCTLSyclQueueRef,
    args: &mut [*mut c_void],
    types: &[DPCTLKernelArgType],
    range: [size_t; 3],
    dims: usize,
    deps: &[DPCTLSyclEventRef],
) -> Result<DPCTLSyclEventRef, SyclError> {
    let (list, count) = match deps.len() {
        0 => (ptr::null(), 0),
        n => (deps.as_ptr(), n as size_t),
    };
    // SAFETY: per the caller's contract (the dependency events are alive for the call);
    // the runtime copies scalar values at submission.
    let event = unsafe {
        api.DPCTLQueue_SubmitRange(
            kernel,
            queue,
            args.as_mut_ptr(),
            types.as_ptr(),
            args.len() as size_t,
            range.as_ptr(),
            dims as size_t,
            list,
            count,
        )
    };
    handle("DPCTLQueue_SubmitRange", event)
}
