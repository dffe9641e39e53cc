//! Host views of storage buffers on unified memory.
//!
//! On an adapter whose memory is the host's (a CPU adapter such as lavapipe or llvmpipe,
//! an integrated GPU, Apple silicon) and that offers wgpu's native
//! `MAPPABLE_PRIMARY_BUFFERS`, locus makes its storage buffers mappable too
//! (`MAP_READ | MAP_WRITE`): host code reaches them in place through a mapping, and a
//! transfer is one `memcpy` instead of two through a staging buffer.
//!
//! WebGPU maps a whole buffer at a time, one mapping per buffer, and refuses GPU work on
//! a mapped buffer. So the views here are counted per wgpu buffer (pool blocks share
//! one): the first view maps the buffer, the last one unmaps it; and GPU work on a
//! buffer ([`Unified::submit`]) waits until no view of it is alive, with a time limit
//! that turns a view held across GPU work on the same buffer into an error, not a hang.
//!
//! The buffer is mapped in `MapMode::Write` whatever the view is for (a mapping has one
//! mode), and read through it too: that relies on the memory being host-coherent, which
//! it is on the adapters this is enabled for (CPU adapters, integrated GPUs' and Apple
//! silicon's shared heaps). `LOCUS_WEBGPU_MAPPABLE=0` turns the whole feature off.

use std::sync::{mpsc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::staging::await_mapping;
use super::WebGpuDevice;
use crate::core::error::{Error, Result};

/// How long GPU work waits for host views of its buffers to end before it gives up.
const VIEW_WAIT: Duration = Duration::from_secs(10);

/// One mapped wgpu buffer and the number of views of it alive.
struct View {
    buffer: wgpu::Buffer,
    /// Keeps the mapping's range alive; dropped before `unmap` (wgpu panics otherwise).
    range: wgpu::BufferViewMut,
    /// The host address of the buffer's first byte.
    base: usize,
    count: usize,
}

/// The mapped buffers, and how many submissions wait for one to be unmapped.
#[derive(Default)]
struct Views {
    mapped: Vec<View>,
    /// Submissions waiting on `ended` (a notification is a system call: made only when
    /// someone waits).
    waiting: usize,
}

/// The live host views of one device's buffers.
#[derive(Default)]
pub(super) struct Unified {
    views: Mutex<Views>,
    ended: Condvar,
}

/// True when the feature may be used: asked for by default, off with
/// `LOCUS_WEBGPU_MAPPABLE=0`.
pub(super) fn wanted() -> bool {
    let asked = crate::core::config::flag("LOCUS_WEBGPU_MAPPABLE");
    crate::core::config::or_warn(asked).unwrap_or(true)
}

impl Unified {
    fn lock(&self) -> MutexGuard<'_, Views> {
        self.views.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The host address of byte `offset` of `buffer`, mapping the buffer when no view of
    /// it is alive (after the GPU work already submitted on it).
    pub(super) fn map(
        &self,
        dev: &WebGpuDevice,
        buffer: &wgpu::Buffer,
        offset: u64,
    ) -> Result<*mut u8> {
        let mut views = self.lock();
        if let Some(view) = views.mapped.iter_mut().find(|v| &v.buffer == buffer) {
            view.count += 1;
            return Ok((view.base + offset as usize) as *mut u8);
        }
        // In a validation scope: a refused mapping (a destroyed buffer) is this call's
        // error, not one left for whichever operation checks the device next.
        let mapped = dev.scoped("Buffer::map_async", || {
            let (tx, rx) = mpsc::channel();
            buffer.map_async(wgpu::MapMode::Write, .., move |r| {
                let _ = tx.send(r);
            });
            // Every submission so far: those on this buffer among them.
            let all = wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            };
            await_mapping(dev, rx, all)?;
            buffer
                .get_mapped_range_mut(..)
                .map_err(|e| dev.fail("get_mapped_range_mut", e.to_string()))
        });
        let mut range = match mapped {
            Ok(range) => range,
            Err(e) => {
                // Not left mapped (or a mapping pending) with no view to end it, or the
                // next view would find the buffer busy for good. (Unmapping a buffer
                // that is not mapped is a validation error this scope swallows.)
                let _ = dev.scoped("Buffer::unmap", || {
                    buffer.unmap();
                    Ok(())
                });
                return Err(e);
            }
        };
        let base = range.slice(..).as_raw_ptr().as_ptr() as *mut u8 as usize;
        views.mapped.push(View {
            buffer: buffer.clone(),
            range,
            base,
            count: 1,
        });
        Ok((base + offset as usize) as *mut u8)
    }

    /// Ends one view of `buffer`; the last one unmaps it.
    pub(super) fn unmap(&self, dev: &WebGpuDevice, buffer: &wgpu::Buffer) -> Result<()> {
        let mut views = self.lock();
        let Some(at) = views.mapped.iter().position(|v| &v.buffer == buffer) else {
            return Err(dev.fail(
                "Buffer::unmap",
                "unmap of a buffer with no host view alive".into(),
            ));
        };
        views.mapped[at].count -= 1;
        if views.mapped[at].count == 0 {
            let view = views.mapped.swap_remove(at);
            drop(view.range);
            view.buffer.unmap();
            if views.waiting > 0 {
                self.ended.notify_all();
            }
        }
        Ok(())
    }

    /// Runs `submit` (GPU work on `buffers`) once none of them has a host view alive,
    /// holding the views meanwhile so that none is made before the work is queued (a
    /// mapping made after waits for the work to finish).
    pub(super) fn submit<R>(
        &self,
        dev: &WebGpuDevice,
        buffers: &[&wgpu::Buffer],
        submit: impl FnOnce() -> R,
    ) -> Result<R> {
        let deadline = Instant::now() + VIEW_WAIT;
        let mut views = self.lock();
        while views.mapped.iter().any(|v| buffers.contains(&&v.buffer)) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Backend {
                    location: dev.location,
                    call: "Queue::submit",
                    message: format!(
                        "a host view of this buffer has been alive for {} s; WebGPU runs no GPU work on a mapped buffer",
                        VIEW_WAIT.as_secs()
                    ),
                    hint: "drop the host view (an access guard or HostMapping of this memory, or of another pool block of the same chunk; from Python, an open handle from access() or a numpy array made from one) before GPU work on it".into(),
                });
            }
            views.waiting += 1;
            views = self
                .ended
                .wait_timeout(views, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            views.waiting -= 1;
        }
        Ok(submit())
    }
}
