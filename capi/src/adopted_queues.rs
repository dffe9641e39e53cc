//! Queues across libraries in C: a C program's own runtime queue adopted by locus
//! (`locus_queue_from_native`: locus's work submitted on it runs after the program's
//! work there, and the program's later work there after locus's, ordered on the
//! device), and the runtime queue locus uses handed out (`locus_queue_native`).

use std::ffi::{c_char, c_void};

use locus_rs::{Location, NativeQueue, Queue};

use crate::native::LocusNativeKind;
use crate::queues::{adoptions, LocusQueue, QUEUES};
use crate::text::{location_arg, out_arg};
use crate::{call, Fail, LocusStatus};

/// The queue `handle` names at `at`, when `kind` (a `LocusNativeKind`) is that location's
/// technology.
fn native_arg(at: Location, kind: i32, handle: *mut c_void) -> Result<NativeQueue, Fail> {
    let expected = match at {
        Location::OpenCl(_) => Some(LocusNativeKind::LocusNativeOpencl),
        Location::Sycl(_) => Some(LocusNativeKind::LocusNativeSycl),
        Location::Cuda(_) => Some(LocusNativeKind::LocusNativeCuda),
        Location::Hip(_) => Some(LocusNativeKind::LocusNativeHip),
        _ => None,
    };
    if expected.is_none_or(|k| k as i32 != kind) {
        return Err(Fail::new(
            LocusStatus::LocusErrorInvalid,
            format!(
                "{at}: a queue of kind {kind} is not one this location adopts (OpenCL: \
                 LOCUS_NATIVE_OPENCL, SYCL: LOCUS_NATIVE_SYCL, CUDA: LOCUS_NATIVE_CUDA, HIP: \
                 LOCUS_NATIVE_HIP; host, OpenMP and WebGPU: none)"
            ),
        ));
    }
    if handle.is_null() && !matches!(at, Location::Cuda(_) | Location::Hip(_)) {
        return Err(Fail::new(
            LocusStatus::LocusErrorNull,
            format!("{at}: handle is NULL; pass the runtime's queue"),
        ));
    }
    NativeQueue::from_raw(at, handle as usize as u64).ok_or_else(|| {
        Fail::new(
            LocusStatus::LocusErrorInvalid,
            format!("{at}: no queue to adopt here"),
        )
    })
}

/// Adopts a program's own queue of `location`'s device, into `*out`: `kind` is a
/// `LocusNativeKind`, `handle` the queue (`LOCUS_NATIVE_OPENCL`: a `cl_command_queue` of
/// locus's context there; `LOCUS_NATIVE_SYCL`: a `DPCTLSyclQueueRef` of locus's
/// context; `LOCUS_NATIVE_CUDA`: a `CUstream` / `cudaStream_t` of the device's primary
/// context, NULL for the legacy default stream; `LOCUS_NATIVE_HIP`: a `hipStream_t`).
/// Copies submitted on the returned queue (`locus_memory_copy_async`) run after the
/// program's work queued there before, and the program's later work there runs after
/// them, ordered on the device. A queue of another device or context is an error naming
/// both. `locus_queue_free` lets go of it; locus never destroys the native queue (an
/// OpenCL or SYCL queue may be released by the program at once: locus holds its own
/// reference; a CUDA or HIP stream must outlive the queue and its work).
///
/// # Safety
/// `location` is NULL or a NUL-terminated string; `handle` is a live queue of the
/// runtime `kind` names; `out` is NULL or points to a `LocusQueue *`.
#[no_mangle]
pub unsafe extern "C" fn locus_queue_from_native(
    location: *const c_char,
    kind: i32,
    handle: *mut c_void,
    out: *mut *mut LocusQueue,
) -> LocusStatus {
    call("locus_queue_from_native", || {
        let at = location_arg(location, "location")?;
        let native = native_arg(at, kind, handle)?;
        let out = out_arg(out, "out")?;
        // SAFETY: the caller's contract: a live queue of that runtime.
        let adopted = unsafe { Queue::from_native(at, native) }?;
        let queue = adopted.queue();
        adoptions()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(queue.id(), adopted);
        *out = QUEUES.insert(queue);
        Ok(())
    })
}

/// The runtime queue of `queue` at `location`, into `*kind` (a `LocusNativeKind`) and
/// `*handle`: the adopted queue for a queue adopted there, else the device's own
/// in-order queue locus submits to (a program's work queued there runs after locus's
/// queued copies); `LOCUS_NATIVE_HOST` and NULL where the technology has none (host,
/// OpenMP) or no C handle (WebGPU). Valid while locus runs; never release it.
///
/// # Safety
/// `location` is NULL or a NUL-terminated string; `kind` and `handle` are NULL or point
/// to an `int32_t` and a `void *`.
#[no_mangle]
pub unsafe extern "C" fn locus_queue_native(
    queue: *const LocusQueue,
    location: *const c_char,
    kind: *mut i32,
    handle: *mut *mut c_void,
) -> LocusStatus {
    call("locus_queue_native", || {
        let q = *QUEUES.get(queue, "queue")?;
        let at = location_arg(location, "location")?;
        let (kind, handle) = (out_arg(kind, "kind")?, out_arg(handle, "handle")?);
        let (k, h) = match q.native_at(at) {
            Some(NativeQueue::OpenCl(h)) => (LocusNativeKind::LocusNativeOpencl, h),
            Some(NativeQueue::Sycl(h)) => (LocusNativeKind::LocusNativeSycl, h),
            Some(NativeQueue::Cuda { stream, .. }) => (
                LocusNativeKind::LocusNativeCuda,
                std::ptr::without_provenance_mut(stream as usize),
            ),
            Some(NativeQueue::Hip { stream, .. }) => (
                LocusNativeKind::LocusNativeHip,
                std::ptr::without_provenance_mut(stream as usize),
            ),
            _ => (LocusNativeKind::LocusNativeHost, std::ptr::null_mut()),
        };
        *kind = k as i32;
        *handle = h;
        Ok(())
    })
}
