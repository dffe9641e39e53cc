//! The CUDA driver calls locus makes, through the driver's entry points
//! ([`CudaDriver`](super::entry_points::CudaDriver): libcuda, or a simulated driver in tests),
//! each failure a typed [`GpuError`] (the call and its `CUresult`): the [`GpuApi`] the
//! shared CUDA/HIP device types (`cuda_hip`) are written against.

use super::*;

impl GpuApi for CudaApi {
    const TECHNOLOGY: Technology = Technology::Cuda;
    const DRIVER_READS_PAGEABLE: bool = true;
    /// Every size: the driver's own pageable upload (`cuMemcpyHtoDAsync` on locus's
    /// stream, waited for) beats the two-chunk staging at every size
    /// `benches/cuda_copies.rs` measures (`docs/design-measurements.md`).
    const DRIVER_WRITES_PAGEABLE_UP_TO: usize = usize::MAX;

    const RECT_CALL: Option<&'static str> = Some("cuMemcpy3DAsync");

    unsafe fn copy_rect(&self, rect: &GpuRect, wait: bool) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.copy_3d(rect, wait) }
    }

    const NATIVE_CALLS: [&'static str; 3] = [
        "cuMemcpyHtoD + cuStreamSynchronize(NULL)",
        "cuMemcpyDtoH",
        "cuMemcpyDtoD + cuCtxSynchronize",
    ];

    unsafe fn native_copy(
        &self,
        direction: Direction,
        dst: u64,
        src: u64,
        n: usize,
    ) -> Option<Result<(), GpuError>> {
        // SAFETY: per the caller's contract; the context is current. `cuMemcpyDtoD`
        // returns before the copy is done, so a plain context-wide wait follows it.
        // Each baseline is the complete copy (a wait where the call returns early).
        let done = unsafe {
            match direction {
                // From pageable memory `cuMemcpyHtoD` may return once the bytes are in
                // the driver's staging memory, before the DMA lands: the wait on the
                // NULL stream that carries it makes the baseline a complete copy, as
                // locus's own path is.
                Direction::HostToDevice => self
                    .driver
                    .cuMemcpyHtoD_v2(dst, src as *const c_void, n)
                    .result()
                    .map_err(self.err("cuMemcpyHtoD"))
                    .and_then(|()| {
                        self.driver
                            .cuStreamSynchronize(std::ptr::null_mut())
                            .result()
                            .map_err(self.err("cuStreamSynchronize"))
                    }),
                Direction::DeviceToHost => self
                    .driver
                    .cuMemcpyDtoH_v2(dst as *mut c_void, src, n)
                    .result()
                    .map_err(self.err("cuMemcpyDtoH")),
                Direction::WithinDevice => self
                    .driver
                    .cuMemcpyDtoD_v2(dst, src, n)
                    .result()
                    .map_err(self.err("cuMemcpyDtoD"))
                    .and_then(|()| {
                        self.driver
                            .cuCtxSynchronize()
                            .result()
                            .map_err(self.err("cuCtxSynchronize"))
                    }),
            }
        };
        Some(done)
    }

    fn activate(&self, ordinal: u32) -> Result<(), GpuError> {
        let ctx = *self
            .contexts
            .get(ordinal as usize)
            .filter(|c| !c.is_null())
            .ok_or_else(|| GpuError {
                call: "cuCtxSetCurrent",
                code: sys::CUresult::CUDA_ERROR_INVALID_DEVICE as i32,
                name: format!("no usable CUDA device {ordinal} (missing, or skipped at discovery)"),
                out_of_memory: false,
            })?;
        // SAFETY: a retained primary context.
        unsafe { self.driver.cuCtxSetCurrent(ctx) }
            .result()
            .map_err(self.err("cuCtxSetCurrent"))?;
        super::CURRENT.with(|c| c.set(ordinal));
        Ok(())
    }

    /// The context current on this thread, as an address (0: none).
    type Current = usize;

    fn current(&self) -> usize {
        // A failed query reads as "none": restoring none unbinds, which is what a thread
        // whose driver cannot answer had.
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: writes one handle to a local.
        match unsafe { self.driver.cuCtxGetCurrent(&mut ctx) }.result() {
            Ok(()) => ctx as usize,
            Err(_) => 0,
        }
    }

    fn restore(&self, current: usize) {
        // SAFETY: `current` was current on this thread before locus's call, so it is a
        // context its owner keeps alive (or null, which unbinds).
        let _ = unsafe { self.driver.cuCtxSetCurrent(current as sys::CUcontext) };
        if let Some(ordinal) = self.contexts.iter().position(|c| *c as usize == current) {
            super::CURRENT.with(|c| c.set(ordinal as u32));
        }
    }

    fn is_current(&self, current: usize, ordinal: u32) -> bool {
        self.contexts
            .get(ordinal as usize)
            .is_some_and(|c| !c.is_null() && *c as usize == current)
    }

    fn prefer_location(&self, ptr: u64, n: usize, device: Option<u32>) -> Result<(), GpuError> {
        // CU_DEVICE_CPU (-1) names the host.
        let device = device.map_or(-1, |d| d as sys::CUdevice);
        // SAFETY: advice only: the driver validates the range and touches no memory.
        unsafe {
            self.driver.cuMemAdvise(
                ptr,
                n,
                sys::CUmem_advise::CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
                device,
            )
        }
        .result()
        .map_err(self.err("cuMemAdvise"))
    }

    unsafe fn alloc(&self, kind: GpuMemory, bytes: usize) -> Result<u64, GpuError> {
        let mut ptr: sys::CUdeviceptr = 0;
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: the context is current (caller's contract); out-pointers to locals.
        let (call, rc) = unsafe {
            match kind {
                GpuMemory::Device => ("cuMemAlloc", self.driver.cuMemAlloc_v2(&mut ptr, bytes)),
                GpuMemory::Pinned => (
                    "cuMemAllocHost",
                    self.driver.cuMemHostAlloc(&mut host, bytes, 0),
                ),
                GpuMemory::Managed => (
                    "cuMemAllocManaged",
                    self.driver.cuMemAllocManaged(
                        &mut ptr,
                        bytes,
                        sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32,
                    ),
                ),
                // Only asked for where the device reported memory pools (GpuFacts), so
                // the driver exports the calls.
                GpuMemory::StreamOrdered => (
                    "cuMemAllocFromPoolAsync",
                    self.driver.cuMemAllocFromPoolAsync(
                        &mut ptr,
                        bytes,
                        self.own_pool()?,
                        self.stream(),
                    ),
                ),
            }
        };
        rc.result().map_err(self.err(call))?;
        Ok(if kind == GpuMemory::Pinned {
            host as u64
        } else {
            ptr
        })
    }

    unsafe fn free(&self, kind: GpuMemory, ptr: u64) {
        // SAFETY: per the caller's contract.
        let _ = unsafe {
            match kind {
                GpuMemory::Pinned => self.driver.cuMemFreeHost(ptr as *mut c_void),
                // Freed in stream order: after the work queued on the stream before.
                GpuMemory::StreamOrdered => self.driver.cuMemFreeAsync(ptr, self.stream()),
                _ => self.driver.cuMemFree_v2(ptr),
            }
        };
    }

    unsafe fn to_device(
        &self,
        dst: u64,
        src: *const u8,
        n: usize,
        wait: bool,
    ) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe {
            self.driver
                .cuMemcpyHtoDAsync_v2(dst, src.cast(), n, self.stream())
                .result()
                .map_err(self.err("cuMemcpyHtoDAsync"))?;
        }
        self.finish(wait)
    }

    unsafe fn to_host(&self, dst: *mut u8, src: u64, n: usize, wait: bool) -> Result<(), GpuError> {
        // On locus's non-blocking stream even when waited for: the driver's synchronous
        // `cuMemcpyDtoH` runs on the legacy NULL stream, which waits for (and holds up)
        // every blocking stream of the context, another library's default stream among
        // them. Into pageable memory the driver stages the asynchronous call itself.
        // SAFETY: per the caller's contract.
        unsafe {
            self.driver
                .cuMemcpyDtoHAsync_v2(dst.cast(), src, n, self.stream())
                .result()
                .map_err(self.err("cuMemcpyDtoHAsync"))?;
        }
        self.finish(wait)
    }

    unsafe fn on_device(&self, dst: u64, src: u64, n: usize, wait: bool) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.driver.cuMemcpyDtoDAsync_v2(dst, src, n, self.stream()) }
            .result()
            .map_err(self.err("cuMemcpyDtoDAsync"))?;
        self.finish(wait)
    }

    unsafe fn peer(
        &self,
        dst: u64,
        dst_ordinal: u32,
        src: u64,
        src_ordinal: u32,
        n: usize,
    ) -> Result<(), GpuError> {
        let (d, s) = (
            self.contexts[dst_ordinal as usize],
            self.contexts[src_ordinal as usize],
        );
        // SAFETY: per the caller's contract.
        unsafe {
            self.driver
                .cuMemcpyPeerAsync(dst, d, src, s, n, self.stream())
        }
        .result()
        .map_err(self.err("cuMemcpyPeerAsync"))?;
        self.synchronize()
    }

    unsafe fn ipc_handle(&self, ptr: u64) -> Result<[u8; 64], GpuError> {
        let mut handle = sys::CUipcMemHandle { reserved: [0; 64] };
        // SAFETY: writes one handle; the driver checks `ptr`.
        unsafe { self.driver.cuIpcGetMemHandle(&mut handle, ptr) }
            .result()
            .map_err(self.err("cuIpcGetMemHandle"))?;
        Ok(handle.reserved.map(|b| b as u8))
    }

    unsafe fn ipc_open(&self, handle: &[u8; 64]) -> Result<u64, GpuError> {
        let handle = sys::CUipcMemHandle {
            reserved: handle.map(|b| b as std::ffi::c_char),
        };
        let mut ptr = 0;
        // SAFETY: writes one pointer; the driver checks the handle (and refuses one of
        // this process).
        unsafe {
            self.driver.cuIpcOpenMemHandle_v2(
                &mut ptr,
                handle,
                sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
            )
        }
        .result()
        .map_err(self.err("cuIpcOpenMemHandle"))?;
        Ok(ptr)
    }

    unsafe fn ipc_close(&self, ptr: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.driver.cuIpcCloseMemHandle(ptr) }
            .result()
            .map_err(self.err("cuIpcCloseMemHandle"))
    }

    fn has_copy_batch(&self) -> bool {
        self.copy_batch
    }

    fn batch_takes_registered_host(&self, ordinal: u32) -> bool {
        self.host_pointer_for_registered
            .get(ordinal as usize)
            .copied()
            .unwrap_or(false)
    }

    unsafe fn copy_batch(&self, copies: &[(u64, u64, usize)]) -> Result<(), BatchFailure> {
        let (mut dsts, mut srcs, mut sizes): (Vec<u64>, Vec<u64>, Vec<usize>) = (
            copies.iter().map(|c| c.0).collect(),
            copies.iter().map(|c| c.1).collect(),
            copies.iter().map(|c| c.2).collect(),
        );
        // One set of attributes for every copy: sources read in stream order (pageable
        // host memory too: the driver stages it), no location hints (ignored but for
        // managed memory) and no flags.
        let hint = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_INVALID,
            id: 0,
        };
        let mut attrs = [sys::CUmemcpyAttributes {
            srcAccessOrder: sys::CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
            srcLocHint: hint,
            dstLocHint: hint,
            flags: 0,
        }];
        let mut attr_starts = [0usize];
        let mut failed_at = usize::MAX;
        // SAFETY: the arrays hold `copies.len()` entries each and one attribute set that
        // starts at copy 0; the ranges are valid per the caller's contract; locus's
        // stream is never the legacy NULL stream (which the call refuses).
        unsafe {
            self.driver.cuMemcpyBatchAsync(
                dsts.as_mut_ptr(),
                srcs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                copies.len(),
                attrs.as_mut_ptr(),
                attr_starts.as_mut_ptr(),
                1,
                &mut failed_at,
                self.stream(),
            )
        }
        .result()
        .map_err(|e| BatchFailure {
            error: self.err("cuMemcpyBatchAsync")(e),
            // SIZE_MAX: the error is not specific to one copy.
            copy: (failed_at < copies.len()).then_some(failed_at),
        })?;
        Ok(self.finish(true)?)
    }

    unsafe fn memset(&self, dst: u64, byte: u8, n: usize, wait: bool) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract; on locus's stream, not the NULL stream.
        unsafe { self.driver.cuMemsetD8Async(dst, byte, n, self.stream()) }
            .result()
            .map_err(self.err("cuMemsetD8Async"))?;
        self.finish(wait)
    }

    fn synchronize(&self) -> Result<(), GpuError> {
        // SAFETY: a stream of the current context.
        unsafe { self.driver.cuStreamSynchronize(self.stream()) }
            .result()
            .map_err(self.err("cuStreamSynchronize"))
    }

    fn memory_info(&self) -> Result<(u64, u64), GpuError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: out-pointers to locals.
        unsafe { self.driver.cuMemGetInfo_v2(&mut free, &mut total) }
            .result()
            .map(|()| (free as u64, total as u64))
            .map_err(self.err("cuMemGetInfo"))
    }

    fn event_create(&self) -> Result<u64, GpuError> {
        let mut event: sys::CUevent = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local.
        unsafe {
            self.driver.cuEventCreate(
                &mut event,
                sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
            )
        }
        .result()
        .map(|()| event as u64)
        .map_err(self.err("cuEventCreate"))
    }

    unsafe fn event_record(&self, event: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe {
            self.driver
                .cuEventRecord(event as sys::CUevent, self.stream())
        }
        .result()
        .map_err(self.err("cuEventRecord"))
    }

    unsafe fn event_record_on(&self, event: u64, stream: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe {
            self.driver
                .cuEventRecord(event as sys::CUevent, stream as sys::CUstream)
        }
        .result()
        .map_err(self.err("cuEventRecord"))
    }

    unsafe fn stream_wait_event(&self, stream: u64, event: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe {
            self.driver.cuStreamWaitEvent(
                stream as sys::CUstream,
                event as sys::CUevent,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT as u32,
            )
        }
        .result()
        .map_err(self.err("cuStreamWaitEvent"))
    }

    unsafe fn event_wait(&self, event: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.driver.cuEventSynchronize(event as sys::CUevent) }
            .result()
            .map_err(self.err("cuEventSynchronize"))
    }

    unsafe fn event_query(&self, event: u64) -> Result<bool, GpuError> {
        // SAFETY: per the caller's contract.
        match unsafe { self.driver.cuEventQuery(event as sys::CUevent) }.result() {
            Ok(()) => Ok(true),
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            Err(e) => Err(self.err("cuEventQuery")(e)),
        }
    }

    unsafe fn event_destroy(&self, event: u64) {
        // SAFETY: per the caller's contract.
        let _ = unsafe { self.driver.cuEventDestroy_v2(event as sys::CUevent) };
    }

    fn enable_peer(&self, from: u32, to: u32) -> bool {
        let mut can = 0;
        // SAFETY: plain queries and an enable call on retained contexts.
        unsafe {
            let (mut a, mut b): (sys::CUdevice, sys::CUdevice) = (0, 0);
            if self.driver.cuDeviceGet(&mut a, from as i32) != sys::CUresult::CUDA_SUCCESS
                || self.driver.cuDeviceGet(&mut b, to as i32) != sys::CUresult::CUDA_SUCCESS
                || self.driver.cuDeviceCanAccessPeer(&mut can, a, b) != sys::CUresult::CUDA_SUCCESS
                || can == 0
            {
                return false;
            }
            let Ok(_current) = self.enter(from) else {
                return false;
            };
            let rc = self
                .driver
                .cuCtxEnablePeerAccess(self.contexts[to as usize], 0);
            rc == sys::CUresult::CUDA_SUCCESS
                || rc == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
        }
    }

    fn compile(&self, source: &str, entry: &str) -> Result<u64, GpuError> {
        // SAFETY: only checks whether the library can be opened.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(GpuError::other(
                "nvrtcCreateProgram",
                "libnvrtc.so not found: install the CUDA toolkit's NVRTC library",
            ));
        }
        let arch = self
            .archs
            .get(self.current_ordinal())
            .copied()
            .unwrap_or((0, 0));
        let image = kernels::compile_image(source, arch)?;
        // SAFETY: a cubin, or a NUL-terminated PTX image; the module is kept for the
        // process.
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: as above; an out-pointer to a local.
        unsafe {
            self.driver
                .cuModuleLoadData(&mut module, image.as_ptr().cast())
        }
        .result()
        .map_err(|e| self.explain_load_failure(self.err("cuModuleLoadData")(e)))?;
        if let Ok(mut m) = self.modules.lock() {
            m.push(module);
        }
        let name = std::ffi::CString::new(entry)
            .map_err(|e| GpuError::other("cuModuleGetFunction", e.to_string()))?;
        // SAFETY: a loaded module and a NUL-terminated name.
        let mut function: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: a loaded module, a NUL-terminated name, an out-pointer to a local.
        unsafe {
            self.driver
                .cuModuleGetFunction(&mut function, module, name.as_ptr())
        }
        .result()
        .map_err(self.err("cuModuleGetFunction"))?;
        Ok(function as u64)
    }

    unsafe fn launch(
        &self,
        function: u64,
        grid: [u32; 3],
        block: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe {
            self.driver.cuLaunchKernel(
                function as sys::CUfunction,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                0,
                self.stream(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .map_err(self.err("cuLaunchKernel"))
    }

    fn stream_handle(&self, ordinal: u32) -> u64 {
        self.streams.get(ordinal as usize).map_or(0, |s| *s as u64)
    }

    unsafe fn synchronize_stream(&self, stream: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.driver.cuStreamSynchronize(stream as sys::CUstream) }
            .result()
            .map_err(self.err("cuStreamSynchronize"))
    }

    fn pointer_device(&self, ptr: u64) -> Result<u32, GpuError> {
        let mut ordinal: i32 = -1;
        // SAFETY: the attribute is an int written to a local.
        unsafe {
            self.driver.cuPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            )
        }
        .result()
        .map_err(self.err("cuPointerGetAttribute"))?;
        u32::try_from(ordinal).map_err(|_| GpuError::other("cuPointerGetAttribute", "no device"))
    }

    fn pointer_range(&self, ptr: u64) -> Result<Option<cuda_hip::GpuPointer>, GpuError> {
        self.query_pointer(ptr)
    }

    unsafe fn host_register(&self, ptr: *mut u8, len: usize) -> Result<(), GpuError> {
        // Portable: every context sees it pinned; device-mapped: a device may reach it
        // (a batch or kernel names it; without the flag the device faults there).
        let flags = sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP;
        // SAFETY: per the caller's contract; the driver validates the range.
        unsafe { self.driver.cuMemHostRegister_v2(ptr.cast(), len, flags) }
            .result()
            .map_err(self.err("cuMemHostRegister"))
    }

    unsafe fn host_unregister(&self, ptr: *mut u8) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.driver.cuMemHostUnregister(ptr.cast()) }
            .result()
            .map_err(self.err("cuMemHostUnregister"))
    }

    fn native(ptr: u64, kind: GpuMemory) -> Native {
        Native::Cuda { ptr, kind }
    }

    fn unpack(native: &Native) -> Option<(u64, GpuMemory)> {
        match native {
            Native::Cuda { ptr, kind } => Some((*ptr, *kind)),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}
