//! The WebGPU device's [`Device`] implementation: storage buffers, transfers through the
//! staging engine (or, on unified memory, through host views in place), fills and copies.

use super::*;

impl Device for WebGpuDevice {
    fn synchronize(&self) -> Result<()> {
        self.wait("Device::poll", None)
    }

    /// A wgpu buffer of another `wgpu::Device` is refused: wgpu checks a buffer's device
    /// in every command, and locus's commands run on its own device (the buffer read zeros,
    /// then a write panicked inside wgpu). Asked of wgpu with an empty copy from the
    /// buffer in a validation scope.
    fn check_adopted(&self, native: &Native) -> Result<()> {
        let Native::WebGpu { buffer, .. } = native else {
            return Ok(());
        };
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let probe = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("locus adoption probe"),
            size: 4,
            usage: wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("locus adoption probe"),
            });
        encoder.copy_buffer_to_buffer(buffer, 0, &probe, 0, 0);
        drop(encoder.finish());
        match pollster::block_on(scope.pop()) {
            Some(e) if e.to_string().contains("doesn't match") => Err(Error::Invalid(format!(
                "{}: cannot adopt the wgpu buffer: it belongs to another wgpu device than \
                 locus's `{}` (wgpu: {}); make it with locus's device \
                 (locus::backends::webgpu::WebGpuDevice::device), or copy its data through \
                 the host",
                self.location,
                self.info.name,
                e.to_string().lines().last().unwrap_or_default().trim()
            ))),
            // Anything else (a buffer without COPY_SRC) is not the device's question: the
            // operations that need the usage say so.
            _ => Ok(()),
        }
    }

    fn location(&self) -> Location {
        self.location
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        let size = (bytes as u64).div_ceil(4).max(1) * 4;
        if size > self.limits.max_buffer_size {
            return Err(Error::TooLarge {
                location: self.location,
                requested: bytes,
                max: self.info.max_allocation as usize,
            });
        }
        // Validation errors in this thread's scope, out-of-memory in an inner one.
        let buffer = self.scoped("create_buffer", || {
            let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
            let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("locus"),
                size,
                usage: self.storage_usage(),
                mapped_at_creation: false,
            });
            match pollster::block_on(scope.pop()) {
                Some(e) => Err(self.fail("create_buffer", e.to_string())),
                None => Ok(buffer),
            }
        })?;
        self.live.fetch_add(1, Ordering::Relaxed);
        Ok(Native::WebGpu {
            buffer: Arc::new(buffer),
            offset: 0,
        })
    }

    unsafe fn free(&self, native: &Native, _bytes: usize) {
        let (buffer, offset) = buffer_of(native);
        if offset == 0 {
            buffer.destroy();
        }
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, native: &Native) -> HostAccess {
        if self.mappable(native) {
            HostAccess::Mapped
        } else {
            HostAccess::None
        }
    }

    fn host_reach(&self) -> HostReach {
        HostReach::generic(if self.unified.is_some() {
            HostAccess::Mapped
        } else {
            HostAccess::None
        })
    }

    fn executes_on_host(&self) -> bool {
        false
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        if self.mappable(dst) {
            return self.in_view(dst, offset, |at| {
                // SAFETY: `at` is the host address of `src.len()` bytes of this buffer,
                // bounds-checked by Memory and mapped until `in_view` returns; `src` is
                // host memory outside any wgpu buffer's mapping of these bytes.
                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), at, src.len()) }
            });
        }
        let (buffer, base) = buffer_of(dst);
        self.staged("write (staged upload)", &self.upload, |staging| {
            staging.upload(self, buffer, base + offset as u64, src)
        })
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        if self.mappable(src) {
            return self.in_view(src, offset, |at| {
                // SAFETY: as in `write`, the other way.
                unsafe { std::ptr::copy_nonoverlapping(at, dst.as_mut_ptr(), dst.len()) }
            });
        }
        let (buffer, base) = buffer_of(src);
        self.read_raw(buffer, base + offset as u64, dst)
    }

    fn copy_within(
        &self,
        src: &Native,
        src_offset: usize,
        dst: &Native,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        if self.mappable(src) && self.mappable(dst) {
            return self.in_view(src, src_offset, |from| {
                self.in_view(dst, dst_offset, |to| {
                    // SAFETY: both are host addresses of `len` bytes of live buffers,
                    // mapped until the views end; `copy` allows the ranges to overlap
                    // (two blocks of one pool chunk, or one range moved within itself).
                    unsafe { std::ptr::copy(from, to, len) }
                })
            })?;
        }
        // copy_buffer_to_buffer needs 4-byte alignment (the handles' own offsets are
        // multiples of the storage offset alignment, so only these can break it).
        if !(src_offset | dst_offset | len).is_multiple_of(4) {
            let mut tmp = vec![0u8; len];
            self.read(src, src_offset, &mut tmp)?;
            return self.write(dst, dst_offset, &tmp);
        }
        let ((s, s0), (d, d0)) = (buffer_of(src), buffer_of(dst));
        self.scoped("copy_buffer_to_buffer", || {
            let index = self.copy_on_device(
                s,
                s0 + src_offset as u64,
                d,
                d0 + dst_offset as u64,
                len as u64,
            )?;
            self.wait("copy_buffer_to_buffer", Some(index))
        })
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        if self.mappable(dst) && !pattern.is_empty() {
            return self.in_view(dst, offset, |at| {
                // SAFETY: `at` is the host address of `len` bytes of this buffer, mapped
                // until `in_view` returns, and nothing else refers to them meanwhile.
                let bytes = unsafe { std::slice::from_raw_parts_mut(at, len) };
                for chunk in bytes.chunks_mut(pattern.len()) {
                    chunk.copy_from_slice(&pattern[..chunk.len()]);
                }
            });
        }
        if pattern.iter().all(|&b| b == 0) && (offset | len).is_multiple_of(4) {
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("locus clear"),
                });
            let (buffer, base) = buffer_of(dst);
            return self.scoped("clear_buffer", || {
                encoder.clear_buffer(buffer, base + offset as u64, Some(len as u64));
                let index = self.submit_on(&[buffer], || self.queue.submit([encoder.finish()]))?;
                self.wait("clear_buffer", Some(index))
            });
        }
        fill_by_writes(self, dst, offset, len, pattern)
    }

    fn map(&self, native: &Native, offset: usize, _len: usize, _write: bool) -> Result<*mut u8> {
        self.view(native, offset)
    }

    unsafe fn unmap(&self, native: &Native, _ptr: *mut u8) -> Result<()> {
        match &self.unified {
            Some(unified) => unified.unmap(self, buffer_of(native).0),
            None => Ok(()),
        }
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        let (buffer, base) = buffer_of(parent);
        Ok(Native::WebGpu {
            buffer: Arc::clone(buffer),
            offset: base + offset as u64,
        })
    }

    fn sub_alignment(&self) -> usize {
        (self.limits.min_storage_buffer_offset_alignment as usize)
            .max(crate::core::device::ALIGNMENT)
    }

    fn native_calls(&self) -> Option<&dyn NativeCalls> {
        Some(self)
    }

    fn queued_copies(&self) -> Option<&dyn QueuedCopies> {
        Some(self)
    }

    fn copy_batches(&self) -> Option<&dyn CopyBatches> {
        Some(self)
    }

    fn staging_views(&self) -> Option<&dyn StagingViews> {
        Some(self)
    }

    fn queue_adoption(&self) -> Option<&dyn QueueAdoption> {
        Some(self)
    }

    fn kernels(&self) -> Option<&dyn Kernels> {
        Some(self)
    }
}

impl QueuedCopies for WebGpuDevice {
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
        // A queued WebGPU copy is a submission with a completion of its own: dearer than
        // a waited one.
        false
    }
}

impl QueueAdoption for WebGpuDevice {
    fn adopt_queue(
        &self,
        native: &crate::core::native_queue::NativeQueue,
    ) -> Result<Arc<dyn crate::core::native_queue::ForeignQueue>> {
        use crate::core::native_queue::NativeQueue;
        match native {
            NativeQueue::WebGpu(queue) => Ok(Arc::new(self.adopt(queue)?)),
            other => Err(other.refused_at(self.location, "its device's wgpu queue")),
        }
    }

    fn native_queue(&self) -> Option<crate::core::native_queue::NativeQueue> {
        Some(crate::core::native_queue::NativeQueue::WebGpu(
            self.queue.clone(),
        ))
    }
}

impl StagingViews for WebGpuDevice {
    fn stage(
        &self,
        native: &Native,
        offset: usize,
        len: usize,
        way: StageWay,
    ) -> Option<Result<Box<dyn StagedView>>> {
        if !self.lends_staging(native) {
            return None;
        }
        let (buffer, base) = buffer_of(native);
        let at = base + offset as u64;
        // copy_buffer_to_buffer takes multiples of 4 only.
        if !at.is_multiple_of(4) || !len.is_multiple_of(4) || len == 0 {
            return None;
        }
        Some(self.scoped("stage (lent staging buffer)", || {
            staging_views::open(self, buffer, at, len as u64, way)
        }))
    }

    fn lends_staging(&self, native: &Native) -> bool {
        // On unified memory the host maps the storage buffer itself (one copy or none);
        // copy_buffer_to_buffer takes offsets that are multiples of 4 only.
        self.unified.is_none() && buffer_of(native).1.is_multiple_of(4)
    }
}

impl NativeCalls for WebGpuDevice {
    fn native_call(&self, native: &Native, direction: Direction) -> &'static str {
        self.native_call_name(native, direction)
    }

    fn native_write(&self, dst: &Native, src: &[u8]) -> Result<()> {
        self.native_write_impl(dst, src)
    }

    fn native_read(&self, src: &Native, dst: &mut [u8]) -> Result<()> {
        self.native_read_impl(src, dst)
    }

    fn native_copy_within(&self, src: &Native, dst: &Native, len: usize) -> Result<()> {
        self.native_copy_impl(src, dst, len)
    }
}

impl CopyBatches for WebGpuDevice {
    fn copy_batch(&self, copies: &mut [DeviceCopy<'_>]) -> Result<()> {
        self.copy_batch_impl(copies)
    }
}

impl Kernels for WebGpuDevice {
    fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion> {
        self.launch_kernel(spec, args)
    }

    fn launch_after(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
        after: &dyn Dependencies,
    ) -> Result<Completion> {
        // Dependencies are waited for on the host before the submission.
        launch_after_waiting(self, spec, args, after, |_| false)
    }

    fn max_launch_items(&self) -> u64 {
        u64::MAX
    }

    fn lacks_f64(&self) -> Option<String> {
        Some(format!(
            "{}: WGSL (WebGPU's shading language) has no f64",
            self.location()
        ))
    }
}
