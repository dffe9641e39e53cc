//! The [`Device`] implementation CUDA and HIP share, over [`GpuApi`].

use super::*;

impl<A: GpuApi> Device for GpuDevice<A> {
    fn make_current(&self) -> Result<()> {
        // Left current, unlike locus's own calls (`activate`): what comes next on this
        // thread is a call that needs it (an MPI library asking the driver about a
        // device pointer), not locus's.
        self.api
            .activate(self.ordinal)
            .map_err(|e| self.fail("set device", e))
    }

    fn synchronize(&self) -> Result<()> {
        // This device's stream, whichever device the calling thread used last.
        let _current = self.activate()?;
        self.api
            .synchronize()
            .map_err(|e| self.fail("synchronize", e))
    }

    fn location(&self) -> Location {
        self.location
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        self.alloc(GpuMemory::Device, bytes)
    }

    unsafe fn free(&self, native: &Native, _bytes: usize) {
        // At the process's end the driver may be shutting down (its own atexit work):
        // the memory goes with the process.
        if crate::core::shutdown::is_shutting_down() {
            self.live.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        if let (Ok(_current), Some((ptr, kind))) = (self.activate(), A::unpack(native)) {
            // SAFETY: per the caller's contract.
            unsafe { self.api.free(kind, ptr) };
        }
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, native: &Native) -> HostAccess {
        match A::unpack(native) {
            Some((_, GpuMemory::Pinned)) => HostAccess::Pointer,
            Some((_, GpuMemory::Managed)) if self.concurrent_managed => HostAccess::Pointer,
            _ => HostAccess::None,
        }
    }

    fn host_reach(&self) -> HostReach {
        HostReach {
            access: HostAccess::None,
            reason: if self.concurrent_managed {
                " device memory is not host-visible (its pinned memory is, and so is its managed memory)"
            } else {
                " device memory is not host-visible (its pinned memory is)"
            },
        }
    }

    fn executes_on_host(&self) -> bool {
        false
    }

    fn accessibility_of(
        &self,
        owner: &dyn Device,
        native: Option<&Native>,
        host: HostAccess,
    ) -> Option<(bool, String)> {
        let Some(other) = (owner as &dyn Any).downcast_ref::<GpuDevice<A>>() else {
            // Memory of another technology with a host address (host memory, OpenMP's
            // initial device, a CPU's USM): in place where the device says its kernels
            // reach any host page (HMM, ATS), else the default answer (a copy).
            return (self.pageable_access && host == HostAccess::Pointer).then(|| {
                (
                    true,
                    format!(
                        "{} has pageable memory access (HMM / ATS): its kernels use {} memory in place",
                        self.location,
                        owner.location()
                    ),
                )
            });
        };
        let pool = native
            .and_then(A::unpack)
            .is_some_and(|(_, kind)| kind == GpuMemory::StreamOrdered);
        if pool && other.ordinal != self.ordinal {
            // Peer access covers memory from `cuMemAlloc`, not from the device's
            // stream-ordered pool, whose own access list (`cuMemPoolSetAccess`) names
            // only its device: a kernel here would fault on it.
            return Some((
                false,
                format!(
                    "{}'s stream-ordered pool memory is reachable from its device only (peer access does not cover the pool)",
                    other.location
                ),
            ));
        }
        (other.ordinal != self.ordinal && self.peer_enabled(other.ordinal)).then(|| {
            (
                true,
                format!(
                    "peer access from {} to {} is enabled",
                    self.location, other.location
                ),
            )
        })
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        let (ptr, _) = self.ptr(dst)?;
        self.upload(ptr + offset as u64, src, false)
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        let (ptr, _) = self.ptr(src)?;
        self.download(dst, ptr + offset as u64, false)
    }

    fn copy_within(
        &self,
        src: &Native,
        so: usize,
        dst: &Native,
        d: usize,
        len: usize,
    ) -> Result<()> {
        let ((s, _), (t, _)) = (self.ptr(src)?, self.ptr(dst)?);
        let _current = self.activate()?;
        // SAFETY: both ranges were bounds-checked and do not overlap.
        unsafe { self.api.on_device(t + d as u64, s + so as u64, len, true) }
            .map_err(|e| self.fail("copy on device", e))
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        if pattern.iter().all(|&b| b == pattern[0]) {
            let (ptr, _) = self.ptr(dst)?;
            let _current = self.activate()?;
            // SAFETY: the range was bounds-checked; the memset is waited for.
            return unsafe { self.api.memset(ptr + offset as u64, pattern[0], len, true) }
                .map_err(|e| self.fail("memset", e));
        }
        fill_by_writes(self, dst, offset, len, pattern)
    }

    fn map(&self, native: &Native, offset: usize, _len: usize, _write: bool) -> Result<*mut u8> {
        if self.host_access(native) == HostAccess::None {
            return Err(Error::NotHostAccessible {
                location: self.location,
            });
        }
        let _current = self.activate()?;
        // Kernels may still write managed or pinned memory: finish them first.
        self.api
            .synchronize()
            .map_err(|e| self.fail("synchronize", e))?;
        let (ptr, _) = self.ptr(native)?;
        Ok((ptr + offset as u64) as *mut u8)
    }

    unsafe fn unmap(&self, _native: &Native, _ptr: *mut u8) -> Result<()> {
        Ok(())
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        let (ptr, kind) = self.ptr(parent)?;
        Ok(A::native(ptr + offset as u64, kind))
    }

    fn native_calls(&self) -> Option<&dyn NativeCalls> {
        Some(self)
    }

    fn queued_copies(&self) -> Option<&dyn QueuedCopies> {
        Some(self)
    }

    fn copy_batches(&self) -> Option<&dyn CopyBatches> {
        self.api.has_copy_batch().then_some(self)
    }

    fn rect_copies(&self) -> Option<&dyn crate::core::rect_copy::RectCopies> {
        A::RECT_CALL.map(|_| self as &dyn crate::core::rect_copy::RectCopies)
    }

    fn ipc_handles(&self) -> Option<&dyn IpcHandles> {
        Some(self)
    }

    fn host_registration(&self) -> Option<&dyn HostMemoryRegistration> {
        Some(self)
    }

    fn placement(&self) -> Option<&dyn Placement> {
        Some(self)
    }

    fn memory_report(&self) -> Option<&dyn MemoryReport> {
        Some(self)
    }

    fn kinds(&self) -> Option<&dyn MemoryKinds> {
        Some(self)
    }

    fn queue_adoption(&self) -> Option<&dyn QueueAdoption> {
        Some(self)
    }

    fn kernels(&self) -> Option<&dyn Kernels> {
        Some(self)
    }

    fn pointer_queries(&self) -> Option<&dyn PointerQueries> {
        Some(self)
    }
}

impl<A: GpuApi> QueuedCopies for GpuDevice<A> {
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
        // An async copy on locus's stream; the synchronous copy also synchronizes it.
        true
    }
}

impl<A: GpuApi> HostMemoryRegistration for GpuDevice<A> {
    unsafe fn register_host(
        &self,
        ptr: *mut u8,
        len: usize,
    ) -> Result<crate::core::registration::HostRegistration> {
        {
            let _current = self.activate()?;
            // SAFETY: per the caller's contract, `ptr` stays valid for `len` bytes until
            // the registration returned below is dropped, which unregisters it.
            unsafe { self.api.host_register(ptr, len) }
                .map_err(|e| self.fail("register host memory in place", e))?;
        }
        let (api, ordinal, at) = (Arc::clone(&self.api), self.ordinal, ptr as usize);
        let registration =
            crate::core::registration::HostRegistration::new(self.location, move || {
                if crate::core::shutdown::is_shutting_down() {
                    return; // the registration ends with the process
                }
                if let Ok(_current) = api.enter(ordinal) {
                    // SAFETY: registered above; the memory's owner drops the
                    // registration before the memory, once its copies are done.
                    let _ = unsafe { api.host_unregister(at as *mut u8) };
                }
            });
        // In the address index while it lives: `lookup` names it, and batches ask it.
        Ok(registration.entered(at as u64, len))
    }
}

impl<A: GpuApi> Placement for GpuDevice<A> {
    fn prefer_location(
        &self,
        memory: &Native,
        offset: usize,
        len: usize,
        here: bool,
    ) -> Result<()> {
        let address = match A::unpack(memory) {
            Some((ptr, GpuMemory::Managed)) => ptr,
            Some(_) => {
                return Err(Error::Invalid(format!(
                    "{}: a preferred location is for memory paged in on use (managed or system-allocated memory), not {memory:?}",
                    self.location
                )))
            }
            // System-allocated memory: a host address this device pages in.
            None if self.pageable_access => memory.address(),
            None => {
                return Err(Error::Invalid(format!(
                    "{}: no pageable memory access (HMM / ATS) here, so host memory stays the host's; allocate managed memory to page it in",
                    self.location
                )))
            }
        };
        let _current = self.activate()?;
        self.api
            .prefer_location(address + offset as u64, len, here.then_some(self.ordinal))
            .map_err(|e| self.fail("memory advice", e))
    }
}

impl<A: GpuApi> MemoryReport for GpuDevice<A> {
    fn available_memory(&self) -> Result<(u64, u64)> {
        let _current = self.activate()?;
        self.api
            .memory_info()
            .map_err(|e| self.fail("memory info", e))
    }
}

impl<A: GpuApi> PointerQueries for GpuDevice<A> {
    fn query_pointer(&self, address: u64) -> Result<Option<DriverAllocation>> {
        let _current = self.activate()?;
        let found = self
            .api
            .pointer_range(address)
            .map_err(|e| self.fail("ask the driver about a pointer", e))?;
        Ok(found.map(|p| DriverAllocation {
            // As locus's own: page-locked host memory is a memory of the device whose
            // context allocated or registered it, of kind `PinnedHost`.
            location: A::TECHNOLOGY.location(p.ordinal),
            range: Some((p.base, p.len)),
            kind: p.memory.memory_kind(),
        }))
    }
}

impl<A: GpuApi> MemoryKinds for GpuDevice<A> {
    fn memory_kinds(&self) -> Vec<MemoryKind> {
        let mut kinds = vec![
            MemoryKind::Default,
            MemoryKind::PinnedHost,
            MemoryKind::Managed,
        ];
        if self.stream_ordered_pools {
            kinds.push(MemoryKind::StreamOrdered);
        }
        kinds
    }

    fn allocate_kind(&self, bytes: usize, kind: MemoryKind) -> Result<Native> {
        match kind {
            MemoryKind::Default => self.alloc(GpuMemory::Device, bytes),
            MemoryKind::PinnedHost => self.alloc(GpuMemory::Pinned, bytes),
            MemoryKind::Managed => self.alloc(GpuMemory::Managed, bytes),
            MemoryKind::StreamOrdered if self.stream_ordered_pools => {
                self.alloc(GpuMemory::StreamOrdered, bytes)
            }
            other => Err(unsupported_kind(self.location, other, &self.memory_kinds())),
        }
    }
}

impl<A: GpuApi> NativeCalls for GpuDevice<A> {
    fn native_call(&self, _native: &Native, direction: Direction) -> &'static str {
        let [write, read, within] = A::NATIVE_CALLS;
        match direction {
            Direction::HostToDevice => write,
            Direction::DeviceToHost => read,
            Direction::WithinDevice => within,
        }
    }

    fn native_write(&self, dst: &Native, src: &[u8]) -> Result<()> {
        let (ptr, _) = self.ptr(dst)?;
        self.native_or(Direction::HostToDevice, ptr, src.as_ptr() as u64, src.len())
            .unwrap_or_else(|| self.write(dst, 0, src))
    }

    fn native_read(&self, src: &Native, dst: &mut [u8]) -> Result<()> {
        let (ptr, _) = self.ptr(src)?;
        self.native_or(
            Direction::DeviceToHost,
            dst.as_mut_ptr() as u64,
            ptr,
            dst.len(),
        )
        .unwrap_or_else(|| self.read(src, 0, dst))
    }

    fn native_copy_within(&self, src: &Native, dst: &Native, len: usize) -> Result<()> {
        let ((s, _), (d, _)) = (self.ptr(src)?, self.ptr(dst)?);
        self.native_or(Direction::WithinDevice, d, s, len)
            .unwrap_or_else(|| self.copy_within(src, 0, dst, 0, len))
    }
}

impl<A: GpuApi> IpcHandles for GpuDevice<A> {
    fn ipc_granularity(&self) -> usize {
        super::ipc::IPC_GRANULARITY
    }

    fn ipc_export(&self, native: &Native) -> Result<Vec<u8>> {
        self.ipc_export_impl(native)
    }

    unsafe fn ipc_open(&self, handle: &[u8]) -> Result<Native> {
        // SAFETY: forwarded.
        unsafe { self.ipc_open_impl(handle) }
    }

    unsafe fn ipc_close(&self, native: &Native) {
        // SAFETY: forwarded.
        unsafe { self.ipc_close_impl(native) }
    }
}

impl<A: GpuApi> GpuDevice<A> {
    /// The indices of the copies whose host side is registered host memory that this
    /// device's batch may not name by its host address
    /// ([`GpuApi::batch_takes_registered_host`]): they run on their own.
    fn runs_outside_batches(&self, copies: &[DeviceCopy<'_>]) -> Vec<usize> {
        if self.api.batch_takes_registered_host(self.ordinal) {
            return Vec::new();
        }
        let inside = |p: usize, n: usize| {
            crate::core::address_index::registered_by(p as u64, n, A::TECHNOLOGY)
        };
        copies
            .iter()
            .enumerate()
            .filter(|(_, c)| match c {
                DeviceCopy::Write { src, .. } => inside(src.as_ptr() as usize, src.len()),
                DeviceCopy::Read { dst, .. } => inside(dst.as_ptr() as usize, dst.len()),
                DeviceCopy::Within { .. } => false,
            })
            .map(|(i, _)| i)
            .collect()
    }
}

impl<A: GpuApi> CopyBatches for GpuDevice<A> {
    fn copy_batch(&self, copies: &mut [DeviceCopy<'_>]) -> Result<()> {
        if !self.api.has_copy_batch() {
            return copies.iter_mut().try_for_each(|c| c.run_alone(self));
        }
        let alone = self.runs_outside_batches(copies);
        let _current = self.activate()?;
        // Each copy for the driver with its index in `copies` (empty copies are not
        // handed to the driver); small reads into pageable memory through staging.
        let mut ranges = Vec::with_capacity(copies.len());
        let mut staged = Vec::new();
        for (i, c) in copies.iter_mut().enumerate().filter(|(_, c)| !c.is_empty()) {
            if alone.contains(&i) {
                c.run_alone(self)?;
                continue;
            }
            if matches!(c, DeviceCopy::Read { dst, .. } if self.stages_batch_read(dst)) {
                if let DeviceCopy::Read { src, offset, dst } = c {
                    staged.push((self.ptr(src)?.0 + *offset as u64, &mut **dst, i));
                }
                continue;
            }
            let range = match c {
                DeviceCopy::Write { dst, offset, src } => (
                    self.ptr(dst)?.0 + *offset as u64,
                    src.as_ptr() as u64,
                    src.len(),
                ),
                DeviceCopy::Read { src, offset, dst } => (
                    dst.as_mut_ptr() as u64,
                    self.ptr(src)?.0 + *offset as u64,
                    dst.len(),
                ),
                DeviceCopy::Within {
                    src,
                    src_offset,
                    dst,
                    dst_offset,
                    len,
                } => (
                    self.ptr(dst)?.0 + *dst_offset as u64,
                    self.ptr(src)?.0 + *src_offset as u64,
                    *len,
                ),
            };
            ranges.push((range, i));
        }
        self.run_batch(ranges, staged)
    }
}

impl<A: GpuApi> Kernels for GpuDevice<A> {
    fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion> {
        self.launch_kernel(spec, args)
    }

    fn max_launch_items(&self) -> u64 {
        self.api.max_items_x()
    }

    fn launch_after(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
        after: &dyn Dependencies,
    ) -> Result<Completion> {
        // Work on this device's own stream (the stream is in order): launches after it
        // are queued behind it, with no host wait.
        launch_after_waiting(self, spec, args, after, |work| self.stream_ordered(work))
    }

    fn lacks_f64(&self) -> Option<String> {
        None
    }
}

impl<A: GpuApi> QueueAdoption for GpuDevice<A> {
    fn adopt_queue(
        &self,
        native: &crate::core::native_queue::NativeQueue,
    ) -> Result<Arc<dyn crate::core::native_queue::ForeignQueue>> {
        use crate::core::native_queue::NativeQueue;
        match (native, A::TECHNOLOGY) {
            (NativeQueue::Cuda { stream, ordinal }, Technology::Cuda)
            | (NativeQueue::Hip { stream, ordinal }, Technology::Hip) => {
                Ok(Arc::new(self.adopt(native, *stream, *ordinal)?))
            }
            (other, technology) => {
                Err(other.refused_at(self.location, &format!("{} streams", technology.name())))
            }
        }
    }

    fn native_queue(&self) -> Option<crate::core::native_queue::NativeQueue> {
        let stream = self.api.stream_handle(self.ordinal);
        crate::core::native_queue::NativeQueue::from_raw(self.location, stream)
    }
}

impl<A: GpuApi> GpuDevice<A> {
    /// [`GpuApi::native_copy`] on this device, made current; `None` where the backend's
    /// own copy is the native call.
    fn native_or(&self, direction: Direction, dst: u64, src: u64, n: usize) -> Option<Result<()>> {
        // Held to the end: the caller's context is put back after the copy, not before.
        let _current = match self.activate() {
            Ok(current) => current,
            Err(e) => return Some(Err(e)),
        };
        // SAFETY: `Memory` checked both ranges (device pointers of this device, or a live
        // host slice the caller borrowed), and distinct allocations do not overlap.
        let done = unsafe { self.api.native_copy(direction, dst, src, n) }?;
        Some(done.map_err(|e| self.fail("native transfer", e)))
    }
}
