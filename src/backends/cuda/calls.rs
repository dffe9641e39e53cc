//! The CUDA driver calls locus makes, as thin wrappers over cudarc's `result` layer that
//! return a typed [`GpuError`] (the call and its `CUresult`): the [`GpuApi`] the shared
//! CUDA/HIP device types (`cuda_hip`) are written against.

use super::*;

/// The typed error of a failed driver call: cudarc's `DriverError(CUresult)`, with the
/// call and the code's name and text.
pub(super) fn err(call: &'static str) -> impl Fn(result::DriverError) -> GpuError {
    move |e| {
        let name = e
            .error_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let what = e
            .error_string()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        GpuError {
            call,
            code: e.0 as i32,
            name: format!("{name}: {what}"),
            out_of_memory: e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        }
    }
}

impl GpuApi for CudaApi {
    const TECHNOLOGY: Technology = Technology::Cuda;
    const DRIVER_READS_PAGEABLE: bool = true;
    /// Every size: the driver's own pageable upload (`cuMemcpyHtoDAsync` on locus's
    /// stream, waited for) beats the two-chunk staging at every size
    /// `benches/cuda_copies.rs` measures (`docs/design-measurements.md`).
    const DRIVER_WRITES_PAGEABLE_UP_TO: usize = usize::MAX;

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
                Direction::HostToDevice => {
                    result::memcpy_htod_sync(dst, std::slice::from_raw_parts(src as *const u8, n))
                        .map_err(err("cuMemcpyHtoD"))
                        .and_then(|()| {
                            result::stream::synchronize(result::stream::null())
                                .map_err(err("cuStreamSynchronize"))
                        })
                }
                Direction::DeviceToHost => {
                    result::memcpy_dtoh_sync(std::slice::from_raw_parts_mut(dst as *mut u8, n), src)
                        .map_err(err("cuMemcpyDtoH"))
                }
                Direction::WithinDevice => result::memcpy_dtod_sync(dst, src, n)
                    .map_err(err("cuMemcpyDtoD"))
                    .and_then(|()| {
                        sys::cuCtxSynchronize()
                            .result()
                            .map_err(err("cuCtxSynchronize"))
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
        unsafe { result::ctx::set_current(ctx) }.map_err(err("cuCtxSetCurrent"))?;
        super::CURRENT.with(|c| c.set(ordinal));
        Ok(())
    }

    /// The context current on this thread, as an address (0: none).
    type Current = usize;

    fn current(&self) -> usize {
        // A failed query reads as "none": restoring none unbinds, which is what a thread
        // whose driver cannot answer had.
        result::ctx::get_current()
            .ok()
            .flatten()
            .map_or(0, |c| c as usize)
    }

    fn restore(&self, current: usize) {
        // SAFETY: `current` was current on this thread before locus's call, so it is a
        // context its owner keeps alive (or null, which unbinds).
        let _ = unsafe { result::ctx::set_current(current as sys::CUcontext) };
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
            sys::cuMemAdvise(
                ptr,
                n,
                sys::CUmem_advise::CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
                device,
            )
        }
        .result()
        .map_err(err("cuMemAdvise"))
    }

    unsafe fn alloc(&self, kind: GpuMemory, bytes: usize) -> Result<u64, GpuError> {
        // SAFETY: the context is current (caller's contract).
        unsafe {
            match kind {
                GpuMemory::Device => result::malloc_sync(bytes).map_err(err("cuMemAlloc")),
                GpuMemory::Pinned => result::malloc_host(bytes, 0)
                    .map(|p| p as u64)
                    .map_err(err("cuMemAllocHost")),
                GpuMemory::Managed => {
                    result::malloc_managed(bytes, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL)
                        .map_err(err("cuMemAllocManaged"))
                }
                // Only asked for where the device reported memory pools (GpuFacts), so
                // the driver exports the call.
                GpuMemory::StreamOrdered => {
                    result::malloc_async(self.stream(), bytes).map_err(err("cuMemAllocAsync"))
                }
            }
        }
    }

    unsafe fn free(&self, kind: GpuMemory, ptr: u64) {
        // SAFETY: per the caller's contract.
        let _ = unsafe {
            match kind {
                GpuMemory::Pinned => result::free_host(ptr as *mut c_void),
                // Freed in stream order: after the work queued on the stream before.
                GpuMemory::StreamOrdered => result::free_async(ptr, self.stream()),
                _ => result::free_sync(ptr),
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
            result::memcpy_htod_async(dst, std::slice::from_raw_parts(src, n), self.stream())
                .map_err(err("cuMemcpyHtoDAsync"))?;
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
            result::memcpy_dtoh_async(std::slice::from_raw_parts_mut(dst, n), src, self.stream())
                .map_err(err("cuMemcpyDtoHAsync"))?;
        }
        self.finish(wait)
    }

    unsafe fn on_device(&self, dst: u64, src: u64, n: usize, wait: bool) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { result::memcpy_dtod_async(dst, src, n, self.stream()) }
            .map_err(err("cuMemcpyDtoDAsync"))?;
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
        unsafe { result::memcpy_peer_async(d, dst, s, src, n, self.stream()) }
            .map_err(err("cuMemcpyPeerAsync"))?;
        self.synchronize()
    }

    unsafe fn ipc_handle(&self, ptr: u64) -> Result<[u8; 64], GpuError> {
        let mut handle = sys::CUipcMemHandle { reserved: [0; 64] };
        // SAFETY: writes one handle; the driver checks `ptr`.
        unsafe { sys::cuIpcGetMemHandle(&mut handle, ptr) }
            .result()
            .map_err(err("cuIpcGetMemHandle"))?;
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
            sys::cuIpcOpenMemHandle_v2(
                &mut ptr,
                handle,
                sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
            )
        }
        .result()
        .map_err(err("cuIpcOpenMemHandle"))?;
        Ok(ptr)
    }

    unsafe fn ipc_close(&self, ptr: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { sys::cuIpcCloseMemHandle(ptr) }
            .result()
            .map_err(err("cuIpcCloseMemHandle"))
    }

    fn has_copy_batch(&self) -> bool {
        self.copy_batch
    }

    unsafe fn copy_batch(&self, copies: &[(u64, u64, usize)]) -> Result<(), GpuError> {
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
            sys::cuMemcpyBatchAsync(
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
        .map_err(err("cuMemcpyBatchAsync"))?;
        self.finish(true)
    }

    unsafe fn memset(&self, dst: u64, byte: u8, n: usize, wait: bool) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract; on locus's stream, not the NULL stream.
        unsafe { result::memset_d8_async(dst, byte, n, self.stream()) }
            .map_err(err("cuMemsetD8Async"))?;
        self.finish(wait)
    }

    fn synchronize(&self) -> Result<(), GpuError> {
        // SAFETY: a stream of the current context.
        unsafe { result::stream::synchronize(self.stream()) }.map_err(err("cuStreamSynchronize"))
    }

    fn keep_pool_memory(&self) -> Result<(), GpuError> {
        let mut device: sys::CUdevice = 0;
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        let mut threshold: u64 = u64::MAX;
        // SAFETY: out-pointers to locals; the context of the device is current, and the
        // attribute's value is a u64 the call reads.
        unsafe {
            sys::cuCtxGetDevice(&mut device)
                .result()
                .map_err(err("cuCtxGetDevice"))?;
            sys::cuDeviceGetDefaultMemPool(&mut pool, device)
                .result()
                .map_err(err("cuDeviceGetDefaultMemPool"))?;
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut threshold as *mut u64).cast(),
            )
            .result()
            .map_err(err("cuMemPoolSetAttribute"))
        }
    }

    fn memory_info(&self) -> Result<(u64, u64), GpuError> {
        result::mem_get_info()
            .map(|(free, total)| (free as u64, total as u64))
            .map_err(err("cuMemGetInfo"))
    }

    fn event_create(&self) -> Result<u64, GpuError> {
        result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map(|e| e as u64)
            .map_err(err("cuEventCreate"))
    }

    unsafe fn event_record(&self, event: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { result::event::record(event as sys::CUevent, self.stream()) }
            .map_err(err("cuEventRecord"))
    }

    unsafe fn event_record_on(&self, event: u64, stream: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { result::event::record(event as sys::CUevent, stream as sys::CUstream) }
            .map_err(err("cuEventRecord"))
    }

    unsafe fn stream_wait_event(&self, stream: u64, event: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe {
            result::stream::wait_event(
                stream as sys::CUstream,
                event as sys::CUevent,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(err("cuStreamWaitEvent"))
    }

    unsafe fn event_wait(&self, event: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { result::event::synchronize(event as sys::CUevent) }
            .map_err(err("cuEventSynchronize"))
    }

    unsafe fn event_query(&self, event: u64) -> Result<bool, GpuError> {
        // SAFETY: per the caller's contract.
        match unsafe { result::event::query(event as sys::CUevent) } {
            Ok(()) => Ok(true),
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            Err(e) => Err(err("cuEventQuery")(e)),
        }
    }

    unsafe fn event_destroy(&self, event: u64) {
        // SAFETY: per the caller's contract.
        let _ = unsafe { result::event::destroy(event as sys::CUevent) };
    }

    fn enable_peer(&self, from: u32, to: u32) -> bool {
        let mut can = 0;
        // SAFETY: plain queries and an enable call on retained contexts.
        unsafe {
            let (Ok(a), Ok(b)) = (
                result::device::get(from as i32),
                result::device::get(to as i32),
            ) else {
                return false;
            };
            if sys::cuDeviceCanAccessPeer(&mut can, a, b) != sys::CUresult::CUDA_SUCCESS || can == 0
            {
                return false;
            }
            let Ok(_current) = self.enter(from) else {
                return false;
            };
            let rc = sys::cuCtxEnablePeerAccess(self.contexts[to as usize], 0);
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
        let module = unsafe { result::module::load_data(image.as_ptr().cast()) }
            .map_err(err("cuModuleLoadData"))?;
        if let Ok(mut m) = self.modules.lock() {
            m.push(module);
        }
        let name = std::ffi::CString::new(entry)
            .map_err(|e| GpuError::other("cuModuleGetFunction", e.to_string()))?;
        // SAFETY: a loaded module and a NUL-terminated name.
        let function = unsafe { result::module::get_function(module, name) }
            .map_err(err("cuModuleGetFunction"))?;
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
            result::launch_kernel(
                function as sys::CUfunction,
                (grid[0], grid[1], grid[2]),
                (block[0], block[1], block[2]),
                0,
                self.stream(),
                params,
            )
        }
        .map_err(err("cuLaunchKernel"))
    }

    fn stream_handle(&self, ordinal: u32) -> u64 {
        self.streams.get(ordinal as usize).map_or(0, |s| *s as u64)
    }

    unsafe fn synchronize_stream(&self, stream: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { result::stream::synchronize(stream as sys::CUstream) }
            .map_err(err("cuStreamSynchronize"))
    }

    fn pointer_device(&self, ptr: u64) -> Result<u32, GpuError> {
        let mut ordinal: i32 = -1;
        // SAFETY: the attribute is an int written to a local.
        unsafe {
            sys::cuPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            )
        }
        .result()
        .map_err(err("cuPointerGetAttribute"))?;
        u32::try_from(ordinal).map_err(|_| GpuError::other("cuPointerGetAttribute", "no device"))
    }

    unsafe fn host_register(&self, ptr: *mut u8, len: usize) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract; the driver validates the range.
        unsafe { sys::cuMemHostRegister_v2(ptr.cast(), len, sys::CU_MEMHOSTREGISTER_PORTABLE) }
            .result()
            .map_err(err("cuMemHostRegister"))
    }

    unsafe fn host_unregister(&self, ptr: *mut u8) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { sys::cuMemHostUnregister(ptr.cast()) }
            .result()
            .map_err(err("cuMemHostUnregister"))
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
