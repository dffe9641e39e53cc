//! A simulated CUDA driver behind [`CudaDriver`], for CudaApi's real call layer on a
//! machine with no NVIDIA GPU (issue 48, item 8's test): the shared model's rules
//! (`cuda_hip/sim_model.rs`: asynchronous streams, NULL-stream work and synchronous
//! copies recorded as violations, device memory limits), a current context per
//! thread, and discovery's devices: primary contexts retained and released (counted),
//! streams created only with a context current, a stream creation that fails on a
//! chosen device; stream-ordered pools: allocations only from a pool made with
//! `cuMemPoolCreate`, and an attribute set on any other pool (the device's default
//! one, which other libraries share) recorded as a violation.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uchar, c_uint, c_void};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::*;

use super::entry_points::CudaDriver;
use crate::backends::cuda_hip::sim_model::{copy_op, set_op, SimModel};

thread_local! {
    static CONTEXT: Cell<usize> = const { Cell::new(0) };
}

/// The simulated driver; a clone is the same driver (a test keeps one for its records).
#[derive(Clone)]
pub(super) struct SimCuda(pub(super) SimModel, pub(super) Arc<Mutex<Devices>>);

/// What discovery finds: the devices, their primary contexts' retain counts, and the
/// device (if any) whose stream creation fails.
#[derive(Default)]
pub(super) struct Devices {
    pub(super) count: usize,
    pub(super) retained: Vec<u32>,
    pub(super) fail_stream_on: Option<usize>,
    /// The pools `cuMemPoolCreate` made.
    pub(super) pools: Vec<usize>,
    initialised: bool,
}

/// Device `d`'s primary context and the stream made on it (device 0's are the handles
/// `CudaApi::simulated` uses).
fn context_of(d: usize) -> usize {
    0x7000 + 0x1000 * d
}

impl SimCuda {
    /// A driver whose one device has `memory` bytes, initialised (as discovery leaves
    /// it: `CudaApi::simulated` stands for an api after discovery).
    pub(super) fn new(memory: usize) -> SimCuda {
        let sim = SimCuda::with_devices(memory, 1);
        sim.devices().initialised = true;
        sim
    }

    /// A driver with `count` devices (discovery's tests).
    pub(super) fn with_devices(memory: usize, count: usize) -> SimCuda {
        let devices = Devices {
            count,
            retained: vec![0; count],
            ..Devices::default()
        };
        SimCuda(SimModel::new(memory), Arc::new(Mutex::new(devices)))
    }

    /// As [`SimCuda::new`], its streams also progressing on their own.
    pub(super) fn progressing(memory: usize) -> SimCuda {
        let sim = SimCuda::new(memory);
        SimCuda(SimModel::progressing(memory), sim.1)
    }

    /// The context current on this thread (0: none).
    pub(super) fn current_context() -> usize {
        CONTEXT.with(Cell::get)
    }

    /// Makes `ctx` current on this thread, as another library would.
    pub(super) fn set_current_context(ctx: usize) {
        CONTEXT.with(|c| c.set(ctx));
    }

    fn devices(&self) -> std::sync::MutexGuard<'_, Devices> {
        self.1.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `Ok(device)` for a device handle discovery may use: the driver initialised and
    /// the ordinal below the count.
    fn device(&self, dev: c_int) -> Result<usize, CUresult> {
        let devices = self.devices();
        if !devices.initialised {
            return Err(CUresult::CUDA_ERROR_NOT_INITIALIZED);
        }
        match usize::try_from(dev) {
            Ok(d) if d < devices.count => Ok(d),
            _ => Err(CUresult::CUDA_ERROR_INVALID_DEVICE),
        }
    }

    fn status(ok: bool, otherwise: CUresult) -> CUresult {
        match ok {
            true => CUresult::CUDA_SUCCESS,
            false => otherwise,
        }
    }
}

impl CudaDriver for SimCuda {
    unsafe fn cuMemPoolCreate(
        &self,
        pool: *mut CUmemoryPool,
        props: *const CUmemPoolProps,
    ) -> CUresult {
        // SAFETY: the caller's properties.
        let props = unsafe { &*props };
        if props.location.type_ != CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE
            || self.device(props.location.id).is_err()
        {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        let mut devices = self.devices();
        let made = 0xB000 + 0x10 * devices.pools.len();
        devices.pools.push(made);
        drop(devices);
        self.0.record("cuMemPoolCreate", made);
        // SAFETY: the caller's out-pointer.
        unsafe { *pool = made as CUmemoryPool };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemPoolSetAttribute(
        &self,
        pool: CUmemoryPool,
        _: CUmemPool_attribute,
        _: *mut c_void,
    ) -> CUresult {
        self.0.record("cuMemPoolSetAttribute", pool as usize);
        if !self.devices().pools.contains(&(pool as usize)) {
            self.0.violation(format!(
                "cuMemPoolSetAttribute on pool {pool:p}, which locus did not make (the device's default pool, shared with other libraries)"
            ));
        }
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemAllocFromPoolAsync(
        &self,
        ptr: *mut CUdeviceptr,
        bytes: usize,
        pool: CUmemoryPool,
        stream: CUstream,
    ) -> CUresult {
        self.0.record("cuMemAllocFromPoolAsync", stream as usize);
        if !self.devices().pools.contains(&(pool as usize)) {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        let made = self.0.allocate(bytes);
        if let Some(p) = made {
            // SAFETY: the caller's out-pointer.
            unsafe { *ptr = p as CUdeviceptr };
        }
        Self::status(made.is_some(), CUresult::CUDA_ERROR_OUT_OF_MEMORY)
    }
    unsafe fn cuMemFreeAsync(&self, ptr: CUdeviceptr, _: CUstream) -> CUresult {
        Self::status(
            self.0.release("cuMemFreeAsync", ptr as usize),
            CUresult::CUDA_ERROR_INVALID_VALUE,
        )
    }
    unsafe fn cuInit(&self, _: c_uint) -> CUresult {
        self.0.record("cuInit", 0);
        self.devices().initialised = true;
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuDriverGetVersion(&self, version: *mut c_int) -> CUresult {
        // SAFETY: the caller's out-pointer.
        unsafe { *version = 12080 };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuDeviceGetCount(&self, count: *mut c_int) -> CUresult {
        let devices = self.devices();
        if !devices.initialised {
            return CUresult::CUDA_ERROR_NOT_INITIALIZED;
        }
        // SAFETY: the caller's out-pointer.
        unsafe { *count = devices.count as c_int };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuDeviceGet(&self, dev: *mut CUdevice, ordinal: c_int) -> CUresult {
        match self.device(ordinal) {
            Ok(d) => {
                // SAFETY: the caller's out-pointer.
                unsafe { *dev = d as CUdevice };
                CUresult::CUDA_SUCCESS
            }
            Err(rc) => rc,
        }
    }
    unsafe fn cuDeviceGetName(&self, name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
        let d = match self.device(dev) {
            Ok(d) => d,
            Err(rc) => return rc,
        };
        let text = format!("Simulated CUDA device {d}\0");
        let n = text.len().min(len.max(0) as usize);
        // SAFETY: the caller's buffer holds `len` bytes; at most that many are written.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr().cast(), name, n) };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuDeviceGetAttribute(
        &self,
        value: *mut c_int,
        attribute: CUdevice_attribute,
        dev: CUdevice,
    ) -> CUresult {
        if let Err(rc) = self.device(dev) {
            return rc;
        }
        let v = match attribute {
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR => 9,
            _ => 0,
        };
        // SAFETY: the caller's out-pointer.
        unsafe { *value = v };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuDeviceTotalMem_v2(&self, bytes: *mut usize, dev: CUdevice) -> CUresult {
        if let Err(rc) = self.device(dev) {
            return rc;
        }
        // SAFETY: the caller's out-pointer.
        unsafe { *bytes = self.0.memory_info().1 };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuDevicePrimaryCtxRetain(&self, ctx: *mut CUcontext, dev: CUdevice) -> CUresult {
        let d = match self.device(dev) {
            Ok(d) => d,
            Err(rc) => return rc,
        };
        self.0.record("cuDevicePrimaryCtxRetain", d);
        self.devices().retained[d] += 1;
        // SAFETY: the caller's out-pointer.
        unsafe { *ctx = context_of(d) as CUcontext };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuDevicePrimaryCtxRelease_v2(&self, dev: CUdevice) -> CUresult {
        let d = match self.device(dev) {
            Ok(d) => d,
            Err(rc) => return rc,
        };
        self.0.record("cuDevicePrimaryCtxRelease", d);
        let mut devices = self.devices();
        match devices.retained[d].checked_sub(1) {
            Some(left) => {
                devices.retained[d] = left;
                CUresult::CUDA_SUCCESS
            }
            None => {
                drop(devices);
                self.0.violation(format!(
                    "device {d}'s primary context released more often than retained"
                ));
                CUresult::CUDA_ERROR_INVALID_CONTEXT
            }
        }
    }
    unsafe fn cuStreamCreate(&self, stream: *mut CUstream, _: c_uint) -> CUresult {
        let ctx = CONTEXT.with(Cell::get);
        let devices = self.devices();
        let Some(d) = (0..devices.count).find(|&d| context_of(d) == ctx && devices.retained[d] > 0)
        else {
            return CUresult::CUDA_ERROR_INVALID_CONTEXT;
        };
        if devices.fail_stream_on == Some(d) {
            return CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        }
        // SAFETY: the caller's out-pointer.
        unsafe { *stream = (context_of(d) + 0x100) as CUstream };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuCtxSetCurrent(&self, ctx: CUcontext) -> CUresult {
        self.0.record("cuCtxSetCurrent", 0);
        CONTEXT.with(|c| c.set(ctx as usize));
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuCtxGetCurrent(&self, ctx: *mut CUcontext) -> CUresult {
        // SAFETY: the caller's out-pointer.
        unsafe { *ctx = CONTEXT.with(Cell::get) as CUcontext };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemAlloc_v2(&self, ptr: *mut CUdeviceptr, bytes: usize) -> CUresult {
        self.0.record("cuMemAlloc", 0);
        let made = self.0.allocate(bytes);
        if let Some(p) = made {
            // SAFETY: the caller's out-pointer.
            unsafe { *ptr = p as CUdeviceptr };
        }
        Self::status(made.is_some(), CUresult::CUDA_ERROR_OUT_OF_MEMORY)
    }
    unsafe fn cuMemHostAlloc(&self, ptr: *mut *mut c_void, bytes: usize, _: c_uint) -> CUresult {
        self.0.record("cuMemHostAlloc", 0);
        let made = self.0.allocate(bytes);
        if let Some(p) = made {
            // SAFETY: the caller's out-pointer.
            unsafe { *ptr = p as *mut c_void };
        }
        Self::status(made.is_some(), CUresult::CUDA_ERROR_OUT_OF_MEMORY)
    }
    unsafe fn cuMemFree_v2(&self, ptr: CUdeviceptr) -> CUresult {
        Self::status(
            self.0.release("cuMemFree", ptr as usize),
            CUresult::CUDA_ERROR_INVALID_VALUE,
        )
    }
    unsafe fn cuMemFreeHost(&self, ptr: *mut c_void) -> CUresult {
        Self::status(
            self.0.release("cuMemFreeHost", ptr as usize),
            CUresult::CUDA_ERROR_INVALID_VALUE,
        )
    }
    unsafe fn cuMemGetInfo_v2(&self, free: *mut usize, total: *mut usize) -> CUresult {
        let (f, t) = self.0.memory_info();
        // SAFETY: the caller's out-pointers.
        unsafe {
            *free = f;
            *total = t;
        }
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyHtoDAsync_v2(
        &self,
        dst: CUdeviceptr,
        src: *const c_void,
        n: usize,
        stream: CUstream,
    ) -> CUresult {
        let op = copy_op(dst as usize, src as usize, n);
        self.0.enqueue("cuMemcpyHtoDAsync", stream as usize, op);
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyDtoHAsync_v2(
        &self,
        dst: *mut c_void,
        src: CUdeviceptr,
        n: usize,
        stream: CUstream,
    ) -> CUresult {
        let op = copy_op(dst as usize, src as usize, n);
        self.0.enqueue("cuMemcpyDtoHAsync", stream as usize, op);
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyDtoDAsync_v2(
        &self,
        dst: CUdeviceptr,
        src: CUdeviceptr,
        n: usize,
        stream: CUstream,
    ) -> CUresult {
        let op = copy_op(dst as usize, src as usize, n);
        self.0.enqueue("cuMemcpyDtoDAsync", stream as usize, op);
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyHtoD_v2(&self, dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult {
        self.0
            .synchronous("cuMemcpyHtoD", copy_op(dst as usize, src as usize, n));
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyDtoH_v2(&self, dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
        self.0
            .synchronous("cuMemcpyDtoH", copy_op(dst as usize, src as usize, n));
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemsetD8Async(
        &self,
        dst: CUdeviceptr,
        byte: c_uchar,
        n: usize,
        stream: CUstream,
    ) -> CUresult {
        let op = set_op(dst as usize, byte, n);
        self.0.enqueue("cuMemsetD8Async", stream as usize, op);
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuStreamSynchronize(&self, stream: CUstream) -> CUresult {
        self.0.record("cuStreamSynchronize", stream as usize);
        self.0.run(stream as usize, None);
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuEventCreate(&self, event: *mut CUevent, _: c_uint) -> CUresult {
        // SAFETY: the caller's out-pointer.
        unsafe { *event = self.0.event_create() as CUevent };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuEventRecord(&self, event: CUevent, stream: CUstream) -> CUresult {
        Self::status(
            self.0.event_record(event as usize, stream as usize),
            CUresult::CUDA_ERROR_INVALID_HANDLE,
        )
    }
    unsafe fn cuEventSynchronize(&self, event: CUevent) -> CUresult {
        Self::status(
            self.0.event_wait(event as usize),
            CUresult::CUDA_ERROR_INVALID_HANDLE,
        )
    }
    unsafe fn cuEventQuery(&self, event: CUevent) -> CUresult {
        // Done once asked (the work runs when something waits).
        Self::status(
            self.0.event_wait(event as usize),
            CUresult::CUDA_ERROR_INVALID_HANDLE,
        )
    }
    unsafe fn cuEventDestroy_v2(&self, event: CUevent) -> CUresult {
        Self::status(
            self.0.event_destroy(event as usize),
            CUresult::CUDA_ERROR_INVALID_HANDLE,
        )
    }
    unsafe fn cuStreamWaitEvent(&self, _: CUstream, event: CUevent, _: c_uint) -> CUresult {
        Self::status(
            self.0.event_wait(event as usize),
            CUresult::CUDA_ERROR_INVALID_HANDLE,
        )
    }
    unsafe fn cuGetErrorName(&self, _: CUresult, name: *mut *const c_char) -> CUresult {
        // SAFETY: the caller's out-pointer; a static string.
        unsafe { *name = c"CUDA_ERROR_SIMULATED".as_ptr() };
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuGetErrorString(&self, _: CUresult, text: *mut *const c_char) -> CUresult {
        // SAFETY: as above.
        unsafe { *text = c"an error of the simulated CUDA driver".as_ptr() };
        CUresult::CUDA_SUCCESS
    }
}
