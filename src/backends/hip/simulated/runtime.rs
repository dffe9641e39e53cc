//! The simulated HIP runtime's entry points: each applies its rule of the real
//! runtime's; the memory and stream calls fail once an illegal address lost the context.

use std::cell::Cell;
use std::os::raw::{c_char, c_int, c_uint, c_void};

use super::super::entry_points::HipRuntime;
use super::super::sys::*;
use super::{error_name, out, SimHip, DEVICE};
use crate::backends::cuda_hip::sim_model::{read_image, set_op, Found, Image, Kind};

/// The current device, or the error the runtime gives instead.
macro_rules! gate {
    ($sim:expr) => {
        match $sim.gate() {
            Ok(d) => d,
            Err(rc) => return rc,
        }
    };
}

impl SimHip {
    fn allocate(
        &self,
        call: &'static str,
        ptr: *mut *mut c_void,
        size: usize,
        kind: Kind,
    ) -> hipError_t {
        gate!(self);
        self.0.record(call, 0);
        match self.0.allocate_kind(size, kind) {
            // SAFETY: the caller's out-pointer.
            Some(p) => unsafe { out(ptr, p as *mut c_void) },
            None => hipError_t_hipErrorOutOfMemory,
        }
    }

    /// A free that waits for the whole device first, as ROCm's `hipFree` does.
    fn free(&self, call: &'static str, ptr: *mut c_void) -> hipError_t {
        gate!(self);
        self.0.synchronize_device(call);
        match self.0.release(call, ptr as usize) {
            true => hipError_t_hipSuccess,
            false => hipError_t_hipErrorInvalidValue,
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
        unsafe { out(version, 60_443_483) }
    }
    unsafe fn hipGetDeviceCount(&self, count: *mut c_int) -> hipError_t {
        // SAFETY: the caller's out-pointer.
        unsafe { out(count, self.devices().count) }
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
        unsafe { out(bytes, self.0.memory_info().1) }
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
        unsafe { out(value, 0) }
    }
    unsafe fn hipDeviceCanAccessPeer(
        &self,
        can: *mut c_int,
        device: c_int,
        peer: c_int,
    ) -> hipError_t {
        if !self.valid(device) || !self.valid(peer) {
            return hipError_t_hipErrorInvalidDevice;
        }
        let allowed = self.devices().peer.contains(&(device, peer));
        // SAFETY: the caller's out-pointer.
        unsafe { out(can, c_int::from(allowed)) }
    }
    unsafe fn hipDeviceEnablePeerAccess(&self, peer: c_int, _: c_uint) -> hipError_t {
        let from = gate!(self);
        self.0.record("hipDeviceEnablePeerAccess", 0);
        let mut devices = self.devices();
        if !devices.peer.contains(&(from, peer)) {
            return hipError_t_hipErrorPeerAccessUnsupported;
        }
        if devices.peer_enabled.contains(&(from, peer)) {
            return hipError_t_hipErrorPeerAccessAlreadyEnabled;
        }
        devices.peer_enabled.push((from, peer));
        hipError_t_hipSuccess
    }
    unsafe fn hipStreamCreateWithFlags(&self, stream: *mut hipStream_t, _: c_uint) -> hipError_t {
        let device = gate!(self);
        if self.devices().fail_stream_on == Some(device) {
            return hipError_t_hipErrorOutOfMemory;
        }
        // SAFETY: the caller's out-pointer. The handles `HipApi::simulated` uses.
        unsafe { out(stream, (0x5000 + 16 * device as usize) as hipStream_t) }
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
        unsafe { out(device, DEVICE.with(Cell::get)) }
    }
    unsafe fn hipMalloc(&self, ptr: *mut *mut c_void, size: usize) -> hipError_t {
        self.allocate("hipMalloc", ptr, size, Kind::Device)
    }
    unsafe fn hipHostMalloc(&self, ptr: *mut *mut c_void, size: usize, _: c_uint) -> hipError_t {
        self.allocate("hipHostMalloc", ptr, size, Kind::Pinned)
    }
    unsafe fn hipMallocManaged(&self, ptr: *mut *mut c_void, size: usize, _: c_uint) -> hipError_t {
        self.allocate("hipMallocManaged", ptr, size, Kind::Managed)
    }
    unsafe fn hipFree(&self, ptr: *mut c_void) -> hipError_t {
        self.free("hipFree", ptr)
    }
    unsafe fn hipHostFree(&self, ptr: *mut c_void) -> hipError_t {
        self.free("hipHostFree", ptr)
    }
    unsafe fn hipMemGetInfo(&self, free: *mut usize, total: *mut usize) -> hipError_t {
        gate!(self);
        let (f, t) = self.0.memory_info();
        // SAFETY: the caller's out-pointers.
        unsafe {
            out(free, f);
            out(total, t)
        }
    }
    unsafe fn hipMemAdvise(
        &self,
        ptr: *const c_void,
        n: usize,
        _: hipMemoryAdvise,
        _: c_int,
    ) -> hipError_t {
        gate!(self);
        Self::result(self.0.advise("hipMemAdvise", ptr as usize, n))
    }
    unsafe fn hipHostRegister(&self, ptr: *mut c_void, n: usize, flags: c_uint) -> hipError_t {
        gate!(self);
        // hipHostRegisterMapped: mapped into the devices' address space.
        let mapped = flags & 2 != 0;
        Self::result(self.0.register("hipHostRegister", ptr as usize, n, mapped))
    }
    unsafe fn hipHostUnregister(&self, ptr: *mut c_void) -> hipError_t {
        gate!(self);
        // ROCm synchronises the whole device to unregister.
        Self::result(self.0.unregister("hipHostUnregister", ptr as usize, true))
    }
    unsafe fn hipPointerGetAttribute(
        &self,
        data: *mut c_void,
        attribute: hipPointer_attribute,
        ptr: hipDeviceptr_t,
    ) -> hipError_t {
        gate!(self);
        self.0.record("hipPointerGetAttribute", 0);
        let found = self.0.find(ptr as usize);
        match (attribute, found) {
            (_, None) => hipError_t_hipErrorInvalidValue,
            (a, Some(_)) if a == hipPointer_attribute_HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL => {
                // SAFETY: the attribute is an int, per the caller's contract.
                unsafe { out(data.cast::<c_int>(), 0) }
            }
            (a, Some(found)) if a == hipPointer_attribute_HIP_POINTER_ATTRIBUTE_MEMORY_TYPE => {
                // ROCm 6's numbering (the version this runtime reports): Host 1, Device 2.
                let host = matches!(
                    found,
                    Found::Registered(..) | Found::Allocation(_, _, Kind::Pinned)
                );
                // SAFETY: the attribute is an unsigned int, per the caller's contract.
                unsafe { out(data.cast::<c_uint>(), if host { 1 } else { 2 }) }
            }
            (a, Some(found)) if a == hipPointer_attribute_HIP_POINTER_ATTRIBUTE_IS_MANAGED => {
                let managed = matches!(found, Found::Allocation(_, _, Kind::Managed));
                // SAFETY: a boolean written as an unsigned int, per the caller's contract.
                unsafe { out(data.cast::<c_uint>(), c_uint::from(managed)) }
            }
            (a, Some(found))
                if a == hipPointer_attribute_HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR =>
            {
                // SAFETY: a device pointer, per the caller's contract.
                unsafe { out(data.cast::<u64>(), found.range().0 as u64) }
            }
            (a, Some(found)) if a == hipPointer_attribute_HIP_POINTER_ATTRIBUTE_RANGE_SIZE => {
                // SAFETY: a size_t, per the caller's contract.
                unsafe { out(data.cast::<usize>(), found.range().1) }
            }
            (other, Some(_)) => {
                self.0.violation(format!(
                    "hipPointerGetAttribute({other}): an attribute the simulator does not model"
                ));
                hipError_t_hipErrorInvalidValue
            }
        }
    }
    unsafe fn hipIpcGetMemHandle(
        &self,
        handle: *mut hipIpcMemHandle_t,
        ptr: *mut c_void,
    ) -> hipError_t {
        gate!(self);
        match self.0.ipc_export("hipIpcGetMemHandle", ptr as usize) {
            Ok(bytes) => {
                let reserved = bytes.map(|b| b as c_char);
                // SAFETY: the caller's out-pointer.
                unsafe { out(handle, hipIpcMemHandle_t { reserved }) }
            }
            Err(r) => Self::code(r),
        }
    }
    unsafe fn hipIpcOpenMemHandle(
        &self,
        ptr: *mut *mut c_void,
        handle: hipIpcMemHandle_t,
        _: c_uint,
    ) -> hipError_t {
        gate!(self);
        match self
            .0
            .ipc_open("hipIpcOpenMemHandle", &handle.reserved.map(|b| b as u8))
        {
            // SAFETY: the caller's out-pointer.
            Ok(p) => unsafe { out(ptr, p as *mut c_void) },
            Err(r) => Self::code(r),
        }
    }
    unsafe fn hipIpcCloseMemHandle(&self, ptr: *mut c_void) -> hipError_t {
        gate!(self);
        Self::result(self.0.ipc_close("hipIpcCloseMemHandle", ptr as usize))
    }
    unsafe fn hipMemcpyAsync(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        n: usize,
        _: hipMemcpyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        gate!(self);
        self.0.queue_copy(
            "hipMemcpyAsync",
            stream as usize,
            dst as usize,
            src as usize,
            n,
        );
        hipError_t_hipSuccess
    }
    unsafe fn hipMemcpy3DAsync(
        &self,
        parms: *const hipMemcpy3DParms,
        stream: hipStream_t,
    ) -> hipError_t {
        gate!(self);
        // SAFETY: the caller's pointer.
        unsafe { self.rect(parms, stream) }
    }
    unsafe fn hipMemcpyPeerAsync(
        &self,
        dst: *mut c_void,
        _: c_int,
        src: *const c_void,
        _: c_int,
        n: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        gate!(self);
        self.0.queue_copy(
            "hipMemcpyPeerAsync",
            stream as usize,
            dst as usize,
            src as usize,
            n,
        );
        hipError_t_hipSuccess
    }
    unsafe fn hipMemsetAsync(
        &self,
        dst: *mut c_void,
        value: c_int,
        n: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        gate!(self);
        let op = set_op(dst as usize, value as u8, n);
        self.0.enqueue("hipMemsetAsync", stream as usize, op);
        hipError_t_hipSuccess
    }
    unsafe fn hipStreamSynchronize(&self, stream: hipStream_t) -> hipError_t {
        gate!(self);
        self.0.record("hipStreamSynchronize", stream as usize);
        self.0.run(stream as usize, None);
        hipError_t_hipSuccess
    }
    unsafe fn hipEventCreateWithFlags(&self, event: *mut hipEvent_t, _: c_uint) -> hipError_t {
        gate!(self);
        // SAFETY: the caller's out-pointer.
        unsafe { out(event, self.0.event_create() as hipEvent_t) }
    }
    unsafe fn hipEventRecord(&self, event: hipEvent_t, stream: hipStream_t) -> hipError_t {
        gate!(self);
        Self::known(self.0.event_record(event as usize, stream as usize))
    }
    unsafe fn hipEventSynchronize(&self, event: hipEvent_t) -> hipError_t {
        gate!(self);
        Self::known(self.0.event_wait(event as usize))
    }
    unsafe fn hipEventQuery(&self, event: hipEvent_t) -> hipError_t {
        gate!(self);
        // Done once asked (the work runs when something waits, as in the CUDA simulator).
        Self::known(self.0.event_wait(event as usize))
    }
    unsafe fn hipEventDestroy(&self, event: hipEvent_t) -> hipError_t {
        gate!(self);
        Self::known(self.0.event_destroy(event as usize))
    }
    unsafe fn hipStreamWaitEvent(
        &self,
        _: hipStream_t,
        event: hipEvent_t,
        _: c_uint,
    ) -> hipError_t {
        gate!(self);
        // The waiting stream's later work comes after the event's: run up to it now.
        Self::known(self.0.event_wait(event as usize))
    }
    unsafe fn hipModuleLoadData(
        &self,
        module: *mut hipModule_t,
        image: *const c_void,
    ) -> hipError_t {
        gate!(self);
        // SAFETY: a whole code object (ELF) or text, per the runtime's contract.
        match unsafe { read_image(image.cast()) } {
            // ELFOSABI_AMDGPU_HSA: an AMD GPU code object.
            Image::Elf(64, _, names) => {
                let handle = self.0.load_module("hipModuleLoadData", names);
                // SAFETY: the caller's out-pointer.
                unsafe { out(module, handle as hipModule_t) }
            }
            _ => {
                self.0.record("hipModuleLoadData", 0);
                hipError_t_hipErrorInvalidImage
            }
        }
    }
    unsafe fn hipModuleGetFunction(
        &self,
        function: *mut hipFunction_t,
        module: hipModule_t,
        name: *const c_char,
    ) -> hipError_t {
        gate!(self);
        // SAFETY: a NUL-terminated name, per the runtime's contract.
        let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
        match self
            .0
            .function("hipModuleGetFunction", module as usize, &name)
        {
            // SAFETY: the caller's out-pointer.
            Ok(f) => unsafe { out(function, f as hipFunction_t) },
            Err(r) => Self::code(r),
        }
    }
    unsafe fn hipModuleLaunchKernel(
        &self,
        f: hipFunction_t,
        gx: c_uint,
        gy: c_uint,
        gz: c_uint,
        bx: c_uint,
        by: c_uint,
        bz: c_uint,
        _: c_uint,
        stream: hipStream_t,
        params: *mut *mut c_void,
        _: *mut *mut c_void,
    ) -> hipError_t {
        gate!(self);
        if params.is_null() {
            return hipError_t_hipErrorInvalidValue;
        }
        // HIP counts the grid in threads: at most 2^32 - 1 of them along x.
        let sizes = ([gx, gy, gz], [bx, by, bz]);
        let launched = self.0.launch(
            "hipModuleLaunchKernel",
            f as usize,
            sizes,
            stream as usize,
            u64::from(u32::MAX),
        );
        Self::result(launched)
    }
    unsafe fn hipGetErrorName(&self, code: hipError_t) -> *const c_char {
        error_name(code)
    }
    unsafe fn hipGetErrorString(&self, _: hipError_t) -> *const c_char {
        c"an error of the simulated HIP runtime".as_ptr()
    }
}
