//! The SYCL device's [`Device`] implementation: USM allocations, reads, writes,
//! fills and copies through its queue.

use super::*;

impl Device for SyclDevice {
    fn synchronize(&self) -> Result<()> {
        // SAFETY: the queue is owned by this device and alive.
        unsafe { self.api.DPCTLQueue_Wait(self.queue) };
        Ok(())
    }

    fn location(&self) -> Location {
        self.location
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        self.allocate_usm(bytes, UsmKind::Device)
    }

    unsafe fn free(&self, native: &Native, _bytes: usize) {
        // SAFETY: USM from this queue's context, not in use (caller's contract).
        unsafe {
            self.api
                .DPCTLfree_with_queue(usm_of(native).0.cast(), self.queue)
        };
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, native: &Native) -> HostAccess {
        match usm_of(native).1 {
            UsmKind::Shared | UsmKind::Host => HostAccess::Pointer,
            UsmKind::Device if self.cpu => HostAccess::Pointer,
            UsmKind::Device => HostAccess::None,
        }
    }

    fn host_reach(&self) -> HostReach {
        if self.cpu {
            HostReach {
                access: HostAccess::Pointer,
                reason: " is a CPU device: its USM (device, shared, host) has host addresses",
            }
        } else {
            HostReach {
                access: HostAccess::None,
                reason: ": device USM is not host-visible (shared and host USM are)",
            }
        }
    }

    fn executes_on_host(&self) -> bool {
        // With system USM, kernels dereference ordinary host pointers.
        self.system_usm
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        // SAFETY: offset bounds-checked by `Memory`.
        let target = unsafe { usm_of(dst).0.add(offset) };
        self.memcpy(target, src.as_ptr(), src.len())
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        // SAFETY: offset bounds-checked by `Memory`.
        let source = unsafe { usm_of(src).0.add(offset) };
        self.memcpy(dst.as_mut_ptr(), source, dst.len())
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
        let (s, d) = unsafe { (usm_of(src).0.add(src_offset), usm_of(dst).0.add(dst_offset)) };
        self.memcpy(d, s, len)
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        // SAFETY: offset bounds-checked by `Memory`.
        let base = unsafe { usm_of(dst).0.add(offset) };
        // SAFETY: the range is this device's USM, bounds-checked, and `len` is a multiple
        // of the pattern (checked by `Memory::fill`); the fill is waited for.
        match unsafe { result::fill(self.api, self.queue, base, len, pattern) } {
            Some(event) => self.finish(event, "check the device's USM allocation"),
            None => fill_by_writes(self, dst, offset, len, pattern),
        }
    }

    fn map(&self, native: &Native, offset: usize, _len: usize, _write: bool) -> Result<*mut u8> {
        if self.host_access(native) == HostAccess::None {
            return Err(Error::NotHostAccessible {
                location: self.location,
            });
        }
        // SAFETY: bounds checked by the caller; the memory has a host address.
        Ok(unsafe { usm_of(native).0.add(offset) })
    }

    unsafe fn unmap(&self, _native: &Native, _ptr: *mut u8) -> Result<()> {
        Ok(())
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        let (ptr, kind) = usm_of(parent);
        Ok(Native::Sycl {
            // SAFETY: the sub-allocator keeps `offset + len` inside the parent.
            ptr: unsafe { ptr.add(offset) },
            kind,
        })
    }

    fn native_calls(&self) -> Option<&dyn NativeCalls> {
        Some(self)
    }

    fn queued_copies(&self) -> Option<&dyn QueuedCopies> {
        Some(self)
    }

    fn kinds(&self) -> Option<&dyn MemoryKinds> {
        Some(self)
    }

    fn prefetcher(&self) -> Option<&dyn crate::core::capability::Prefetch> {
        Some(self)
    }

    fn pointer_queries(&self) -> Option<&dyn PointerQueries> {
        Some(self)
    }

    fn host_memory_in_place(&self) -> Option<&dyn HostMemoryInPlace> {
        // With system USM, plain host memory is this device's in place: its copies take
        // host pointers and its kernels dereference them.
        self.system_usm.then_some(self)
    }

    fn queue_adoption(&self) -> Option<&dyn QueueAdoption> {
        Some(self)
    }

    fn kernels(&self) -> Option<&dyn Kernels> {
        Some(self)
    }
}

impl QueuedCopies for SyclDevice {
    fn copy_async(
        &self,
        src: &Memory,
        dst: &Memory,
        span: CopySpan,
        after: &dyn Dependencies,
    ) -> Result<Option<Completion>> {
        self.start_copy(src, dst, span, after)
    }

    fn queues_copies_cheaply(&self) -> bool {
        // A queued SYCL copy carries an event of its own: dearer than a waited one.
        false
    }
}

impl QueueAdoption for SyclDevice {
    fn adopt_queue(
        &self,
        native: &crate::core::native_queue::NativeQueue,
    ) -> Result<Arc<dyn crate::core::native_queue::ForeignQueue>> {
        use crate::core::native_queue::NativeQueue;
        match native {
            // SAFETY: `Queue::from_native`'s contract: a live `DPCTLSyclQueueRef`.
            NativeQueue::Sycl(queue) => Ok(Arc::new(unsafe { self.adopt(queue.cast()) }?)),
            other => Err(other.refused_at(self.location, "SYCL queues")),
        }
    }

    fn native_queue(&self) -> Option<crate::core::native_queue::NativeQueue> {
        Some(crate::core::native_queue::NativeQueue::Sycl(
            self.queue.cast(),
        ))
    }
}

impl MemoryKinds for SyclDevice {
    fn memory_kinds(&self) -> Vec<MemoryKind> {
        let mut kinds = vec![MemoryKind::Default];
        for (usm, kind) in [
            (UsmKind::Device, MemoryKind::UsmDevice),
            (UsmKind::Shared, MemoryKind::UsmShared),
            (UsmKind::Host, MemoryKind::UsmHost),
        ] {
            if self.supports(usm) {
                kinds.push(kind);
            }
        }
        kinds
    }

    fn allocate_kind(&self, bytes: usize, kind: MemoryKind) -> Result<Native> {
        let usm = match kind {
            MemoryKind::Default | MemoryKind::UsmDevice => UsmKind::Device,
            MemoryKind::UsmShared => UsmKind::Shared,
            MemoryKind::UsmHost => UsmKind::Host,
            other => return Err(unsupported_kind(self.location, other, &self.memory_kinds())),
        };
        if !self.supports(usm) {
            return Err(unsupported_kind(self.location, kind, &self.memory_kinds()));
        }
        self.allocate_usm(bytes, usm)
    }
}

// `write`, `read` and `copy_within` are one `DPCTLQueue_Memcpy` waited for.
native_calls_are_own!(SyclDevice, |_direction| "DPCTLQueue_Memcpy");

impl Kernels for SyclDevice {
    fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion> {
        self.launch_kernel(spec, args, &NoDependencies)
    }

    fn launch_after(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
        after: &dyn Dependencies,
    ) -> Result<Completion> {
        self.launch_kernel(spec, args, after)
    }

    fn max_launch_items(&self) -> u64 {
        u64::MAX
    }

    fn lacks_f64(&self) -> Option<String> {
        None
    }
}

impl HostMemoryInPlace for SyclDevice {
    unsafe fn use_host_memory(&self, ptr: *mut u8, _len: usize) -> Result<InPlace> {
        // Host USM is the kind whose accessibility matches (the host and the device, in
        // place).
        Ok(InPlace::Address(Native::Sycl {
            ptr,
            kind: UsmKind::Host,
        }))
    }
}

impl PointerQueries for SyclDevice {
    /// USM of this device's context (an application's dpctl or dpnp arrays where they
    /// share the platform's default context, as dpctl's queues do by default): its kind
    /// from `DPCTLUSM_GetPointerType`, its device from `DPCTLUSM_GetPointerDevice`. SYCL
    /// gives no allocation range.
    fn query_pointer(&self, address: u64) -> Result<Option<DriverAllocation>> {
        let Some(kind) = self.pointer_kind(address as *const u8) else {
            return Ok(None);
        };
        // SAFETY: the query only inspects the address against the context's allocations
        // (it is USM of the context, just checked); the device reference returned is
        // owned here and deleted.
        let this_device = unsafe {
            let device = self
                .api
                .DPCTLUSM_GetPointerDevice(address as DPCTLSyclUSMRef, self.context);
            let same = !device.is_null() && self.api.DPCTLDevice_AreEq(device, self.device);
            if !device.is_null() {
                self.api.DPCTLDevice_Delete(device);
            }
            same
        };
        // Host USM belongs to the context rather than a device: the first location of
        // the context asked answers for it.
        Ok(
            (this_device || kind == UsmKind::Host).then(|| DriverAllocation {
                location: self.location,
                range: None,
                kind: kind.memory_kind(),
            }),
        )
    }
}
