//! WebGPU's own calls for one transfer, as a wgpu user writes them by hand (the raw
//! baselines behind `NativeCalls::native_write`, `native_read` and `native_copy_within`):
//! `queue.write_buffer`; a `copy_buffer_to_buffer` into a mappable readback buffer,
//! then `map_async`; `copy_buffer_to_buffer` within the device; and for a storage
//! buffer mapped in place on unified memory, `map_async` and a memcpy.

use super::*;

impl WebGpuDevice {
    /// The names behind [`NativeCalls::native_call`].
    pub(super) fn native_call_name(&self, native: &Native, direction: Direction) -> &'static str {
        let mapped = self.mappable(native);
        match direction {
            Direction::HostToDevice | Direction::DeviceToHost if mapped => "map_async + memcpy",
            Direction::HostToDevice => "queue.write_buffer",
            Direction::DeviceToHost => "copy_buffer_to_buffer + map_async readback",
            Direction::WithinDevice => "copy_buffer_to_buffer",
        }
    }

    pub(super) fn native_write_impl(&self, dst: &Native, src: &[u8]) -> Result<()> {
        let _inside = super::InLocus::enter();
        let (buffer, offset) = buffer_of(dst);
        if self.mappable(dst) {
            return self.mapped_for(buffer, offset, src.len(), wgpu::MapMode::Write, |at| {
                // SAFETY: `at` is the mapped host address of `src.len()` bytes of the
                // buffer, valid until the closure returns.
                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), at, src.len()) }
            });
        }
        self.queue().write_buffer(buffer, offset, src);
        let index = self.queue().submit([]);
        self.wait_for(index)
    }

    pub(super) fn native_read_impl(&self, src: &Native, dst: &mut [u8]) -> Result<()> {
        let _inside = super::InLocus::enter();
        let (buffer, offset) = buffer_of(src);
        let len = dst.len();
        if self.mappable(src) {
            return self.mapped_for(buffer, offset, len, wgpu::MapMode::Read, |at| {
                // SAFETY: as in `native_write_impl`, the other way.
                unsafe { std::ptr::copy_nonoverlapping(at, dst.as_mut_ptr(), len) }
            });
        }
        self.readback(buffer, offset, dst)
    }

    pub(super) fn native_copy_impl(&self, src: &Native, dst: &Native, len: usize) -> Result<()> {
        let _inside = super::InLocus::enter();
        let ((s, so), (d, d0)) = (buffer_of(src), buffer_of(dst));
        let mut encoder = self.device().create_command_encoder(&Default::default());
        self.encode_copy(&mut encoder, s, so, d, d0, (len as u64).div_ceil(4) * 4);
        let index = self.queue().submit([encoder.finish()]);
        self.wait_for(index)
    }

    fn wait_for(&self, index: wgpu::SubmissionIndex) -> Result<()> {
        self.device()
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .map(|_| ())
            .map_err(|e| self.native_fail("device.poll", e))
    }

    fn native_fail(&self, call: &str, e: impl std::fmt::Display) -> Error {
        Error::Invalid(format!("{}: native transfer: {call}: {e}", self.location))
    }

    /// Copies into this device's MAP_READ buffer (one per device, grown as needed) and
    /// reads it mapped.
    fn readback(&self, buffer: &wgpu::Buffer, offset: u64, dst: &mut [u8]) -> Result<()> {
        let size = (dst.len() as u64).div_ceil(4) * 4;
        if size == 0 {
            return Ok(());
        }
        let mut cache = self
            .native_readback
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if cache.as_ref().is_none_or(|b| b.size() < size) {
            *cache = Some(self.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("native readback"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let Some(staging) = cache.as_ref() else {
            return Err(self.native_fail("create_buffer", "no readback buffer"));
        };
        let mut encoder = self.device().create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, offset, staging, 0, size);
        self.queue().submit([encoder.finish()]);
        self.map_and_wait(&staging.slice(0..size), wgpu::MapMode::Read)?;
        {
            let view = staging
                .get_mapped_range(0..size)
                .map_err(|e| self.native_fail("get_mapped_range", e))?;
            dst.copy_from_slice(&view[..dst.len()]);
        }
        staging.unmap();
        Ok(())
    }

    /// Maps `slice` in `mode` and waits for the mapping.
    fn map_and_wait(&self, slice: &wgpu::BufferSlice<'_>, mode: wgpu::MapMode) -> Result<()> {
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(mode, move |r| {
            let _ = tx.send(r);
        });
        self.device()
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| self.native_fail("device.poll", e))?;
        rx.recv()
            .map_err(|e| self.native_fail("map_async", e))?
            .map_err(|e| self.native_fail("map_async", e))
    }

    /// Maps `len` bytes at `offset` of a mappable storage buffer in `mode`, runs `f` on
    /// the host address of byte `offset`, and unmaps.
    fn mapped_for(
        &self,
        buffer: &wgpu::Buffer,
        offset: u64,
        len: usize,
        mode: wgpu::MapMode,
        f: impl FnOnce(*mut u8),
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let start = offset & !(wgpu::MAP_ALIGNMENT - 1);
        let end = (offset + len as u64).div_ceil(4) * 4;
        let slice = buffer.slice(start..end);
        self.map_and_wait(&slice, mode)?;
        let skip = (offset - start) as usize;
        match mode {
            wgpu::MapMode::Write => {
                let mut view = slice
                    .get_mapped_range_mut()
                    .map_err(|e| self.native_fail("get_mapped_range_mut", e))?;
                let base = view.slice(..).as_raw_ptr().as_ptr() as *mut u8;
                f(base.wrapping_add(skip));
            }
            wgpu::MapMode::Read => {
                let view = slice
                    .get_mapped_range()
                    .map_err(|e| self.native_fail("get_mapped_range", e))?;
                // Read from only (the read's closure copies out of it).
                f(view.as_ptr().wrapping_add(skip) as *mut u8);
            }
        }
        buffer.unmap();
        Ok(())
    }
}
