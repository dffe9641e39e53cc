//! Copies in a batch, in WebGPU's batch form: every upload queued with
//! `Queue::write_buffer`, every copy within the device and every download (into one
//! readback buffer) recorded in one command encoder, one submission, one wait, one
//! mapping of the readback buffer; where each copy alone pays its own submission, wait
//! and mapping. Copies the host makes in place (mappable buffers on unified memory) and
//! lengths or offsets `copy_buffer_to_buffer` cannot take (not multiples of 4) run one by
//! one, as a batch runs on a device without `CopyBatches`.

use std::sync::mpsc;

use super::staging::await_mapping;
use super::{buffer_of, WebGpuDevice};
use crate::core::batch_copy::DeviceCopy;
use crate::core::error::Result;

/// True when `a`, `b` and `c` are multiples of `wgpu::COPY_BUFFER_ALIGNMENT`.
fn aligned(a: u64, b: u64, c: u64) -> bool {
    (a | b | c).is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
}

/// A submitted batch: the readback buffer (if any download), each download's index in
/// the batch and offset in it, and the copies left to run one by one.
type Batched = (Option<wgpu::Buffer>, Vec<(usize, u64)>, Vec<usize>);

impl WebGpuDevice {
    pub(super) fn copy_batch_impl(&self, copies: &mut [DeviceCopy<'_>]) -> Result<()> {
        let _inside = super::InLocus::enter();
        // Recorded and submitted in one validation scope: a buffer the batch form cannot
        // take (an adopted one without the copy usages) is this call's error.
        let (readback, reads, by_one) =
            self.scoped("copy batch (one submission)", || self.submit_batch(copies))?;
        if let Some(readback) = readback {
            let (tx, rx) = mpsc::channel();
            readback.map_async(wgpu::MapMode::Read, .., move |r| {
                let _ = tx.send(r);
            });
            await_mapping(self, rx, wgpu::PollType::Poll)?;
            {
                let view = readback
                    .get_mapped_range(..)
                    .map_err(|e| self.fail("get_mapped_range (copy batch)", e.to_string()))?;
                for &(i, at) in &reads {
                    if let DeviceCopy::Read { dst, .. } = &mut copies[i] {
                        let n = dst.len();
                        dst.copy_from_slice(&view[at as usize..at as usize + n]);
                    }
                }
            }
            readback.unmap();
        }
        for i in by_one {
            copies[i].run_alone(self)?;
        }
        Ok(())
    }

    /// Records and submits the copies the batch form takes, and waits for them; the
    /// readback buffer with each download's place in it, and the copies left to run one
    /// by one.
    fn submit_batch(&self, copies: &[DeviceCopy<'_>]) -> Result<Batched> {
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("locus copy batch"),
            });
        let mut touched: Vec<&wgpu::Buffer> = Vec::new();
        // Downloads: (index in `copies`, offset in the readback buffer).
        let mut reads: Vec<(usize, u64)> = Vec::new();
        let mut readback_len = 0u64;
        let mut by_one: Vec<usize> = Vec::new();
        for (i, c) in copies.iter().enumerate() {
            match c {
                DeviceCopy::Write { dst, offset, src }
                    if !self.mappable(dst)
                        && aligned(buffer_of(dst).1, *offset as u64, src.len() as u64) =>
                {
                    let (buffer, base) = buffer_of(dst);
                    self.queue.write_buffer(buffer, base + *offset as u64, src);
                    touched.push(buffer);
                }
                DeviceCopy::Read { src, offset, dst }
                    if !self.mappable(src)
                        && aligned(buffer_of(src).1, *offset as u64, dst.len() as u64) =>
                {
                    reads.push((i, readback_len));
                    readback_len += dst.len() as u64;
                }
                DeviceCopy::Within {
                    src,
                    src_offset,
                    dst,
                    dst_offset,
                    len,
                } if !(self.mappable(src) && self.mappable(dst))
                    && aligned(*src_offset as u64, *dst_offset as u64, *len as u64) =>
                {
                    let ((s, s0), (d, d0)) = (buffer_of(src), buffer_of(dst));
                    let (from, to) = (s0 + *src_offset as u64, d0 + *dst_offset as u64);
                    self.encode_copy(&mut encoder, s, from, d, to, *len as u64);
                    touched.extend([s.as_ref(), d.as_ref()]);
                }
                _ => by_one.push(i),
            }
        }
        let readback = (readback_len > 0).then(|| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("locus copy batch readback"),
                size: readback_len,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        if let Some(readback) = &readback {
            for &(i, at) in &reads {
                if let DeviceCopy::Read { src, offset, dst } = &copies[i] {
                    let (buffer, base) = buffer_of(src);
                    let from = base + *offset as u64;
                    encoder.copy_buffer_to_buffer(buffer, from, readback, at, dst.len() as u64);
                    touched.push(buffer);
                }
            }
        }
        let index = self.submit_on(&touched, || self.queue.submit([encoder.finish()]))?;
        self.wait("copy batch (one submission)", Some(index))?;
        Ok((readback, reads, by_one))
    }
}
