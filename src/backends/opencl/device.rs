//! The OpenCL device's [`Device`] implementation: buffers (`clCreateBuffer`), reads,
//! writes, fills, maps and copies on its in-order queue.

use super::*;

impl Device for OpenClDevice {
    fn synchronize(&self) -> Result<()> {
        self.queue.finish().map_err(|e| self.fail("clFinish", e.0))
    }

    fn location(&self) -> Location {
        self.location
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        let flags = if self.host_unified {
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR
        } else {
            CL_MEM_READ_WRITE
        };
        // SAFETY: a valid context, no host pointer; OpenCL rejects size 0, so at least 1.
        let mem =
            unsafe { create_buffer(self.context.get(), flags, bytes.max(1), ptr::null_mut()) }
                .map_err(|code| self.fail("clCreateBuffer", code).asking_for(bytes))?;
        self.live.fetch_add(1, Ordering::Relaxed);
        super::remember_made(mem);
        Ok(Native::OpenCl { mem, offset: 0 })
    }

    unsafe fn free(&self, native: &Native, _bytes: usize) {
        let mem = mem_of(native).0;
        super::forget_made_by_locus(mem);
        // SAFETY: the caller guarantees this buffer came from `allocate` (or
        // `allocate_kind`) and is unused.
        let _ = unsafe { release_mem_object(mem) };
        // SAFETY: released just above; its SVM, if any, is used by nothing now.
        unsafe { self.forget_made(mem) };
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, native: &Native) -> HostAccess {
        match native {
            #[allow(unreachable_patterns)]
            Native::OpenCl { .. } if self.host_unified => HostAccess::Mapped,
            // Host-visible buffers and SVM map in place on any device.
            Native::OpenCl { mem, .. } if self.made_as(*mem).is_some() => HostAccess::Mapped,
            _ => HostAccess::None,
        }
    }

    fn host_reach(&self) -> HostReach {
        if self.host_unified {
            HostReach {
                access: HostAccess::Mapped,
                reason: " is host-unified: its buffers map in place, no copy",
            }
        } else {
            HostReach {
                access: HostAccess::None,
                reason: " is not host-unified: its buffers need a copy",
            }
        }
    }

    fn executes_on_host(&self) -> bool {
        false
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        let (mem, base) = mem_of(dst);
        // SAFETY: a blocking write from a live host slice into a bounds-checked range.
        let event = unsafe {
            enqueue_write_buffer(
                self.queue.get(),
                mem,
                CL_BLOCKING,
                base + offset,
                src.len(),
                src.as_ptr() as *const c_void,
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueWriteBuffer", code))?;
        self.finish_event("clEnqueueWriteBuffer", event)
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        let (mem, base) = mem_of(src);
        // SAFETY: a blocking read of a bounds-checked range into an exclusive host slice.
        let event = unsafe {
            enqueue_read_buffer(
                self.queue.get(),
                mem,
                CL_BLOCKING,
                base + offset,
                dst.len(),
                dst.as_mut_ptr() as *mut c_void,
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueReadBuffer", code))?;
        self.finish_event("clEnqueueReadBuffer", event)
    }

    fn copy_within(
        &self,
        src: &Native,
        src_offset: usize,
        dst: &Native,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        let ((s, s_base), (d, d_base)) = (mem_of(src), mem_of(dst));
        // SAFETY: both buffers belong to this context; ranges checked and not overlapping.
        let event = unsafe {
            enqueue_copy_buffer(
                self.queue.get(),
                s,
                d,
                s_base + src_offset,
                d_base + dst_offset,
                len,
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueCopyBuffer", code))?;
        self.finish_event("clEnqueueCopyBuffer", event)
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        let native_size = matches!(pattern.len(), 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128);
        if !native_size || !offset.is_multiple_of(pattern.len()) {
            return fill_by_writes(self, dst, offset, len, pattern);
        }
        let (mem, base) = mem_of(dst);
        // SAFETY: the pattern outlives the (waited-for) command; range checked.
        let event = unsafe {
            enqueue_fill_buffer(
                self.queue.get(),
                mem,
                pattern.as_ptr() as *const c_void,
                pattern.len(),
                base + offset,
                len,
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueFillBuffer", code))?;
        self.finish_event("clEnqueueFillBuffer", event)
    }

    fn map(&self, native: &Native, offset: usize, _len: usize, _write: bool) -> Result<*mut u8> {
        let (mem, base) = mem_of(native);
        // The buffer's one mapping, whole and for reading and writing (see `mappings`):
        // a range of it is an address inside.
        let host = self.mappings.acquire(mem, || {
            let size = cl3::memory::get_mem_object_info(mem, CL_MEM_SIZE)
                .map_err(|code| self.fail("clGetMemObjectInfo(CL_MEM_SIZE)", code))?
                .to_size();
            let mut host: cl_mem = ptr::null_mut();
            // SAFETY: a blocking map of the whole of a live buffer, made by this device.
            let event = unsafe {
                enqueue_map_buffer(
                    self.queue.get(),
                    mem,
                    CL_BLOCKING,
                    CL_MAP_READ | CL_MAP_WRITE,
                    0,
                    size,
                    &mut host,
                    0,
                    ptr::null(),
                )
            }
            .map_err(|code| self.fail("clEnqueueMapBuffer", code))?;
            self.finish_event("clEnqueueMapBuffer", event)?;
            Ok(host.cast())
        })?;
        // SAFETY: `base + offset` is inside the buffer (the range was bounds-checked), so
        // inside its mapping.
        Ok(unsafe { host.add(base + offset) })
    }

    unsafe fn unmap(&self, native: &Native, _ptr: *mut u8) -> Result<()> {
        let mem = mem_of(native).0;
        let unmap = |host: *mut u8| {
            // SAFETY: `host` is the buffer's mapping from `map`, whose last user is done.
            let event = unsafe {
                enqueue_unmap_mem_object(self.queue.get(), mem, host.cast(), 0, ptr::null())
            }
            .map_err(|code| self.fail("clEnqueueUnmapMemObject", code))?;
            self.finish_event("clEnqueueUnmapMemObject", event)
        };
        self.mappings.release(mem, unmap).unwrap_or_else(|| {
            Err(Error::Invalid(format!(
                "{}: unmap of a buffer with no open mapping (a bug: please report it)",
                self.location
            )))
        })
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        // An offset into the parent buffer: no OpenCL object per block (a sub-buffer
        // is made only when a kernel takes the range as an argument).
        let (mem, base) = mem_of(parent);
        Ok(Native::OpenCl {
            mem,
            offset: base + offset,
        })
    }

    fn sub_alignment(&self) -> usize {
        let bits = self.device.mem_base_addr_align().unwrap_or(1024) as usize;
        (bits / 8).max(crate::core::device::ALIGNMENT)
    }

    fn native_calls(&self) -> Option<&dyn NativeCalls> {
        Some(self)
    }

    fn queued_copies(&self) -> Option<&dyn QueuedCopies> {
        Some(self)
    }

    fn rect_copies(&self) -> Option<&dyn crate::core::rect_copy::RectCopies> {
        Some(self)
    }

    fn kinds(&self) -> Option<&dyn MemoryKinds> {
        Some(self)
    }

    fn host_memory_in_place(&self) -> Option<&dyn HostMemoryInPlace> {
        // A CPU device's `CL_MEM_USE_HOST_PTR` buffer is the host memory itself (its
        // kernels and copies run in this process on those pages); a GPU's may be a
        // cached copy, so nothing is offered there.
        (self.info.kind == "cpu").then_some(self)
    }

    fn queue_adoption(&self) -> Option<&dyn QueueAdoption> {
        Some(self)
    }

    fn kernels(&self) -> Option<&dyn Kernels> {
        Some(self)
    }
}

impl QueuedCopies for OpenClDevice {
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
        // An enqueue on the in-order queue; the synchronous copy also waits for it.
        true
    }
}

impl QueueAdoption for OpenClDevice {
    fn adopt_queue(
        &self,
        native: &crate::core::native_queue::NativeQueue,
    ) -> Result<Arc<dyn crate::core::native_queue::ForeignQueue>> {
        use crate::core::native_queue::NativeQueue;
        match native {
            // SAFETY: `Queue::from_native`'s contract: a live `cl_command_queue`.
            NativeQueue::OpenCl(queue) => Ok(Arc::new(unsafe { self.adopt(queue.cast()) }?)),
            other => Err(other.refused_at(self.location, "OpenCL command queues")),
        }
    }

    fn native_queue(&self) -> Option<crate::core::native_queue::NativeQueue> {
        Some(crate::core::native_queue::NativeQueue::OpenCl(
            self.queue.get().cast(),
        ))
    }
}

impl MemoryKinds for OpenClDevice {
    fn memory_kinds(&self) -> Vec<MemoryKind> {
        self.offered_kinds()
    }

    fn allocate_kind(&self, bytes: usize, kind: MemoryKind) -> Result<Native> {
        match kind {
            MemoryKind::Default => self.allocate(bytes),
            other => self.allocate_made(bytes, other),
        }
    }
}

// `write`, `read` and `copy_within` are the blocking calls a user writes.
native_calls_are_own!(OpenClDevice, |direction| match direction {
    Direction::HostToDevice => "clEnqueueWriteBuffer",
    Direction::DeviceToHost => "clEnqueueReadBuffer",
    Direction::WithinDevice => "clEnqueueCopyBuffer",
});

impl Kernels for OpenClDevice {
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
        let extensions = self.device.extensions().unwrap_or_default();
        (!extensions.contains("cl_khr_fp64")).then(|| {
            format!(
                "{} ({}) does not report cl_khr_fp64 (64-bit floats)",
                self.location, self.info.name
            )
        })
    }
}

impl HostMemoryInPlace for OpenClDevice {
    unsafe fn use_host_memory(&self, ptr: *mut u8, len: usize) -> Result<InPlace> {
        // SAFETY: the caller keeps `len` bytes at `ptr` valid until the buffer is freed;
        // OpenCL rejects size 0, so at least 1 (an empty range is not shared).
        let made = unsafe {
            create_buffer(
                self.context.get(),
                CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                len.max(1),
                ptr.cast(),
            )
        };
        made.map(|mem| {
            self.live.fetch_add(1, Ordering::Relaxed);
            super::remember_made(mem);
            InPlace::Object(Native::OpenCl { mem, offset: 0 })
        })
        .map_err(|code| self.fail("clCreateBuffer (CL_MEM_USE_HOST_PTR)", code))
    }
}
