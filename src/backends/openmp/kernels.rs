//! OpenMP kernels: C compiled with `-fopenmp` into the kernel library build.rs embeds,
//! called by entry name (`locus_omp_k_<entry>`) with the device number.

use super::*;

/// The raw entry point `locus_omp_k_<entry>` of an OpenMP kernel built into locus's
/// kernel library (for baselines that call it directly, without a codelet).
///
/// The function follows the convention `int f(void **args, size_t gx, size_t gy, int
/// device)` described in `shaders/vec_add_openmp.c`.
pub fn raw_kernel(
    entry: &str,
) -> Result<unsafe extern "C" fn(*mut *mut c_void, usize, usize, i32) -> i32> {
    let api = api().map_err(|e| Error::Invalid(e.to_string()))?;
    let symbol = format!("locus_omp_k_{entry}\0");
    // SAFETY: kernels in the library follow the documented convention.
    unsafe {
        api._library
            .get::<KernelEntry>(symbol.as_bytes())
            .map(|f| *f)
            .map_err(|e| Error::Invalid(format!("no OpenMP kernel `{entry}`: {e}")))
    }
}

/// Runs the `vec_add` kernel of `shaders/vec_add_openmp.c` on OpenMP device `device`:
/// `c[i] = a[i] + b[i]` for `i < n`, as a `target teams distribute parallel for`.
///
/// # Safety
/// `a`, `b` and `c` are device pointers valid on `device` (memory from
/// `omp_target_alloc` there, or host addresses when it is the initial device) of at
/// least `n` elements each, and nothing else accesses `c` during the call.
pub unsafe fn vec_add_f32(
    device: &OpenMpDevice,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    n: usize,
) -> Result<()> {
    let api = api().map_err(|e| device.unavailable(e.to_string()))?;
    // SAFETY: forwarded from the caller's contract.
    unsafe { (api.vec_add_f32)(a, b, c, n, device.device_number) };
    Ok(())
}

impl OpenMpDevice {
    pub(super) fn launch_kernel(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
    ) -> Result<Completion> {
        let api = api().map_err(|e| self.unavailable(e.to_string()))?;
        let symbol = format!("locus_omp_k_{}\0", spec.entry);
        let entry: KernelEntry = if !spec.source.is_empty() {
            // The user's own C, compiled and cached.
            // On the initial device a `target` region runs on the host whatever was
            // compiled for offload devices.
            let host_only = self.device_number == self.initial_device;
            super::user_kernels::entry_of(self.location, spec.source, spec.entry, host_only)?
        } else {
            // SAFETY: kernels built into the library follow the `KernelEntry`
            // convention (shaders/*_openmp.c).
            unsafe { api._library.get::<KernelEntry>(symbol.as_bytes()) }
                .map(|f| *f)
                .map_err(|_| {
                    Error::Invalid(format!(
                        "{}: no OpenMP kernel `{}` in locus's kernel library (shaders/{}_openmp.c, built by build.rs); give your own C with Kernel::openmp_c",
                        self.location, spec.entry, spec.entry
                    ))
                })?
        };
        // Each scalar in an 8-byte slot of its own, aligned for any scalar type.
        let mut scalars: Vec<u64> = args
            .iter()
            .filter_map(|a| match a {
                LaunchArg::Scalar(_, slot) => Some(u64::from_ne_bytes(*slot)),
                LaunchArg::Memory(_) => None,
            })
            .collect();
        let mut next_scalar = scalars.iter_mut();
        let mut pointers: Vec<*mut c_void> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match a {
                LaunchArg::Memory(m) => {
                    let ptr = match m.native() {
                        Native::OpenMp { ptr, device } if *device == self.device_number => *ptr,
                        _ if self.on_host && m.host_access() == HostAccess::Pointer => {
                            m.device().map(m.native(), 0, m.len(), true)?
                        }
                        _ => {
                            return Err(bad_argument(
                                self.location,
                                i,
                                &format!(
                                    "memory at {} is not addressable on OpenMP device {}",
                                    m.location(),
                                    self.device_number
                                ),
                            ))
                        }
                    };
                    pointers.push(ptr.cast());
                }
                _ => match next_scalar.next() {
                    Some(slot) => pointers.push((slot as *mut u64).cast()),
                    None => return Err(bad_argument(self.location, i, "scalar missing")),
                },
            }
        }
        // SAFETY: `pointers` follows the kernel convention (device pointers for buffers,
        // pointers to live scalar values); the codelet checked counts and lengths.
        let rc = unsafe {
            entry(
                pointers.as_mut_ptr(),
                spec.global[0],
                spec.global[1],
                self.device_number,
            )
        };
        if rc != 0 {
            return Err(Error::Backend {
                location: self.location,
                call: "target teams distribute parallel for",
                message: format!("kernel `{}` returned {rc}", spec.entry),
                hint: "check the kernel's arguments".into(),
            });
        }
        Ok(Completion::done())
    }
}
