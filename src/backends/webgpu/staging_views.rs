//! Staging buffers lent to a host consumer in place ([`StagingViews::stage`]): a MAP_READ
//! buffer the device copies a range into and the host then reads where it is mapped, or
//! a MAP_WRITE buffer the host writes where it is mapped and the device then copies into
//! the range. MPI's staged wire sends from and receives into these directly, so a
//! message pays one device copy per side and no host copy (the staging engine's
//! `read` / `write` pay a host copy more, into or out of the caller's slice).
//!
//! Buffers come back to a small per-device list when a view ends, with the submission
//! that last used them, so that the next view maps a buffer once that work is done.
//!
//! [`StagingViews::stage`]: crate::core::capability::StagingViews::stage

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use super::staging::await_mapping;
use super::WebGpuDevice;
use crate::core::device::{StageWay, StagedView};
use crate::core::error::{Error, Result};
use crate::core::location::Location;

/// At most this many idle staging buffers kept per device.
const KEPT: usize = 8;

/// Huge pages' size: a lent buffer of at least this many bytes is placed so that its
/// view starts on one.
const HUGE: u64 = 2 << 20;

/// A lent buffer at rest.
struct Idle {
    buffer: wgpu::Buffer,
    /// Where views start in the buffer: its host address there is a huge-page boundary
    /// (MPI's shared-memory transport copies huge pages twice as fast).
    skew: u64,
    /// The submission that last used it, and whether that is done (`None`: nothing
    /// pending).
    last_use: Option<(wgpu::SubmissionIndex, Arc<AtomicBool>)>,
}

impl Idle {
    fn ready(&self) -> bool {
        self.last_use
            .as_ref()
            .is_none_or(|(_, done)| done.load(Ordering::Acquire))
    }
}

/// The idle staging buffers of one device.
#[derive(Default)]
pub(super) struct Lent {
    idle: Mutex<Vec<Idle>>,
}

impl Lent {
    /// The oldest idle buffer of `usage` with room for `len` bytes whose last use is
    /// done (after one poll of the device if none is); `None`: make a new one, so that a
    /// view is never held up by the copy out of the one before it.
    fn take(&self, dev: &WebGpuDevice, usage: wgpu::BufferUsages, len: u64) -> Option<Idle> {
        let find = |idle: &mut Vec<Idle>| {
            let at = idle.iter().position(|b| {
                b.buffer.usage() == usage && b.buffer.size() - b.skew >= len && b.ready()
            })?;
            Some(idle.remove(at))
        };
        if let Some(found) = find(&mut self.idle.lock().unwrap_or_else(|e| e.into_inner())) {
            return Some(found);
        }
        let _ = dev.device.poll(wgpu::PollType::Poll);
        find(&mut self.idle.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn give(&self, idle: Idle) {
        let mut list = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if list.len() < KEPT {
            list.push(idle);
        }
    }
}

/// A range of a storage buffer seen through a lent staging buffer.
struct View {
    way: StageWay,
    /// The staging buffer and its mapped range (a `BufferView` or `BufferViewMut`, held
    /// only to be dropped before the unmap); `None` once ended.
    staging: Option<(wgpu::Buffer, Box<dyn Send>)>,
    /// Where the view starts in the staging buffer.
    skew: u64,
    /// The host address of the view's first byte.
    host: usize,
    len: u64,
    /// The storage buffer and the offset of the range in it (where `In` copies to).
    target: Arc<wgpu::Buffer>,
    at: u64,
    device: wgpu::Device,
    queue: wgpu::Queue,
    location: Location,
    lent: Arc<Lent>,
}

impl View {
    /// Unmaps the staging buffer; for `In` with `copy`, queues its bytes into the range.
    /// The buffer goes back to the device's list with its last use.
    fn end(&mut self, copy: bool) -> Result<()> {
        let _inside = super::InLocus::enter();
        let Some((buffer, mapping)) = self.staging.take() else {
            return Ok(());
        };
        drop(mapping);
        buffer.unmap();
        let skew = self.skew;
        if !(copy && self.way == StageWay::In) {
            self.lent.give(Idle {
                buffer,
                skew,
                last_use: None,
            });
            return Ok(());
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("locus lent staging -> storage"),
            });
        encoder.copy_buffer_to_buffer(&buffer, skew, &self.target, self.at, self.len);
        let index = self.queue.submit([encoder.finish()]);
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        self.queue
            .on_submitted_work_done(move || flag.store(true, Ordering::Release));
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Backend {
                location: self.location,
                call: "copy_buffer_to_buffer (lent staging)",
                message: e.to_string(),
                hint: "see the wgpu message".into(),
            });
        }
        self.lent.give(Idle {
            buffer,
            skew,
            last_use: Some((index, done)),
        });
        Ok(())
    }
}

impl StagedView for View {
    fn host(&self) -> *mut u8 {
        self.host as *mut u8
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.end(true)
    }
}

impl Drop for View {
    fn drop(&mut self) {
        // Not finished: nothing is copied; the buffer is unmapped and kept.
        let _ = self.end(false);
    }
}

/// Maps `len` bytes at `offset` of `buffer` in `mode` once `after` (its last use) is
/// done: the mapped range (to be dropped before the unmap) and its host address.
fn map(
    dev: &WebGpuDevice,
    buffer: &wgpu::Buffer,
    offset: u64,
    len: u64,
    mode: wgpu::MapMode,
    after: Option<wgpu::SubmissionIndex>,
) -> Result<(Box<dyn Send>, usize)> {
    let (tx, rx) = mpsc::channel();
    let range = buffer.slice(offset..offset + len);
    range.map_async(mode, move |r| {
        let _ = tx.send(r);
    });
    let first = match after {
        Some(index) => wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        },
        None => wgpu::PollType::Poll,
    };
    await_mapping(dev, rx, first)?;
    let mapped = match mode {
        wgpu::MapMode::Read => range.get_mapped_range().map(|view| {
            let host = view.as_ptr() as usize;
            (Box::new(view) as Box<dyn Send>, host)
        }),
        wgpu::MapMode::Write => range.get_mapped_range_mut().map(|mut view| {
            let host = view.slice(..).as_raw_ptr().as_ptr() as *mut u8 as usize;
            (Box::new(view) as Box<dyn Send>, host)
        }),
    };
    mapped.map_err(|e| dev.fail("get_mapped_range (lent staging)", e.to_string()))
}

/// A new staging buffer for views of up to `len` bytes: a large one is placed (one
/// whole mapping to learn where the driver put it) so that views start on a huge-page
/// boundary, and its pages are collapsed into huge pages.
fn fresh(
    dev: &WebGpuDevice,
    usage: wgpu::BufferUsages,
    len: u64,
    mode: wgpu::MapMode,
) -> Result<Idle> {
    let size = if len >= HUGE { len + HUGE } else { len };
    let buffer = dev.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("locus lent staging"),
        size,
        usage,
        mapped_at_creation: false,
    });
    let mut skew = 0;
    if len >= HUGE {
        let (mapping, base) = map(dev, &buffer, 0, size, mode, None)?;
        crate::backends::pages::collapse_huge_pages_within(base as *mut u8, size as usize);
        drop(mapping);
        buffer.unmap();
        // Mappings are page aligned: the skew keeps offsets multiples of 4.
        skew = (HUGE - base as u64 % HUGE) % HUGE;
    }
    Ok(Idle {
        buffer,
        skew,
        last_use: None,
    })
}

/// Opens a view of `len` bytes at `at` of `target` (offsets and length multiples of 4,
/// checked by the caller), on a device without unified memory.
pub(super) fn open(
    dev: &WebGpuDevice,
    target: &Arc<wgpu::Buffer>,
    at: u64,
    len: u64,
    way: StageWay,
) -> Result<Box<dyn StagedView>> {
    let _inside = super::InLocus::enter();
    let (usage, mode) = match way {
        StageWay::Out => (
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            wgpu::MapMode::Read,
        ),
        StageWay::In => (
            wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            wgpu::MapMode::Write,
        ),
    };
    // A buffer whose copy or mapping fails (or is left pending) is dropped, not kept.
    let Idle {
        buffer,
        skew,
        last_use,
    } = match dev.lent.take(dev, usage, len) {
        Some(idle) => idle,
        None => fresh(dev, usage, len, mode)?,
    };
    let after = match way {
        StageWay::Out => Some(dev.copy_on_device(target, at, &buffer, skew, len)?),
        StageWay::In => last_use.map(|(index, _)| index),
    };
    let (mapping, host) = map(dev, &buffer, skew, len, mode, after)?;
    Ok(Box::new(View {
        way,
        staging: Some((buffer, mapping)),
        skew,
        host,
        len,
        target: Arc::clone(target),
        at,
        device: dev.device.clone(),
        queue: dev.queue.clone(),
        location: dev.location,
        lent: Arc::clone(&dev.lent),
    }))
}
