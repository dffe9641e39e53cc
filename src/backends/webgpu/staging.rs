//! Reused staging buffers for WebGPU transfers: two per direction, used alternately, so
//! the host copy into (or out of) one overlaps the GPU copy of the other.
//!
//! A mapping is waited for until its callback answers (whichever thread's poll runs it),
//! never abandoned half-way; and a transfer that fails for any reason replaces both
//! staging buffers, so that no buffer is left mapped, or in a failed submission, for the
//! next transfer to trip over.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::WebGpuDevice;
use crate::core::error::Result;

pub(super) struct Staging {
    buffers: [wgpu::Buffer; 2],
    last_use: [Option<wgpu::SubmissionIndex>; 2],
    size: u64,
    usage: wgpu::BufferUsages,
}

/// How long a mapping may take once the buffer's last GPU use is done (a real wait, not
/// a spin count: another thread's poll may be the one that runs the callback).
const MAP_TIMEOUT: Duration = Duration::from_secs(60);

/// The part of `[pos, pos + n)` that lies inside `[start, end)`, if any.
fn overlap(pos: u64, n: u64, start: u64, end: u64) -> Option<(u64, u64)> {
    let (a, b) = (pos.max(start), (pos + n).min(end));
    (a < b).then_some((a, b))
}

impl Staging {
    pub(super) fn new(device: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> Staging {
        Staging {
            buffers: Self::make(device, size, usage),
            last_use: [None, None],
            size,
            usage,
        }
    }

    fn make(device: &wgpu::Device, size: u64, usage: wgpu::BufferUsages) -> [wgpu::Buffer; 2] {
        let make = |i: usize| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(if i == 0 {
                    "locus staging 0"
                } else {
                    "locus staging 1"
                }),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        [make(0), make(1)]
    }

    /// Replaces both buffers after a failure: whatever state the old ones were left in
    /// (mapped, a mapping pending, used by a failed submission) goes with them.
    pub(super) fn reset(&mut self, device: &wgpu::Device) {
        self.buffers = Self::make(device, self.size, self.usage);
        self.last_use = [None, None];
    }

    /// Maps `slot` once its last GPU use is done.
    fn map(&mut self, dev: &WebGpuDevice, slot: usize, mode: wgpu::MapMode) -> Result<()> {
        let (tx, rx) = mpsc::channel();
        self.buffers[slot].map_async(mode, .., move |r| {
            let _ = tx.send(r);
        });
        let first = match self.last_use[slot].take() {
            Some(index) => wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            },
            None => wgpu::PollType::Poll,
        };
        await_mapping(dev, rx, first)
    }

    /// host -> `dst[offset..]`. Unaligned edges keep the bytes around them. After a
    /// failure the caller replaces the buffers ([`Staging::reset`]).
    pub(super) fn upload(
        &mut self,
        dev: &WebGpuDevice,
        dst: &wgpu::Buffer,
        offset: u64,
        src: &[u8],
    ) -> Result<()> {
        let end = offset + src.len() as u64;
        let (head, tail) = (offset & !3, (end + 3) & !3);
        let mut head_word = [0u8; 4];
        let mut tail_word = [0u8; 4];
        if offset != head {
            dev.read_raw(dst, head, &mut head_word)?;
        }
        if end != tail {
            dev.read_raw(dst, tail - 4, &mut tail_word)?;
        }
        let mut pos = head;
        let mut chunk = 0;
        let mut last = None;
        while pos < tail {
            let n = self.size.min(tail - pos);
            let slot = chunk % 2;
            self.map(dev, slot, wgpu::MapMode::Write)?;
            {
                let mut view = self.buffers[slot]
                    .get_mapped_range_mut(0..n)
                    .map_err(|e| dev.fail("get_mapped_range_mut", e.to_string()))?;
                let mut put = |at: u64, bytes: &[u8]| {
                    let at = (at - pos) as usize;
                    view.slice(at..at + bytes.len()).copy_from_slice(bytes);
                };
                if let Some((a, b)) = overlap(pos, n, head, offset) {
                    put(a, &head_word[(a - head) as usize..(b - head) as usize]);
                }
                if let Some((a, b)) = overlap(pos, n, offset, end) {
                    put(a, &src[(a - offset) as usize..(b - offset) as usize]);
                }
                if let Some((a, b)) = overlap(pos, n, end, tail) {
                    let base = tail - 4;
                    put(a, &tail_word[(a - base) as usize..(b - base) as usize]);
                }
            }
            self.buffers[slot].unmap();
            let index = dev.copy_on_device(&self.buffers[slot], 0, dst, pos, n)?;
            self.last_use[slot] = Some(index.clone());
            last = Some(index);
            pos += n;
            chunk += 1;
        }
        match last {
            Some(index) => dev.wait("copy_buffer_to_buffer (upload)", Some(index)),
            None => Ok(()),
        }
    }

    /// `src[offset..]` -> host. After a failure the caller replaces the buffers.
    pub(super) fn download(
        &mut self,
        dev: &WebGpuDevice,
        src: &wgpu::Buffer,
        offset: u64,
        dst: &mut [u8],
    ) -> Result<()> {
        let end = offset + dst.len() as u64;
        let (head, tail) = (offset & !3, (end + 3) & !3);
        let chunks = (tail - head).div_ceil(self.size) as usize;
        let size = self.size;
        let chunk_at = |k: usize| {
            let pos = head + k as u64 * size;
            (pos, size.min(tail - pos))
        };
        let submit = |this: &mut Staging, k: usize| {
            let (pos, n) = chunk_at(k);
            let slot = k % 2;
            this.last_use[slot] = Some(dev.copy_on_device(src, pos, &this.buffers[slot], 0, n)?);
            Ok::<(), crate::core::error::Error>(())
        };
        if chunks > 0 {
            submit(self, 0)?;
        }
        for k in 0..chunks {
            if k + 1 < chunks {
                submit(self, k + 1)?;
            }
            let (pos, n) = chunk_at(k);
            let slot = k % 2;
            self.map(dev, slot, wgpu::MapMode::Read)?;
            {
                let view = self.buffers[slot]
                    .get_mapped_range(0..n)
                    .map_err(|e| dev.fail("get_mapped_range", e.to_string()))?;
                if let Some((a, b)) = overlap(pos, n, offset, end) {
                    dst[(a - offset) as usize..(b - offset) as usize]
                        .copy_from_slice(&view[(a - pos) as usize..(b - pos) as usize]);
                }
            }
            self.buffers[slot].unmap();
        }
        Ok(())
    }
}

/// Waits for the answer of a `map_async` whose callback sends on `rx`: one `first` poll
/// (a wait for the buffer's last use, or a plain poll), then polls until the callback
/// answers or [`MAP_TIMEOUT`] passes.
pub(super) fn await_mapping(
    dev: &WebGpuDevice,
    rx: mpsc::Receiver<std::result::Result<(), wgpu::BufferAsyncError>>,
    first: wgpu::PollType,
) -> Result<()> {
    let poll = |kind| {
        dev.device
            .poll(kind)
            .map(|_| ())
            .map_err(|e| dev.fail("device.poll", e.to_string()))
    };
    let answer = |r: std::result::Result<(), wgpu::BufferAsyncError>| {
        r.map_err(|e| dev.fail("map_async", e.to_string()))
    };
    let dropped = || {
        dev.fail(
            "map_async",
            "wgpu dropped the mapping callback without an answer".into(),
        )
    };
    poll(first)?;
    // Mostly answered by the poll above: no clock read then.
    match rx.try_recv() {
        Ok(result) => return answer(result),
        Err(mpsc::TryRecvError::Empty) => {}
        Err(mpsc::TryRecvError::Disconnected) => return Err(dropped()),
    }
    let deadline = Instant::now() + MAP_TIMEOUT;
    loop {
        match rx.recv_timeout(Duration::from_micros(200)) {
            Ok(result) => return answer(result),
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {
                poll(wgpu::PollType::Poll)?;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(dev.fail(
                    "map_async",
                    format!(
                        "the mapping did not complete in {} s",
                        MAP_TIMEOUT.as_secs()
                    ),
                ))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(dropped()),
        }
    }
}
