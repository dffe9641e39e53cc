//! The simulated driver's entry points: each checks the current context (but
//! initialisation, discovery's queries and the context calls), then applies its rule.

use std::ffi::{c_char, c_int, c_uchar, c_uint, c_void};

use cudarc::driver::sys::*;

use super::{context_of, out, SimCuda, CONTEXT};
use crate::backends::cuda::entry_points::CudaDriver;
use crate::backends::cuda_hip::sim_model::{copy_op, set_op, Kind};

/// The device current on this thread, or the error the driver gives instead.
macro_rules! gate {
    ($sim:expr) => {
        match $sim.gate() {
            Ok(d) => d,
            Err(rc) => return rc,
        }
    };
}

impl SimCuda {
    /// An allocation of `kind` written to `ptr`.
    ///
    /// # Safety
    /// `ptr` is valid for a write.
    unsafe fn allocate(
        &self,
        call: &'static str,
        ptr: *mut u64,
        bytes: usize,
        kind: Kind,
    ) -> CUresult {
        gate!(self);
        self.0.record(call, 0);
        match self.0.allocate_kind(bytes, kind) {
            // SAFETY: the caller's out-pointer.
            Some(p) => unsafe { out(ptr, p as u64) },
            None => CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        }
    }

    /// A free that waits for the whole device first, as `cuMemFree` does.
    fn free(&self, call: &'static str, ptr: usize) -> CUresult {
        gate!(self);
        self.0.synchronize_device(call);
        Self::status(
            self.0.release(call, ptr),
            CUresult::CUDA_ERROR_INVALID_VALUE,
        )
    }
}

/// The driver's name of `code` (`CUDA_ERROR_ILLEGAL_ADDRESS`), kept for the process as
/// the driver keeps its own.
fn error_name(code: CUresult) -> *const c_char {
    static NAMES: std::sync::Mutex<Vec<(CUresult, &'static std::ffi::CStr)>> =
        std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, name)) = names.iter().find(|(c, _)| *c == code) {
        return name.as_ptr();
    }
    let text = std::ffi::CString::new(format!("{code:?}")).unwrap_or_default();
    let name: &'static std::ffi::CStr = Box::leak(text.into_boxed_c_str());
    names.push((code, name));
    name.as_ptr()
}

impl CudaDriver for SimCuda {
    unsafe fn cuInit(&self, _: c_uint) -> CUresult {
        self.0.record("cuInit", 0);
        self.devices().initialised = true;
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuDriverGetVersion(&self, version: *mut c_int) -> CUresult {
        // SAFETY: the caller's out-pointer.
        unsafe { out(version, self.devices().version) }
    }
    unsafe fn cuDeviceGetCount(&self, count: *mut c_int) -> CUresult {
        let devices = self.devices();
        if !devices.initialised {
            return CUresult::CUDA_ERROR_NOT_INITIALIZED;
        }
        // SAFETY: the caller's out-pointer.
        unsafe { out(count, devices.count as c_int) }
    }
    unsafe fn cuDeviceGet(&self, dev: *mut CUdevice, ordinal: c_int) -> CUresult {
        match self.device(ordinal) {
            // SAFETY: the caller's out-pointer.
            Ok(d) => unsafe { out(dev, d as CUdevice) },
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
        let d = match self.device(dev) {
            Ok(d) => d,
            Err(rc) => return rc,
        };
        use CUdevice_attribute as A;
        let v = match attribute {
            A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR => 9,
            // Each simulated device on a bus of its own.
            A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID => 0x10 + d as c_int,
            A::CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM => {
                i32::from(self.0.host_pointer_for_registered())
            }
            _ => 0,
        };
        // SAFETY: the caller's out-pointer.
        unsafe { out(value, v) }
    }
    unsafe fn cuDeviceTotalMem_v2(&self, bytes: *mut usize, dev: CUdevice) -> CUresult {
        if let Err(rc) = self.device(dev) {
            return rc;
        }
        // SAFETY: the caller's out-pointer.
        unsafe { out(bytes, self.0.memory_info().1) }
    }
    unsafe fn cuDevicePrimaryCtxRetain(&self, ctx: *mut CUcontext, dev: CUdevice) -> CUresult {
        let d = match self.device(dev) {
            Ok(d) => d,
            Err(rc) => return rc,
        };
        self.0.record("cuDevicePrimaryCtxRetain", d);
        self.devices().retained[d] += 1;
        // SAFETY: the caller's out-pointer.
        unsafe { out(ctx, context_of(d) as CUcontext) }
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
    unsafe fn cuDeviceCanAccessPeer(
        &self,
        can: *mut c_int,
        dev: CUdevice,
        peer: CUdevice,
    ) -> CUresult {
        let (a, b) = match (self.device(dev), self.device(peer)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(rc), _) | (_, Err(rc)) => return rc,
        };
        let allowed = self.devices().peer.contains(&(a, b));
        // SAFETY: the caller's out-pointer.
        unsafe { out(can, c_int::from(allowed)) }
    }
    unsafe fn cuCtxEnablePeerAccess(&self, peer: CUcontext, _: c_uint) -> CUresult {
        let from = gate!(self);
        self.0.record("cuCtxEnablePeerAccess", from);
        let mut devices = self.devices();
        let Some(to) = (0..devices.count).find(|&d| context_of(d) == peer as usize) else {
            return CUresult::CUDA_ERROR_INVALID_CONTEXT;
        };
        if !devices.peer.contains(&(from, to)) {
            return CUresult::CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
        }
        if devices.peer_enabled.contains(&(from, to)) {
            return CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
        }
        devices.peer_enabled.push((from, to));
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuStreamCreate(&self, stream: *mut CUstream, _: c_uint) -> CUresult {
        let d = gate!(self);
        if self.devices().fail_stream_on == Some(d) {
            return CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        }
        // SAFETY: the caller's out-pointer.
        unsafe { out(stream, (context_of(d) + 0x100) as CUstream) }
    }
    unsafe fn cuCtxSetCurrent(&self, ctx: CUcontext) -> CUresult {
        self.0.record("cuCtxSetCurrent", 0);
        CONTEXT.with(|c| c.set(ctx as usize));
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuCtxGetCurrent(&self, ctx: *mut CUcontext) -> CUresult {
        // SAFETY: the caller's out-pointer.
        unsafe { out(ctx, CONTEXT.with(std::cell::Cell::get) as CUcontext) }
    }
    unsafe fn cuCtxSynchronize(&self) -> CUresult {
        gate!(self);
        self.0.synchronize_device("cuCtxSynchronize");
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemPoolCreate(
        &self,
        pool: *mut CUmemoryPool,
        props: *const CUmemPoolProps,
    ) -> CUresult {
        gate!(self);
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
        unsafe { out(pool, made as CUmemoryPool) }
    }
    unsafe fn cuMemPoolDestroy(&self, pool: CUmemoryPool) -> CUresult {
        gate!(self);
        self.0.record("cuMemPoolDestroy", pool as usize);
        let mut devices = self.devices();
        match devices.pools.iter().position(|&p| p == pool as usize) {
            Some(i) => {
                // Its handle is not reused: a later use of it is an unknown pool.
                devices.pools[i] = 0;
                CUresult::CUDA_SUCCESS
            }
            None => CUresult::CUDA_ERROR_INVALID_VALUE,
        }
    }
    unsafe fn cuMemPoolSetAttribute(
        &self,
        pool: CUmemoryPool,
        _: CUmemPool_attribute,
        _: *mut c_void,
    ) -> CUresult {
        gate!(self);
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
        gate!(self);
        if !self.devices().pools.contains(&(pool as usize)) {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        self.0.record("cuMemAllocFromPoolAsync", stream as usize);
        match self.0.allocate_kind(bytes, Kind::Pool) {
            // SAFETY: the caller's out-pointer.
            Some(p) => unsafe { out(ptr, p as CUdeviceptr) },
            None => CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        }
    }
    unsafe fn cuMemFreeAsync(&self, ptr: CUdeviceptr, _: CUstream) -> CUresult {
        gate!(self);
        let ok = self.0.release("cuMemFreeAsync", ptr as usize);
        Self::status(ok, CUresult::CUDA_ERROR_INVALID_VALUE)
    }
    unsafe fn cuMemAlloc_v2(&self, ptr: *mut CUdeviceptr, bytes: usize) -> CUresult {
        // SAFETY: the caller's out-pointer.
        unsafe { self.allocate("cuMemAlloc", ptr, bytes, Kind::Device) }
    }
    unsafe fn cuMemAllocManaged(&self, ptr: *mut CUdeviceptr, bytes: usize, _: c_uint) -> CUresult {
        // SAFETY: the caller's out-pointer.
        unsafe { self.allocate("cuMemAllocManaged", ptr, bytes, Kind::Managed) }
    }
    unsafe fn cuMemHostAlloc(&self, ptr: *mut *mut c_void, bytes: usize, _: c_uint) -> CUresult {
        // SAFETY: the caller's out-pointer (a host address is a device address here).
        unsafe { self.allocate("cuMemHostAlloc", ptr.cast(), bytes, Kind::Pinned) }
    }
    unsafe fn cuMemFree_v2(&self, ptr: CUdeviceptr) -> CUresult {
        self.free("cuMemFree", ptr as usize)
    }
    unsafe fn cuMemFreeHost(&self, ptr: *mut c_void) -> CUresult {
        self.free("cuMemFreeHost", ptr as usize)
    }
    unsafe fn cuMemGetInfo_v2(&self, free: *mut usize, total: *mut usize) -> CUresult {
        gate!(self);
        let (f, t) = self.0.memory_info();
        // SAFETY: the caller's out-pointers.
        unsafe {
            out(free, f);
            out(total, t)
        }
    }
    unsafe fn cuMemAdvise(
        &self,
        ptr: CUdeviceptr,
        n: usize,
        _: CUmem_advise,
        _: CUdevice,
    ) -> CUresult {
        gate!(self);
        Self::result(self.0.advise("cuMemAdvise", ptr as usize, n))
    }
    unsafe fn cuMemHostRegister_v2(&self, ptr: *mut c_void, n: usize, flags: c_uint) -> CUresult {
        gate!(self);
        let mapped = flags & CU_MEMHOSTREGISTER_DEVICEMAP != 0;
        Self::result(
            self.0
                .register("cuMemHostRegister", ptr as usize, n, mapped),
        )
    }
    unsafe fn cuMemHostUnregister(&self, ptr: *mut c_void) -> CUresult {
        gate!(self);
        Self::result(
            self.0
                .unregister("cuMemHostUnregister", ptr as usize, false),
        )
    }
    unsafe fn cuPointerGetAttribute(
        &self,
        data: *mut c_void,
        attribute: CUpointer_attribute,
        ptr: CUdeviceptr,
    ) -> CUresult {
        gate!(self);
        // SAFETY: the caller's out-pointer, of the attribute's type.
        unsafe { self.pointer_attribute(data, attribute, ptr as usize) }
    }
    unsafe fn cuIpcGetMemHandle(&self, handle: *mut CUipcMemHandle, ptr: CUdeviceptr) -> CUresult {
        gate!(self);
        match self.0.ipc_export("cuIpcGetMemHandle", ptr as usize) {
            Ok(bytes) => {
                let reserved = bytes.map(|b| b as c_char);
                // SAFETY: the caller's out-pointer.
                unsafe { out(handle, CUipcMemHandle { reserved }) }
            }
            Err(r) => Self::code(r),
        }
    }
    unsafe fn cuIpcOpenMemHandle_v2(
        &self,
        ptr: *mut CUdeviceptr,
        handle: CUipcMemHandle,
        _: c_uint,
    ) -> CUresult {
        gate!(self);
        match self
            .0
            .ipc_open("cuIpcOpenMemHandle", &handle.reserved.map(|b| b as u8))
        {
            // SAFETY: the caller's out-pointer.
            Ok(p) => unsafe { out(ptr, p as CUdeviceptr) },
            Err(r) => Self::code(r),
        }
    }
    unsafe fn cuIpcCloseMemHandle(&self, ptr: CUdeviceptr) -> CUresult {
        gate!(self);
        Self::result(self.0.ipc_close("cuIpcCloseMemHandle", ptr as usize))
    }
    unsafe fn cuMemcpyHtoDAsync_v2(
        &self,
        dst: CUdeviceptr,
        src: *const c_void,
        n: usize,
        stream: CUstream,
    ) -> CUresult {
        gate!(self);
        self.0.queue_copy(
            "cuMemcpyHtoDAsync",
            stream as usize,
            dst as usize,
            src as usize,
            n,
        );
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyDtoHAsync_v2(
        &self,
        dst: *mut c_void,
        src: CUdeviceptr,
        n: usize,
        stream: CUstream,
    ) -> CUresult {
        gate!(self);
        self.0.queue_copy(
            "cuMemcpyDtoHAsync",
            stream as usize,
            dst as usize,
            src as usize,
            n,
        );
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyDtoDAsync_v2(
        &self,
        dst: CUdeviceptr,
        src: CUdeviceptr,
        n: usize,
        stream: CUstream,
    ) -> CUresult {
        gate!(self);
        self.0.queue_copy(
            "cuMemcpyDtoDAsync",
            stream as usize,
            dst as usize,
            src as usize,
            n,
        );
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpy3DAsync_v2(&self, copy: *const CUDA_MEMCPY3D, stream: CUstream) -> CUresult {
        gate!(self);
        // SAFETY: the caller's pointer.
        unsafe { self.rect(copy, stream) }
    }
    unsafe fn cuMemcpyPeerAsync(
        &self,
        dst: CUdeviceptr,
        _: CUcontext,
        src: CUdeviceptr,
        _: CUcontext,
        n: usize,
        stream: CUstream,
    ) -> CUresult {
        gate!(self);
        self.0.queue_copy(
            "cuMemcpyPeerAsync",
            stream as usize,
            dst as usize,
            src as usize,
            n,
        );
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyHtoD_v2(&self, dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult {
        gate!(self);
        self.0
            .synchronous("cuMemcpyHtoD", copy_op(dst as usize, src as usize, n));
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyDtoH_v2(&self, dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
        gate!(self);
        self.0
            .synchronous("cuMemcpyDtoH", copy_op(dst as usize, src as usize, n));
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyDtoD_v2(&self, dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
        gate!(self);
        // Asynchronous with respect to the host, on the legacy NULL stream.
        self.0
            .queue_copy("cuMemcpyDtoD", 0, dst as usize, src as usize, n);
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuMemcpyBatchAsync(
        &self,
        dsts: *mut CUdeviceptr,
        srcs: *mut CUdeviceptr,
        sizes: *mut usize,
        count: usize,
        attrs: *mut CUmemcpyAttributes,
        attr_starts: *mut usize,
        attr_count: usize,
        fail_index: *mut usize,
        stream: CUstream,
    ) -> CUresult {
        gate!(self);
        // SAFETY: the caller's arrays and out-pointer, as the driver's contract has them.
        unsafe {
            self.batch(
                (dsts, srcs, sizes, count),
                (attrs, attr_starts, attr_count),
                fail_index,
                stream,
            )
        }
    }
    unsafe fn cuMemsetD8Async(
        &self,
        dst: CUdeviceptr,
        byte: c_uchar,
        n: usize,
        stream: CUstream,
    ) -> CUresult {
        gate!(self);
        let op = set_op(dst as usize, byte, n);
        self.0.enqueue("cuMemsetD8Async", stream as usize, op);
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuStreamSynchronize(&self, stream: CUstream) -> CUresult {
        gate!(self);
        self.0.record("cuStreamSynchronize", stream as usize);
        self.0.run(stream as usize, None);
        CUresult::CUDA_SUCCESS
    }
    unsafe fn cuEventCreate(&self, event: *mut CUevent, _: c_uint) -> CUresult {
        gate!(self);
        // SAFETY: the caller's out-pointer.
        unsafe { out(event, self.0.event_create() as CUevent) }
    }
    unsafe fn cuEventRecord(&self, event: CUevent, stream: CUstream) -> CUresult {
        gate!(self);
        let known = self.0.event_record(event as usize, stream as usize);
        Self::status(known, CUresult::CUDA_ERROR_INVALID_HANDLE)
    }
    unsafe fn cuEventSynchronize(&self, event: CUevent) -> CUresult {
        gate!(self);
        Self::status(
            self.0.event_wait(event as usize),
            CUresult::CUDA_ERROR_INVALID_HANDLE,
        )
    }
    unsafe fn cuEventQuery(&self, event: CUevent) -> CUresult {
        gate!(self);
        // Done once asked (the work runs when something waits).
        Self::status(
            self.0.event_wait(event as usize),
            CUresult::CUDA_ERROR_INVALID_HANDLE,
        )
    }
    unsafe fn cuEventDestroy_v2(&self, event: CUevent) -> CUresult {
        gate!(self);
        Self::status(
            self.0.event_destroy(event as usize),
            CUresult::CUDA_ERROR_INVALID_HANDLE,
        )
    }
    unsafe fn cuStreamWaitEvent(&self, _: CUstream, event: CUevent, _: c_uint) -> CUresult {
        gate!(self);
        Self::status(
            self.0.event_wait(event as usize),
            CUresult::CUDA_ERROR_INVALID_HANDLE,
        )
    }
    unsafe fn cuModuleLoadData(&self, module: *mut CUmodule, image: *const c_void) -> CUresult {
        gate!(self);
        // SAFETY: the caller's image and out-pointer.
        unsafe { self.load_module(module, image.cast()) }
    }
    unsafe fn cuModuleGetFunction(
        &self,
        function: *mut CUfunction,
        module: CUmodule,
        name: *const c_char,
    ) -> CUresult {
        gate!(self);
        // SAFETY: a NUL-terminated name, per the driver's contract.
        let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
        match self
            .0
            .function("cuModuleGetFunction", module as usize, &name)
        {
            // SAFETY: the caller's out-pointer.
            Ok(f) => unsafe { out(function, f as CUfunction) },
            Err(r) => Self::code(r),
        }
    }
    unsafe fn cuLaunchKernel(
        &self,
        f: CUfunction,
        gx: c_uint,
        gy: c_uint,
        gz: c_uint,
        bx: c_uint,
        by: c_uint,
        bz: c_uint,
        _: c_uint,
        stream: CUstream,
        params: *mut *mut c_void,
        _: *mut *mut c_void,
    ) -> CUresult {
        gate!(self);
        if params.is_null() {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        // CUDA's grid: up to 2^31 - 1 blocks along x.
        let most = i32::MAX as u64 * u64::from(bx);
        let sizes = ([gx, gy, gz], [bx, by, bz]);
        let launched = self
            .0
            .launch("cuLaunchKernel", f as usize, sizes, stream as usize, most);
        Self::result(launched)
    }
    unsafe fn cuGetErrorName(&self, code: CUresult, name: *mut *const c_char) -> CUresult {
        // SAFETY: the caller's out-pointer; a string kept for the process.
        unsafe { out(name, error_name(code)) }
    }
    unsafe fn cuGetErrorString(&self, _: CUresult, text: *mut *const c_char) -> CUresult {
        // SAFETY: the caller's out-pointer; a static string.
        unsafe { out(text, c"an error of the simulated CUDA driver".as_ptr()) }
    }
}
