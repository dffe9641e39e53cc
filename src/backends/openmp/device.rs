//! The OpenMP device's [`Device`] implementation: `omp_target_alloc`, copies through
//! `omp_target_memcpy`, fills and host access on the initial device.

use super::*;

impl Device for OpenMpDevice {
    fn location(&self) -> Location {
        self.location
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        let api = api().map_err(|e| self.unavailable(e.to_string()))?;
        // On the initial device omp_target_alloc is malloc (16-byte aligned): take
        // ALIGNMENT more, align, and keep the original pointer just below the result.
        let extra = if self.on_host {
            crate::core::device::ALIGNMENT
        } else {
            0
        };
        // SAFETY: omp_target_alloc has no preconditions; it returns NULL on failure.
        let raw = unsafe { (api.alloc)(bytes.max(1) + extra, self.device_number) };
        if raw.is_null() {
            return Err(Error::Backend {
                location: self.location,
                call: "omp_target_alloc",
                message: format!("returned NULL for {bytes} bytes"),
                hint: "the device is out of memory: free buffers or use a smaller size".into(),
            });
        }
        let ptr = if self.on_host {
            let aligned = (raw as usize + std::mem::size_of::<usize>())
                .next_multiple_of(crate::core::device::ALIGNMENT);
            // SAFETY: host memory of bytes + ALIGNMENT bytes: `aligned` lies within the
            // first ALIGNMENT bytes, at least one usize past `raw`, so the slot below it
            // is inside the allocation and aligned for usize.
            unsafe { (aligned as *mut usize).sub(1).write(raw as usize) };
            // Large host blocks on huge pages, as the host's own (twice as fast through
            // MPI's shared-memory transport here, fewer TLB misses everywhere).
            crate::backends::pages::advise_huge_pages_within(aligned as *mut u8, bytes);
            aligned as *mut u8
        } else {
            if !(raw as usize).is_multiple_of(crate::core::device::ALIGNMENT) {
                // SAFETY: freeing what was just allocated on this device.
                unsafe { (api.free)(raw, self.device_number) };
                return Err(Error::Invalid(format!(
                    "{}: omp_target_alloc returned a pointer not aligned to {} bytes",
                    self.location,
                    crate::core::device::ALIGNMENT
                )));
            }
            raw.cast()
        };
        self.live.fetch_add(1, Ordering::Relaxed);
        Ok(Native::OpenMp {
            ptr,
            device: self.device_number,
        })
    }

    unsafe fn free(&self, native: &Native, _bytes: usize) {
        if let Ok(api) = api() {
            let ptr = ptr_of(native);
            let raw = if self.on_host {
                // SAFETY: `allocate` stored the original pointer just below `ptr`.
                unsafe { (ptr as *const usize).sub(1).read() as *mut c_void }
            } else {
                ptr.cast()
            };
            // SAFETY: `raw` came from omp_target_alloc on this device (caller's contract).
            unsafe { (api.free)(raw, self.device_number) };
        }
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, _native: &Native) -> HostAccess {
        self.host_access_default()
    }

    fn host_reach(&self) -> HostReach {
        if self.on_host {
            HostReach {
                access: HostAccess::Pointer,
                reason: " is the initial device: omp_target_alloc returns host memory",
            }
        } else {
            HostReach {
                access: HostAccess::None,
                reason: " is an offload device: its memory is not host-visible",
            }
        }
    }

    fn executes_on_host(&self) -> bool {
        self.on_host
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        // SAFETY: `offset` was bounds-checked by `Memory`.
        let target = unsafe { ptr_of(dst).add(offset) };
        let initial = self.initial_device;
        self.memcpy(
            "omp_target_memcpy",
            target,
            self.device_number,
            src.as_ptr(),
            initial,
            src.len(),
        )
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        // SAFETY: `offset` was bounds-checked by `Memory`.
        let source = unsafe { ptr_of(src).add(offset) };
        let initial = self.initial_device;
        self.memcpy(
            "omp_target_memcpy",
            dst.as_mut_ptr(),
            initial,
            source,
            self.device_number,
            dst.len(),
        )
    }

    fn copy_within(
        &self,
        src: &Native,
        src_offset: usize,
        dst: &Native,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        // SAFETY: offsets bounds-checked by `Memory`.
        let (s, d) = unsafe { (ptr_of(src).add(src_offset), ptr_of(dst).add(dst_offset)) };
        let n = self.device_number;
        self.memcpy("omp_target_memcpy", d, n, s, n, len)
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        let api = api().map_err(|e| self.unavailable(e.to_string()))?;
        // SAFETY: the range was bounds-checked; the pattern is mapped `to` the device.
        let rc = unsafe {
            (api.fill)(
                ptr_of(dst).cast(),
                offset,
                len,
                pattern.as_ptr(),
                pattern.len(),
                self.device_number,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::Backend {
                location: self.location,
                call: "target teams distribute parallel for (fill)",
                message: format!("returned {rc}"),
                hint: "check the OpenMP device".into(),
            })
        }
    }

    fn map(&self, native: &Native, offset: usize, _len: usize, _write: bool) -> Result<*mut u8> {
        if !self.on_host {
            return Err(Error::NotHostAccessible {
                location: self.location,
            });
        }
        // SAFETY: bounds checked by the caller; on the initial device this is a host address.
        Ok(unsafe { ptr_of(native).add(offset) })
    }

    unsafe fn unmap(&self, _native: &Native, _ptr: *mut u8) -> Result<()> {
        Ok(())
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        Ok(Native::OpenMp {
            // SAFETY: the sub-allocator keeps `offset + len` inside the parent.
            ptr: unsafe { ptr_of(parent).add(offset) },
            device: self.device_number,
        })
    }

    fn native_calls(&self) -> Option<&dyn NativeCalls> {
        Some(self)
    }

    fn host_memory_in_place(&self) -> Option<&dyn HostMemoryInPlace> {
        // A device that runs on the host takes host addresses as its device pointers.
        self.on_host.then_some(self)
    }

    fn kernels(&self) -> Option<&dyn Kernels> {
        Some(self)
    }

    fn rect_copies(&self) -> Option<&dyn crate::core::rect_copy::RectCopies> {
        Some(self)
    }
}

// `write`, `read` and `copy_within` are `omp_target_memcpy` itself.
native_calls_are_own!(OpenMpDevice, |_direction| "omp_target_memcpy");

impl HostMemoryInPlace for OpenMpDevice {
    unsafe fn use_host_memory(&self, ptr: *mut u8, _len: usize) -> Result<InPlace> {
        Ok(InPlace::Address(Native::OpenMp {
            ptr,
            device: self.device_number(),
        }))
    }
}

impl Kernels for OpenMpDevice {
    fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion> {
        self.launch_kernel(spec, args)
    }

    fn launch_after(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
        after: &dyn Dependencies,
    ) -> Result<Completion> {
        // Kernels run where they are called: every dependency is waited for first.
        launch_after_waiting(self, spec, args, after, |_| false)
    }

    fn max_launch_items(&self) -> u64 {
        u64::MAX
    }

    fn lacks_f64(&self) -> Option<String> {
        None
    }
}
