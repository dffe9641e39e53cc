//! The HIP runtime calls locus makes, as thin wrappers over the bindings (`sys.rs`)
//! that return a typed [`GpuError`] (the call and its `hipError_t`): the [`GpuApi`] the
//! shared CUDA/HIP device types (`cuda_hip`) are written against.

use super::*;

impl HipApi {
    /// The name of a `hipError_t` (`hipErrorNoDevice`).
    pub(super) fn error_name(&self, code: hipError_t) -> String {
        // SAFETY: hipGetErrorName returns a static string for any code.
        unsafe { CStr::from_ptr(self.raw.hipGetErrorName(code)) }
            .to_string_lossy()
            .into_owned()
    }

    /// A `hipError_t` with its name: `100 (hipErrorNoDevice)`.
    pub(super) fn describe(&self, code: hipError_t) -> String {
        format!("{code} ({})", self.error_name(code))
    }

    /// The typed error of a failed HIP call (its `hipError_t` and name), or `Ok`.
    pub(super) fn check(&self, call: &'static str, code: hipError_t) -> Result<(), GpuError> {
        if code == hipError_t_hipSuccess {
            Ok(())
        } else {
            Err(GpuError {
                call,
                code: code as i32,
                name: self.error_name(code),
                out_of_memory: code == hipError_t_hipErrorOutOfMemory,
            })
        }
    }

    /// `hipMemcpyAsync` of `n` bytes on the current device's stream, waited for when
    /// `wait` is set. The direction is `hipMemcpyDefault`: HIP works it out from the
    /// pointers, which a fixed direction gets wrong for pinned and managed memory.
    ///
    /// # Safety
    /// `dst` and `src` address `n` bytes each, kept alive until the copy ends.
    unsafe fn memcpy_async(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        n: usize,
        wait: bool,
    ) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            self.raw
                .hipMemcpyAsync(dst, src, n, hipMemcpyKind_hipMemcpyDefault, self.stream())
        };
        self.check("hipMemcpyAsync", rc)?;
        self.finish(wait)
    }

    pub(super) fn stream(&self) -> hipStream_t {
        let ordinal = super::CURRENT.with(std::cell::Cell::get);
        self.streams
            .get(ordinal as usize)
            .copied()
            .unwrap_or(std::ptr::null_mut())
    }
}

impl GpuApi for HipApi {
    const TECHNOLOGY: Technology = Technology::Hip;
    const MAX_ITEMS_X: u64 = u32::MAX as u64;
    // HIP's raw transfers are the backend's own `hipMemcpyAsync`s, waited for (through
    // pinned staging for pageable memory, as a careful hand-written loop does).
    const RECT_CALL: Option<&'static str> = Some("hipMemcpy3DAsync");

    unsafe fn copy_rect(&self, rect: &GpuRect, wait: bool) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.copy_3d(rect, wait) }
    }

    const NATIVE_CALLS: [&'static str; 3] = ["hipMemcpyAsync"; 3];

    fn activate(&self, ordinal: u32) -> Result<(), GpuError> {
        if self
            .streams
            .get(ordinal as usize)
            .is_none_or(|s| s.is_null())
        {
            return Err(GpuError::other(
                "hipSetDevice",
                format!("no usable HIP device {ordinal} (missing, or skipped at discovery)"),
            ));
        }
        // SAFETY: hipSetDevice validates the ordinal.
        self.check("hipSetDevice", unsafe {
            self.raw.hipSetDevice(ordinal as i32)
        })?;
        super::CURRENT.with(|c| c.set(ordinal));
        Ok(())
    }

    /// The device current on this thread (-1 when the runtime cannot say).
    type Current = i32;

    fn current(&self) -> i32 {
        let mut device = -1;
        // SAFETY: an out-pointer to a local.
        match unsafe { self.raw.hipGetDevice(&mut device) } {
            0 => device,
            _ => -1,
        }
    }

    fn restore(&self, current: i32) {
        if current >= 0 {
            // SAFETY: a device the runtime reported current on this thread.
            if unsafe { self.raw.hipSetDevice(current) } == 0 {
                super::CURRENT.with(|c| c.set(current as u32));
            }
        }
    }

    fn is_current(&self, current: i32, ordinal: u32) -> bool {
        current == ordinal as i32
    }

    fn prefer_location(&self, ptr: u64, n: usize, device: Option<u32>) -> Result<(), GpuError> {
        // hipCpuDeviceId (-1) names the host.
        let device = device.map_or(-1, |d| d as i32);
        // SAFETY: advice only: the runtime validates the range and touches no memory.
        let rc = unsafe {
            self.raw.hipMemAdvise(
                ptr as *const c_void,
                n,
                hipMemoryAdvise_hipMemAdviseSetPreferredLocation,
                device,
            )
        };
        self.check("hipMemAdvise", rc)
    }

    unsafe fn alloc(&self, kind: GpuMemory, bytes: usize) -> Result<u64, GpuError> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; the device is current.
        let (call, rc) = unsafe {
            match kind {
                GpuMemory::Device => ("hipMalloc", self.raw.hipMalloc(&mut ptr, bytes)),
                GpuMemory::Pinned => ("hipHostMalloc", self.raw.hipHostMalloc(&mut ptr, bytes, 0)),
                GpuMemory::Managed => (
                    "hipMallocManaged",
                    self.raw.hipMallocManaged(&mut ptr, bytes, 1),
                ),
                GpuMemory::StreamOrdered => (
                    "hipMallocFromPoolAsync",
                    match &self.pool {
                        Some(calls) => calls.hipMallocFromPoolAsync(
                            &mut ptr,
                            bytes,
                            self.own_pool(calls.as_ref())?,
                            self.stream().cast(),
                        ),
                        None => hipError_t_hipErrorNotSupported,
                    },
                ),
            }
        };
        self.check(call, rc)?;
        Ok(ptr as u64)
    }

    unsafe fn free(&self, kind: GpuMemory, ptr: u64) {
        // SAFETY: per the caller's contract.
        unsafe {
            match kind {
                GpuMemory::Pinned => self.raw.hipHostFree(ptr as *mut c_void),
                // Freed in stream order (allocated by hipMallocAsync, so the pool exists).
                GpuMemory::StreamOrdered => match &self.pool {
                    Some(pool) => pool.hipFreeAsync(ptr as *mut c_void, self.stream().cast()),
                    None => hipError_t_hipErrorNotSupported,
                },
                _ => self.raw.hipFree(ptr as *mut c_void),
            };
        }
    }

    unsafe fn to_device(
        &self,
        dst: u64,
        src: *const u8,
        n: usize,
        wait: bool,
    ) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.memcpy_async(dst as *mut c_void, src.cast(), n, wait) }
    }

    unsafe fn to_host(&self, dst: *mut u8, src: u64, n: usize, wait: bool) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.memcpy_async(dst.cast(), src as *const c_void, n, wait) }
    }

    unsafe fn on_device(&self, dst: u64, src: u64, n: usize, wait: bool) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.memcpy_async(dst as *mut c_void, src as *const c_void, n, wait) }
    }

    unsafe fn peer(
        &self,
        dst: u64,
        dst_ordinal: u32,
        src: u64,
        src_ordinal: u32,
        n: usize,
    ) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract. On the current (destination) device's
        // stream, as CUDA's side does, not the blocking hipMemcpyPeer on the NULL stream.
        let rc = unsafe {
            self.raw.hipMemcpyPeerAsync(
                dst as *mut c_void,
                dst_ordinal as i32,
                src as *const c_void,
                src_ordinal as i32,
                n,
                self.stream(),
            )
        };
        self.check("hipMemcpyPeerAsync", rc)?;
        self.synchronize()
    }

    unsafe fn memset(&self, dst: u64, byte: u8, n: usize, wait: bool) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract; on locus's stream, not the NULL stream.
        self.check("hipMemsetAsync", unsafe {
            self.raw
                .hipMemsetAsync(dst as *mut c_void, i32::from(byte), n, self.stream())
        })?;
        self.finish(wait)
    }

    fn synchronize(&self) -> Result<(), GpuError> {
        // SAFETY: a stream of the current device.
        self.check("hipStreamSynchronize", unsafe {
            self.raw.hipStreamSynchronize(self.stream())
        })
    }

    fn memory_info(&self) -> Result<(u64, u64), GpuError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: out-pointers to locals; the device is current.
        self.check("hipMemGetInfo", unsafe {
            self.raw.hipMemGetInfo(&mut free, &mut total)
        })?;
        Ok((free as u64, total as u64))
    }

    fn event_create(&self) -> Result<u64, GpuError> {
        let mut event: hipEvent_t = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; 2 = hipEventDisableTiming.
        self.check("hipEventCreateWithFlags", unsafe {
            self.raw.hipEventCreateWithFlags(&mut event, 2)
        })?;
        Ok(event as u64)
    }

    unsafe fn event_record(&self, event: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        self.check("hipEventRecord", unsafe {
            self.raw.hipEventRecord(event as hipEvent_t, self.stream())
        })
    }

    unsafe fn event_record_on(&self, event: u64, stream: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        self.check("hipEventRecord", unsafe {
            self.raw
                .hipEventRecord(event as hipEvent_t, stream as hipStream_t)
        })
    }

    unsafe fn stream_wait_event(&self, stream: u64, event: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract; flags must be 0.
        self.check("hipStreamWaitEvent", unsafe {
            self.raw
                .hipStreamWaitEvent(stream as hipStream_t, event as hipEvent_t, 0)
        })
    }

    unsafe fn event_wait(&self, event: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        self.check("hipEventSynchronize", unsafe {
            self.raw.hipEventSynchronize(event as hipEvent_t)
        })
    }

    unsafe fn event_query(&self, event: u64) -> Result<bool, GpuError> {
        // SAFETY: per the caller's contract.
        let rc = unsafe { self.raw.hipEventQuery(event as hipEvent_t) };
        if rc == hipError_t_hipErrorNotReady {
            return Ok(false);
        }
        self.check("hipEventQuery", rc).map(|()| true)
    }

    unsafe fn event_destroy(&self, event: u64) {
        // SAFETY: per the caller's contract.
        let _ = unsafe { self.raw.hipEventDestroy(event as hipEvent_t) };
    }

    fn enable_peer(&self, from: u32, to: u32) -> bool {
        let mut can = 0;
        // SAFETY: plain queries with out-pointers to locals.
        unsafe {
            if self
                .raw
                .hipDeviceCanAccessPeer(&mut can, from as i32, to as i32)
                != hipError_t_hipSuccess
                || can == 0
            {
                return false;
            }
            let Ok(_current) = self.enter(from) else {
                return false;
            };
            let rc = self.raw.hipDeviceEnablePeerAccess(to as i32, 0);
            rc == hipError_t_hipSuccess || rc == hipError_t_hipErrorPeerAccessAlreadyEnabled
        }
    }

    fn compile(&self, source: &str, entry: &str) -> Result<u64, GpuError> {
        let src = CString::new(source)
            .map_err(|e| GpuError::other("hiprtcCreateProgram", e.to_string()))?;
        let name = CString::new(entry)
            .map_err(|e| GpuError::other("hiprtcCreateProgram", e.to_string()))?;
        let rtc = self
            .rtc
            .as_ref()
            .map_err(|why| GpuError::other("hiprtcCreateProgram", why.to_string()))?;
        let mut program: hiprtcProgram = std::ptr::null_mut();
        // SAFETY: hiprtc calls with NUL-terminated strings and out-pointers to locals;
        // the program is destroyed once, the module kept for the process.
        unsafe {
            let rc = rtc.hiprtcCreateProgram(
                &mut program,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            if rc != hiprtcResult_HIPRTC_SUCCESS {
                return Err(GpuError::other(
                    "hiprtcCreateProgram",
                    format!("hiprtcResult {rc}"),
                ));
            }
            // The current device's architecture (issue 48 item 5: without it hiprtc
            // looks for the unversioned libamdhip64.so, absent from runtime installs).
            let arch = usize::try_from(self.current())
                .ok()
                .and_then(|d| self.archs.get(d).cloned().flatten());
            let options = arch::hiprtc_options(arch.as_deref());
            let mut pointers: Vec<*const std::os::raw::c_char> =
                options.iter().map(|o| o.as_ptr()).collect();
            let rc =
                rtc.hiprtcCompileProgram(program, pointers.len() as i32, pointers.as_mut_ptr());
            if rc != hiprtcResult_HIPRTC_SUCCESS {
                let mut size = 0;
                rtc.hiprtcGetProgramLogSize(program, &mut size);
                let mut log = vec![0u8; size.max(1)];
                rtc.hiprtcGetProgramLog(program, log.as_mut_ptr().cast());
                rtc.hiprtcDestroyProgram(&mut program);
                return Err(GpuError::other(
                    "hiprtcCompileProgram",
                    format!("hiprtcResult {rc}: {}", String::from_utf8_lossy(&log)),
                ));
            }
            let mut size = 0;
            rtc.hiprtcGetCodeSize(program, &mut size);
            let mut code = vec![0u8; size];
            rtc.hiprtcGetCode(program, code.as_mut_ptr().cast());
            rtc.hiprtcDestroyProgram(&mut program);
            let mut module: hipModule_t = std::ptr::null_mut();
            self.check(
                "hipModuleLoadData",
                self.raw
                    .hipModuleLoadData(&mut module, code.as_ptr().cast()),
            )?;
            let mut function: hipFunction_t = std::ptr::null_mut();
            self.check(
                "hipModuleGetFunction",
                self.raw
                    .hipModuleGetFunction(&mut function, module, name.as_ptr()),
            )?;
            Ok(function as u64)
        }
    }

    unsafe fn launch(
        &self,
        function: u64,
        grid: [u32; 3],
        block: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            self.raw.hipModuleLaunchKernel(
                function as hipFunction_t,
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
        };
        self.check("hipModuleLaunchKernel", rc)
    }

    fn stream_handle(&self, ordinal: u32) -> u64 {
        self.streams.get(ordinal as usize).map_or(0, |s| *s as u64)
    }

    unsafe fn synchronize_stream(&self, stream: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        self.check("hipStreamSynchronize", unsafe {
            self.raw.hipStreamSynchronize(stream as hipStream_t)
        })
    }

    fn pointer_device(&self, ptr: u64) -> Result<u32, GpuError> {
        let mut ordinal: i32 = -1;
        // SAFETY: the attribute is an int written to a local.
        self.check("hipPointerGetAttribute", unsafe {
            self.raw.hipPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                hipPointer_attribute_HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr as hipDeviceptr_t,
            )
        })?;
        u32::try_from(ordinal).map_err(|_| GpuError::other("hipPointerGetAttribute", "no device"))
    }

    fn pointer_range(&self, ptr: u64) -> Result<Option<cuda_hip::GpuPointer>, GpuError> {
        self.query_pointer(ptr)
    }

    unsafe fn host_register(&self, ptr: *mut u8, len: usize) -> Result<(), GpuError> {
        // hipHostRegisterPortable (every device's context sees it pinned) and
        // hipHostRegisterMapped (mapped into the devices' address space).
        const PORTABLE_MAPPED: u32 = 1 | 2;
        // SAFETY: per the caller's contract; the runtime validates the range.
        self.check("hipHostRegister", unsafe {
            self.raw.hipHostRegister(ptr.cast(), len, PORTABLE_MAPPED)
        })
    }

    unsafe fn ipc_handle(&self, ptr: u64) -> Result<[u8; 64], GpuError> {
        let mut handle = hipIpcMemHandle_t { reserved: [0; 64] };
        // SAFETY: writes one handle; the runtime checks `ptr`.
        self.check("hipIpcGetMemHandle", unsafe {
            self.raw.hipIpcGetMemHandle(&mut handle, ptr as *mut c_void)
        })?;
        Ok(handle.reserved.map(|b| b as u8))
    }

    unsafe fn ipc_open(&self, handle: &[u8; 64]) -> Result<u64, GpuError> {
        // hipIpcMemLazyEnablePeerAccess.
        const LAZY_PEER_ACCESS: u32 = 1;
        let handle = hipIpcMemHandle_t {
            reserved: handle.map(|b| b as std::os::raw::c_char),
        };
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer; the runtime checks the handle.
        self.check("hipIpcOpenMemHandle", unsafe {
            self.raw
                .hipIpcOpenMemHandle(&mut ptr, handle, LAZY_PEER_ACCESS)
        })?;
        Ok(ptr as u64)
    }

    unsafe fn ipc_close(&self, ptr: u64) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        self.check("hipIpcCloseMemHandle", unsafe {
            self.raw.hipIpcCloseMemHandle(ptr as *mut c_void)
        })
    }

    unsafe fn host_unregister(&self, ptr: *mut u8) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        self.check("hipHostUnregister", unsafe {
            self.raw.hipHostUnregister(ptr.cast())
        })
    }

    fn native(ptr: u64, kind: GpuMemory) -> Native {
        Native::Hip { ptr, kind }
    }

    fn unpack(native: &Native) -> Option<(u64, GpuMemory)> {
        match native {
            Native::Hip { ptr, kind } => Some((*ptr, *kind)),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}
