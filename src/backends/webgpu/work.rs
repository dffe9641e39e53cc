//! WebGPU's queued work: [`WgpuWork`] (a submission on the device's queue) and the
//! native asynchronous copies that make it (`copy_buffer_to_buffer`, small uploads).

use super::*;

/// A wgpu submission: the WebGPU backend's own queued work. Submissions on one device's
/// queue run in order, so later locus work there needs no host wait.
pub struct WgpuWork {
    pub(super) device: wgpu::Device,
    /// The device's location.
    pub(super) location: Location,
    pub(super) index: wgpu::SubmissionIndex,
    /// Set by the queue's work-done callback (for polling without a wait); kernels have
    /// none and report done only once waited for.
    pub(super) done: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl NativeWork for WgpuWork {
    fn poll(&self) -> bool {
        match &self.done {
            Some(done) => {
                let _ = self.device.poll(wgpu::PollType::Poll);
                done.load(std::sync::atomic::Ordering::Acquire)
            }
            None => false,
        }
    }

    fn block(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(self.index.clone()),
                timeout: None,
            })
            .map(|_| ())
            .map_err(|e| Error::Invalid(format!("waiting for a WebGPU submission: {e}")))
    }

    fn is_queue_ordered(&self) -> bool {
        true
    }
}

/// Uploads up to this size from host memory run natively through `Queue::write_buffer`
/// (one submission, ordered on the device's queue); larger ones take the staged engine on
/// a worker thread, which is faster for large data (`docs/design-measurements.md`).
const NATIVE_UPLOAD_MAX: usize = 1 << 20;

impl WebGpuDevice {
    /// Starts natively, as one submission on the device's queue (every earlier
    /// submission there runs first): a copy between two ranges of one WebGPU device
    /// (`copy_buffer_to_buffer`), or an upload of up to 1 MiB from host memory
    /// (`Queue::write_buffer`, which reads the host memory before it returns). `None`:
    /// not such a copy (other devices, unaligned ranges, overlap, larger uploads), or a
    /// still-running dependency from elsewhere.
    pub(super) fn start_copy(
        &self,
        src: &Memory,
        dst: &Memory,
        span: CopySpan,
        after: &dyn Dependencies,
    ) -> Result<Option<Completion>> {
        let CopySpan {
            src_offset,
            dst_offset,
            len,
        } = span;
        let mine = |m: &Memory| m.location() == self.location;
        let aligned = |offsets: &[usize]| {
            offsets
                .iter()
                .all(|v| (*v as u64).is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT))
        };
        let upload = match (src.native(), dst.native()) {
            (Native::WebGpu { .. }, Native::WebGpu { .. })
                if mine(src)
                    && mine(dst)
                    && aligned(&[src_offset, dst_offset, len])
                    && !src.overlaps(src_offset, dst, dst_offset, len) =>
            {
                false
            }
            // On unified memory an upload is one memcpy into the mapped buffer: the
            // synchronous write, on a worker thread.
            (Native::Host { .. }, Native::WebGpu { .. })
                if src.location() == Location::Host
                    && !self.mappable(dst.native())
                    && mine(dst)
                    && len <= NATIVE_UPLOAD_MAX
                    && aligned(&[dst_offset, len]) =>
            {
                true
            }
            _ => return Ok(None),
        };
        // Earlier submissions on this device's queue run first anyway: no host wait.
        let same_queue = |c: &Completion| {
            c.work_as::<WgpuWork>()
                .filter(|w| w.location == self.location)
                .map(|_| ())
        };
        if native_deps(after, same_queue)?.is_none() {
            return Ok(None);
        }
        let (d, d_base) = buffer_of(dst.native());
        // Only the submission is in a validation scope: copies that are not this
        // device's own returned above without one.
        let index = self.scoped("Queue::submit (async copy)", || {
            if upload {
                src.with_host_bytes(src_offset, len, |data| {
                    self.queue.write_buffer(d, d_base + dst_offset as u64, data);
                    Ok(())
                })?;
                return Ok(self.queue.submit([]));
            }
            let (s, s_base) = buffer_of(src.native());
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("locus async copy"),
                });
            self.encode_copy(
                &mut encoder,
                s,
                s_base + src_offset as u64,
                d,
                d_base + dst_offset as u64,
                len as u64,
            );
            self.submit_on(&[s, d], || self.queue.submit([encoder.finish()]))
        })?;
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&done);
        self.queue.on_submitted_work_done(move || {
            flag.store(true, std::sync::atomic::Ordering::Release);
        });
        Ok(Some(Completion::new(WgpuWork {
            device: self.device.clone(),
            location: self.location,
            index,
            done: Some(done),
        })))
    }
}
