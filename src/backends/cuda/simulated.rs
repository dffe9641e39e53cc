//! A simulated CUDA driver behind [`CudaDriver`], for CudaApi's real call layer on a
//! machine with no NVIDIA GPU (issue 48, item 8's test): the shared model's rules
//! (`cuda_hip/sim_model.rs`: asynchronous streams, NULL-stream work and synchronous
//! copies recorded as violations, device memory limits), and a current context per
//! thread.

use std::cell::Cell;
use std::ffi::{c_char, c_uchar, c_uint, c_void};

use cudarc::driver::sys::*;

use super::entry_points::CudaDriver;
use crate::backends::cuda_hip::sim_model::{copy_op, set_op, SimModel};

thread_local! {
    static CONTEXT: Cell<usize> = const { Cell::new(0) };
}

/// The simulated driver; a clone is the same driver (a test keeps one for its records).
#[derive(Clone)]
pub(super) struct SimCuda(pub(super) SimModel);

impl SimCuda {
    /// A driver whose one device has `memory` bytes.
    pub(super) fn new(memory: usize) -> SimCuda {
        SimCuda(SimModel::new(memory))
    }

    /// As [`SimCuda::new`], its streams also progressing on their own.
    pub(super) fn progressing(memory: usize) -> SimCuda {
        SimCuda(SimModel::progressing(memory))
    }

    fn status(ok: bool, otherwise: CUresult) -> CUresult {
        match ok {
            true => CUresult::CUDA_SUCCESS,
            false => otherwise,
        }
    }
}

impl CudaDriver for SimCuda {
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
