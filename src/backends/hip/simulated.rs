//! A simulated HIP runtime behind [`HipRuntime`] (issue 48: the simulator serves HIP's
//! entry points too), for HipApi's real call layer on a machine with no AMD GPU: the
//! shared model's rules (`cuda_hip/sim_model.rs`: asynchronous streams, no NULL-stream
//! work, device memory limits), a current device per thread, and discovery's devices
//! (streams made on the current device; a stream creation that fails on a chosen
//! device).

use std::cell::Cell;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::sync::{Arc, Mutex};

use super::entry_points::HipRuntime;
use super::sys::*;
use crate::backends::cuda_hip::sim_model::{copy_op, set_op, SimModel};

thread_local! {
    static DEVICE: Cell<c_int> = const { Cell::new(0) };
}

/// The simulated runtime; a clone is the same runtime (a test keeps one for its records).
#[derive(Clone)]
pub(super) struct SimHip(pub(super) SimModel, pub(super) Arc<Mutex<Devices>>);

/// What discovery finds: how many devices, and the device (if any) whose stream
/// creation fails.
pub(super) struct Devices {
    pub(super) count: c_int,
    pub(super) fail_stream_on: Option<c_int>,
}

impl SimHip {
    /// A runtime whose one device has `memory` bytes.
    pub(super) fn new(memory: usize) -> SimHip {
        SimHip::with_devices(memory, 1)
    }

    /// A runtime with `count` devices (discovery's tests).
    pub(super) fn with_devices(memory: usize, count: c_int) -> SimHip {
        let devices = Devices {
            count,
            fail_stream_on: None,
        };
        SimHip(SimModel::new(memory), Arc::new(Mutex::new(devices)))
    }

    /// As [`SimHip::new`], its streams also progressing on their own.
    pub(super) fn progressing(memory: usize) -> SimHip {
        let sim = SimHip::new(memory);
        SimHip(SimModel::progressing(memory), sim.1)
    }

    /// The device current on this thread.
    pub(super) fn current_device() -> c_int {
        DEVICE.with(Cell::get)
    }

    /// Makes `device` current on this thread, as another library would.
    pub(super) fn set_current_device(device: c_int) {
        DEVICE.with(|d| d.set(device));
    }

    fn devices(&self) -> std::sync::MutexGuard<'_, Devices> {
        self.1.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn valid(&self, device: c_int) -> bool {
        (0..self.devices().count).contains(&device)
    }

    fn allocate(&self, call: &'static str, out: *mut *mut c_void, size: usize) -> hipError_t {
        self.0.record(call, 0);
        match self.0.allocate(size) {
            Some(ptr) => {
                // SAFETY: the caller's out-pointer.
                unsafe { *out = ptr as *mut c_void };
                hipError_t_hipSuccess
            }
            None => hipError_t_hipErrorOutOfMemory,
        }
    }

    fn free(&self, call: &'static str, ptr: *mut c_void) -> hipError_t {
        match self.0.release(call, ptr as usize) {
            true => hipError_t_hipSuccess,
            false => hipError_t_hipErrorInvalidValue,
        }
    }

    fn known(found: bool) -> hipError_t {
        match found {
            true => hipError_t_hipSuccess,
            false => hipError_t_hipErrorInvalidHandle,
        }
    }
}

impl HipRuntime for SimHip {
    unsafe fn hipInit(&self, _: c_uint) -> hipError_t {
        self.0.record("hipInit", 0);
        hipError_t_hipSuccess
    }
    unsafe fn hipRuntimeGetVersion(&self, version: *mut c_int) -> hipError_t {
        // SAFETY: the caller's out-pointer.
        unsafe { *version = 60_443_483 };
        hipError_t_hipSuccess
    }
    unsafe fn hipGetDeviceCount(&self, count: *mut c_int) -> hipError_t {
        // SAFETY: the caller's out-pointer.
        unsafe { *count = self.devices().count };
        hipError_t_hipSuccess
    }
    unsafe fn hipDeviceGetName(&self, name: *mut c_char, len: c_int, device: c_int) -> hipError_t {
        if !self.valid(device) {
            return hipError_t_hipErrorInvalidDevice;
        }
        let text = format!("Simulated HIP device {device}\0");
        let n = text.len().min(len.max(0) as usize);
        // SAFETY: the caller's buffer holds `len` bytes; at most that many are written.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr().cast(), name, n) };
        hipError_t_hipSuccess
    }
    unsafe fn hipDeviceTotalMem(&self, bytes: *mut usize, device: c_int) -> hipError_t {
        if !self.valid(device) {
            return hipError_t_hipErrorInvalidDevice;
        }
        // SAFETY: the caller's out-pointer.
        unsafe { *bytes = self.0.memory_info().1 };
        hipError_t_hipSuccess
    }
    unsafe fn hipDeviceGetAttribute(
        &self,
        value: *mut c_int,
        _: hipDeviceAttribute_t,
        device: c_int,
    ) -> hipError_t {
        if !self.valid(device) {
            return hipError_t_hipErrorInvalidDevice;
        }
        // SAFETY: the caller's out-pointer.
        unsafe { *value = 0 };
        hipError_t_hipSuccess
    }
    unsafe fn hipStreamCreateWithFlags(&self, stream: *mut hipStream_t, _: c_uint) -> hipError_t {
        let device = DEVICE.with(Cell::get);
        if self.devices().fail_stream_on == Some(device) {
            return hipError_t_hipErrorOutOfMemory;
        }
        // SAFETY: the caller's out-pointer. The handles `HipApi::simulated` uses.
        unsafe { *stream = (0x5000 + 16 * device as usize) as hipStream_t };
        hipError_t_hipSuccess
    }
    unsafe fn hipSetDevice(&self, device: c_int) -> hipError_t {
        self.0.record("hipSetDevice", 0);
        if !self.valid(device) {
            return hipError_t_hipErrorInvalidDevice;
        }
        DEVICE.with(|d| d.set(device));
        hipError_t_hipSuccess
    }
    unsafe fn hipGetDevice(&self, device: *mut c_int) -> hipError_t {
        // SAFETY: the caller's out-pointer.
        unsafe { *device = DEVICE.with(Cell::get) };
        hipError_t_hipSuccess
    }
    unsafe fn hipMalloc(&self, ptr: *mut *mut c_void, size: usize) -> hipError_t {
        self.allocate("hipMalloc", ptr, size)
    }
    unsafe fn hipHostMalloc(&self, ptr: *mut *mut c_void, size: usize, _: c_uint) -> hipError_t {
        self.allocate("hipHostMalloc", ptr, size)
    }
    unsafe fn hipMallocManaged(&self, ptr: *mut *mut c_void, size: usize, _: c_uint) -> hipError_t {
        self.allocate("hipMallocManaged", ptr, size)
    }
    unsafe fn hipFree(&self, ptr: *mut c_void) -> hipError_t {
        self.free("hipFree", ptr)
    }
    unsafe fn hipHostFree(&self, ptr: *mut c_void) -> hipError_t {
        self.free("hipHostFree", ptr)
    }
    unsafe fn hipMemGetInfo(&self, free: *mut usize, total: *mut usize) -> hipError_t {
        let (f, t) = self.0.memory_info();
        // SAFETY: the caller's out-pointers.
        unsafe {
            *free = f;
            *total = t;
        }
        hipError_t_hipSuccess
    }
    unsafe fn hipMemcpyAsync(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        n: usize,
        _: hipMemcpyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        let op = copy_op(dst as usize, src as usize, n);
        self.0.enqueue("hipMemcpyAsync", stream as usize, op);
        hipError_t_hipSuccess
    }
    unsafe fn hipMemsetAsync(
        &self,
        dst: *mut c_void,
        value: c_int,
        n: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        let op = set_op(dst as usize, value as u8, n);
        self.0.enqueue("hipMemsetAsync", stream as usize, op);
        hipError_t_hipSuccess
    }
    unsafe fn hipStreamSynchronize(&self, stream: hipStream_t) -> hipError_t {
        self.0.record("hipStreamSynchronize", stream as usize);
        self.0.run(stream as usize, None);
        hipError_t_hipSuccess
    }
    unsafe fn hipEventCreateWithFlags(&self, event: *mut hipEvent_t, _: c_uint) -> hipError_t {
        // SAFETY: the caller's out-pointer.
        unsafe { *event = self.0.event_create() as hipEvent_t };
        hipError_t_hipSuccess
    }
    unsafe fn hipEventRecord(&self, event: hipEvent_t, stream: hipStream_t) -> hipError_t {
        Self::known(self.0.event_record(event as usize, stream as usize))
    }
    unsafe fn hipEventSynchronize(&self, event: hipEvent_t) -> hipError_t {
        Self::known(self.0.event_wait(event as usize))
    }
    unsafe fn hipEventQuery(&self, event: hipEvent_t) -> hipError_t {
        // Done once asked (the work runs when something waits, as in the CUDA simulator).
        Self::known(self.0.event_wait(event as usize))
    }
    unsafe fn hipEventDestroy(&self, event: hipEvent_t) -> hipError_t {
        Self::known(self.0.event_destroy(event as usize))
    }
    unsafe fn hipStreamWaitEvent(
        &self,
        _: hipStream_t,
        event: hipEvent_t,
        _: c_uint,
    ) -> hipError_t {
        // The waiting stream's later work comes after the event's: run up to it now.
        Self::known(self.0.event_wait(event as usize))
    }
    unsafe fn hipGetErrorName(&self, _: hipError_t) -> *const c_char {
        c"hipErrorSimulated".as_ptr()
    }
    unsafe fn hipGetErrorString(&self, _: hipError_t) -> *const c_char {
        c"an error of the simulated HIP runtime".as_ptr()
    }
}
