//! A C program's own OpenCL or SYCL context joining locus as a location of its own
//! (`locus_adopt_opencl_context`, `locus_adopt_sycl_context`), and its OpenCL buffers
//! wrapped in place (`locus_memory_adopt_opencl_buffer`).

use std::ffi::{c_char, c_void};

use locus_rs::Memory;

use crate::handles::{LocusMemory, MEMORY};
use crate::text::{out_arg, text_out};
use crate::{call, Fail, LocusStatus};

/// The location of `device` in the program's own OpenCL `context` (a `cl_context` and a
/// `cl_device_id`), written NUL-terminated into `buf` (`capacity` bytes; `*needed`, when
/// not NULL, gets the bytes it takes): the location locus already has for them (its own
/// context, or one adopted before), or a new one (`opencl:3`), numbered after every
/// OpenCL location so far, that every call takes as it takes a discovered location.
/// locus retains the context for the life of the process and makes an in-order queue of
/// its own in it; the program's queues of that context are adopted with
/// `locus_queue_from_native`, its buffers with `locus_memory_adopt_opencl_buffer`. A
/// device that is not one of the context's is `LOCUS_ERROR_INVALID`.
///
/// # Safety
/// `context` is a live `cl_context`; `buf` is NULL or holds `capacity` bytes; `needed` is
/// NULL or points to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_adopt_opencl_context(
    context: *mut c_void,
    device: *mut c_void,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> LocusStatus {
    let what = "the program's cl_context and one of its cl_device_ids";
    adopt_into(
        "locus_adopt_opencl_context",
        (context, device, what),
        (buf, capacity, needed),
        |c, d| {
            // SAFETY: the caller's contract: a live context (the device is checked).
            unsafe { locus_rs::adopt_opencl_context(c, d) }
        },
    )
}

/// Wraps the program's own OpenCL buffer `mem` (a `cl_mem`) in place as locus memory of
/// its context's location (the context adopted now if locus did not know it), into
/// `*out`: nothing is copied; locus retains the buffer and releases it when the handle is
/// freed, so the program may release its own reference at any time.
///
/// # Safety
/// `mem` is a live `cl_mem` (OpenCL cannot tell one from any other pointer); `out` is
/// NULL or points to a `LocusMemory *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_adopt_opencl_buffer(
    mem: *mut c_void,
    out: *mut *mut LocusMemory,
) -> LocusStatus {
    call("locus_memory_adopt_opencl_buffer", || {
        let out = out_arg(out, "out")?;
        if mem.is_null() {
            return Err(Fail::new(
                LocusStatus::LocusErrorNull,
                "mem is NULL; pass the program's cl_mem",
            ));
        }
        // SAFETY: the caller's contract: a live cl_mem.
        let memory = unsafe { Memory::adopt_opencl_buffer(mem) }?;
        *out = MEMORY.insert(memory);
        Ok(())
    })
}

/// The location of `device` in the program's own SYCL `context` (dpctl's
/// `DPCTLSyclContextRef` and `DPCTLSyclDeviceRef`, kept by the caller), written into
/// `buf` as `locus_adopt_opencl_context` does: the location locus already has for them,
/// or a new one (`sycl:1`) with an in-order queue of locus's own in the context. The
/// program's queues of it are adopted with `locus_queue_from_native`
/// (`LOCUS_NATIVE_SYCL`), its USM pointers with `locus_memory_adopt` at that location.
///
/// # Safety
/// `context` and `device` are live dpctl references; `buf` and `needed` as for
/// `locus_adopt_opencl_context`.
#[no_mangle]
pub unsafe extern "C" fn locus_adopt_sycl_context(
    context: *mut c_void,
    device: *mut c_void,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> LocusStatus {
    let what = "the program's DPCTLSyclContextRef and DPCTLSyclDeviceRef";
    adopt_into(
        "locus_adopt_sycl_context",
        (context, device, what),
        (buf, capacity, needed),
        |c, d| {
            // SAFETY: the caller's contract: live dpctl references.
            unsafe { locus_rs::adopt_sycl_context(c, d) }
        },
    )
}

/// Adopts a context with `adopt` after checking neither handle is NULL, and writes the
/// location's name into the caller's buffer.
fn adopt_into(
    name: &'static str,
    (context, device, what): (*mut c_void, *mut c_void, &str),
    (buf, capacity, needed): (*mut c_char, usize, *mut usize),
    adopt: impl FnOnce(*mut c_void, *mut c_void) -> locus_rs::Result<locus_rs::Location>,
) -> LocusStatus {
    call(name, || {
        if context.is_null() || device.is_null() {
            return Err(Fail::new(
                LocusStatus::LocusErrorNull,
                format!("context and device are {what}; one is NULL"),
            ));
        }
        let at = adopt(context, device)?;
        text_out(&at.to_string(), buf, capacity, needed)
    })
}
