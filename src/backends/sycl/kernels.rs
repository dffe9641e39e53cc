//! SYCL kernels: OpenCL C built through the SYCL runtime into kernel bundles, cached,
//! and launched on the device's queue.

use super::*;
use crate::core::element::DType;

/// A kernel built from OpenCL C source through the SYCL runtime's kernel bundles.
pub struct SyclKernel {
    api: &'static DpctlApi,
    bundle: DPCTLSyclKernelBundleRef,
    kernel: DPCTLSyclKernelRef,
}

// SAFETY: kernel objects are immutable once built and usable from any thread.
unsafe impl Send for SyclKernel {}
// SAFETY: as for `Send`.
unsafe impl Sync for SyclKernel {}

/// One kernel argument.
#[derive(Debug, Clone, Copy)]
pub enum KernelArg {
    /// A USM pointer.
    Pointer(*mut c_void),
    /// A 32-bit unsigned scalar.
    U32(u32),
    /// A 32-bit float scalar.
    F32(f32),
    /// A 32-bit signed scalar.
    I32(i32),
    /// A scalar of any type: its native-endian bytes from the first
    /// ([`LaunchArg::Scalar`]'s form).
    Scalar(DType, [u8; 8]),
}

/// dpctl's name for a scalar type (the half types travel as their 16 bits; kernels do
/// not take them as scalars).
fn dpctl_type(t: DType) -> DPCTLKernelArgType {
    match t {
        DType::I8 => DPCTLKernelArgType_DPCTL_INT8_T,
        DType::U8 => DPCTLKernelArgType_DPCTL_UINT8_T,
        DType::I16 => DPCTLKernelArgType_DPCTL_INT16_T,
        DType::U16 | DType::F16 | DType::BF16 => DPCTLKernelArgType_DPCTL_UINT16_T,
        DType::I32 => DPCTLKernelArgType_DPCTL_INT32_T,
        DType::U32 => DPCTLKernelArgType_DPCTL_UINT32_T,
        DType::I64 => DPCTLKernelArgType_DPCTL_INT64_T,
        DType::U64 => DPCTLKernelArgType_DPCTL_UINT64_T,
        DType::F32 => DPCTLKernelArgType_DPCTL_FLOAT32_T,
        DType::F64 => DPCTLKernelArgType_DPCTL_FLOAT64_T,
    }
}

impl SyclDevice {
    /// Builds kernel `name` from OpenCL C `source` (`DPCTLKernelBundle_CreateFromOCLSource`).
    pub fn build_opencl_kernel(&self, source: &str, name: &str) -> Result<SyclKernel> {
        let source = std::ffi::CString::new(source).map_err(|e| Error::Invalid(e.to_string()))?;
        let cname = std::ffi::CString::new(name).map_err(|e| Error::Invalid(e.to_string()))?;
        // SAFETY: live context and device; the bundle and kernel are owned by the result.
        let (bundle, kernel) =
            unsafe { result::opencl_kernel(self.api, self.context, self.device, &source, &cname) }
                .map_err(|e| {
                    self.fail(
                e,
                "check the kernel source and name (the runtime printed the build log on stderr)",
            )
                })?;
        Ok(SyclKernel {
            api: self.api,
            bundle,
            kernel,
        })
    }
}

impl SyclKernel {
    /// Submits the kernel over a 1-D range of `global` work items and waits for it.
    ///
    /// # Safety
    /// The arguments match the kernel's parameters in number and type, every pointer is
    /// USM of `device`'s context (or host memory the device can use) large enough for
    /// what the kernel touches, and nothing else uses written memory meanwhile.
    pub unsafe fn launch_1d(
        &self,
        device: &SyclDevice,
        args: &[KernelArg],
        global: usize,
    ) -> Result<()> {
        // SAFETY: forwarded from the caller's contract.
        let event = unsafe { self.submit(device, args, [global, 1], 1, &[]) };
        device.finish(
            Ok(event?),
            "check the kernel's arguments against its parameters",
        )
    }

    /// Submits over a 1-D or 2-D range without waiting; returns the event.
    ///
    /// # Safety
    /// As for [`SyclKernel::launch_1d`], and the memory stays valid until the event
    /// completes.
    unsafe fn submit(
        &self,
        device: &SyclDevice,
        args: &[KernelArg],
        global: [usize; 2],
        dims: usize,
        deps: &[DPCTLSyclEventRef],
    ) -> Result<DPCTLSyclEventRef> {
        let mut values: Vec<KernelArg> = args.to_vec();
        let mut pointers: Vec<*mut c_void> = Vec::with_capacity(values.len());
        let mut types = Vec::with_capacity(values.len());
        for value in values.iter_mut() {
            match value {
                KernelArg::Pointer(p) => {
                    pointers.push(*p);
                    types.push(DPCTLKernelArgType_DPCTL_VOID_PTR);
                }
                KernelArg::U32(v) => {
                    pointers.push((v as *mut u32).cast());
                    types.push(DPCTLKernelArgType_DPCTL_UINT32_T);
                }
                KernelArg::F32(v) => {
                    pointers.push((v as *mut f32).cast());
                    types.push(DPCTLKernelArgType_DPCTL_FLOAT32_T);
                }
                KernelArg::I32(v) => {
                    pointers.push((v as *mut i32).cast());
                    types.push(DPCTLKernelArgType_DPCTL_INT32_T);
                }
                KernelArg::Scalar(t, bytes) => {
                    pointers.push(bytes.as_mut_ptr().cast());
                    types.push(dpctl_type(*t));
                }
            }
        }
        // SYCL ranges list the slowest dimension first; OpenCL's get_global_id(0) is the
        // fastest. Reverse so that x (global[0]) stays OpenCL dimension 0.
        let range = if dims >= 2 {
            [global[1] as size_t, global[0] as size_t, 1]
        } else {
            [global[0] as size_t, 1, 1]
        };
        // SAFETY: arguments as documented (caller's contract): a USM argument is the
        // pointer itself, a scalar a pointer to its value; the runtime copies the
        // scalar values at submission, so `values` may go after this call.
        let event = unsafe {
            result::submit_range(
                self.api,
                self.kernel,
                device.queue,
                &mut pointers,
                &types,
                range,
                dims.clamp(1, 2),
                deps,
            )
        }
        .map_err(|e| device.fail(e, "check the kernel's arguments against its parameters"))?;
        Ok(event)
    }
}

impl Drop for SyclKernel {
    fn drop(&mut self) {
        // SAFETY: owned references, deleted once.
        unsafe {
            self.api.DPCTLKernel_Delete(self.kernel);
            self.api.DPCTLKernelBundle_Delete(self.bundle);
        }
    }
}

impl SyclDevice {
    pub(super) fn launch_kernel(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
        after: &dyn Dependencies,
    ) -> Result<Completion> {
        // SYCL events go in the submission's dependencies (`depends_on`); anything else
        // (a worker-thread copy, another technology) is waited for here first.
        let sycl_event = |c: &Completion| c.work_as::<SyclWork>().map(|w| w.event);
        let deps = match native_deps(after, sycl_event)? {
            Some(deps) => deps,
            None => {
                for i in 0..after.count() {
                    after.at(i).wait()?;
                }
                Vec::new()
            }
        };
        let key = cache_key(spec.source, spec.entry);
        let kernel = {
            let mut cache = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
            match cache.get(&key) {
                Some(k) => Arc::clone(k),
                None => {
                    let k = Arc::new(self.build_opencl_kernel(spec.source, spec.entry)?);
                    cache.insert(key, Arc::clone(&k));
                    k
                }
            }
        };
        let mut converted = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            converted.push(match a {
                LaunchArg::Memory(m) => {
                    let usable = match m.native() {
                        Native::Sycl { ptr, .. } if m.location() == self.location => Some(*ptr),
                        // With system USM, plain host memory is used in place.
                        _ if self.system_usm && m.host_access() == HostAccess::Pointer => {
                            Some(m.device().map(m.native(), 0, m.len(), true)?)
                        }
                        _ => None,
                    };
                    KernelArg::Pointer(
                        usable
                            .ok_or_else(|| {
                                bad_argument(
                                    self.location,
                                    i,
                                    &format!(
                                        "memory at {} is not usable by this SYCL device",
                                        m.location()
                                    ),
                                )
                            })?
                            .cast(),
                    )
                }
                LaunchArg::Scalar(t, bytes) => KernelArg::Scalar(*t, *bytes),
            });
        }
        // SAFETY: the codelet checked the arguments against the kernel's declared
        // parameters; the pointers are USM of this context or host memory usable through
        // system USM, alive until the completion is waited for; the dependency events are
        // held by `after` for the call.
        let event = unsafe { kernel.submit(self, &converted, spec.global, spec.dims, &deps)? };
        Ok(Completion::new(SyclWork {
            api: self.api,
            event,
            profiled: self.profiled,
        }))
    }
}
