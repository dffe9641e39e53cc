//! The copy paths CUDA and HIP add to the transfer matrix: peer copies between two
//! devices of one technology where peer access is enabled, and copies to and from every
//! other technology staged through pinned host memory.

use super::work::StreamEvent;
use super::*;

/// The paths a GPU technology adds to the transfer matrix.
pub(crate) fn paths<A: GpuApi>() -> Vec<(Technology, Technology, Arc<dyn CopyPath>)> {
    let t = A::TECHNOLOGY;
    let mut out: Vec<(Technology, Technology, Arc<dyn CopyPath>)> =
        vec![(t, t, Arc::new(Peer::<A>(std::marker::PhantomData)))];
    for other in Technology::ALL {
        if other != t && other != Technology::Host {
            out.push((
                other,
                t,
                Arc::new(ThroughPinned::<A>(std::marker::PhantomData)),
            ));
            out.push((
                t,
                other,
                Arc::new(ThroughPinned::<A>(std::marker::PhantomData)),
            ));
        }
    }
    out
}

fn gpu_of<A: GpuApi>(d: &Arc<dyn Device>) -> Option<&GpuDevice<A>> {
    (&**d as &dyn Any).downcast_ref::<GpuDevice<A>>()
}

/// Between two devices of one GPU technology: a peer copy when peer access is enabled,
/// otherwise staged through pinned host memory.
struct Peer<A>(std::marker::PhantomData<A>);

impl<A: GpuApi> CopyPath for Peer<A> {
    fn name(&self) -> &'static str {
        "peer copy when enabled, else staged through pinned host memory"
    }

    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route> {
        plan_between::<A>(src.device, dst.device)
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        let (Some(a), Some(b)) = (gpu_of::<A>(src.device()), gpu_of::<A>(dst.device())) else {
            return Err(Error::Invalid("GPU peer path given foreign memory".into()));
        };
        if a.peer_enabled(b.ordinal) || b.peer_enabled(a.ordinal) {
            let ((s, _), (t, _)) = (a.ptr(src.native())?, b.ptr(dst.native())?);
            // The peer copy is queued on the destination's stream. Work still queued on
            // the source's stream (a write into the source, a producer's wait, a freed
            // block reused) must land first, or the copy reads the bytes from before
            // it: an event recorded on the source's stream, which the destination's
            // stream waits for on the device (an event of another device's context
            // may be waited for so).
            let _source = a.activate()?;
            let ready =
                StreamEvent::create(&a.api, a.ordinal, true).map_err(|e| a.fail("peer copy", e))?;
            // SAFETY: a live event of the current (source) device, on its own stream.
            unsafe { a.api.event_record(ready.event) }.map_err(|e| a.fail("peer copy", e))?;
            let _destination = b.activate()?;
            // SAFETY: the destination's own stream, current; a live recorded event.
            unsafe {
                b.api
                    .stream_wait_event(b.api.stream_handle(b.ordinal), ready.event)
            }
            .map_err(|e| b.fail("peer copy", e))?;
            // SAFETY: both ranges were bounds-checked.
            return unsafe {
                a.api
                    .peer(t + d as u64, b.ordinal, s + so as u64, a.ordinal, len)
            }
            .map_err(|e| a.fail("peer copy", e));
        }
        through_pinned(a, src, so, dst, d, len)
    }
}

/// The route between two devices of one GPU technology, from their facts.
pub(crate) fn plan_between<A: GpuApi>(
    src: &Arc<dyn Device>,
    dst: &Arc<dyn Device>,
) -> Option<Route> {
    let (a, b) = (gpu_of::<A>(src)?, gpu_of::<A>(dst)?);
    if a.ordinal == b.ordinal {
        return None; // same device: the generic same-device path
    }
    Some(if a.peer_enabled(b.ordinal) || b.peer_enabled(a.ordinal) {
        Route {
            src: a.location,
            dst: b.location,
            kind: RouteKind::Peer,
            reason: "peer access is enabled: one peer copy".into(),
        }
    } else {
        Route {
            src: a.location,
            dst: b.location,
            kind: RouteKind::Staged,
            reason: format!(
                "no peer access: staged through pinned host memory in {} MiB chunks",
                STAGING >> 20
            )
            .into(),
        }
    })
}

/// A GPU and any other technology: staged through the GPU's pinned chunks, so the GPU
/// leg is always a DMA from or to pinned memory.
struct ThroughPinned<A>(std::marker::PhantomData<A>);

impl<A: GpuApi> CopyPath for ThroughPinned<A> {
    fn name(&self) -> &'static str {
        "staged through pinned host memory"
    }

    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route> {
        let gpu = gpu_of::<A>(src.device).or_else(|| gpu_of::<A>(dst.device))?;
        Some(Route {
            src: src.device.location(),
            dst: dst.device.location(),
            kind: RouteKind::Staged,
            reason: format!(
                "staged through pinned host memory of {} in {} MiB chunks",
                gpu.location,
                STAGING >> 20
            )
            .into(),
        })
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        let gpu = gpu_of::<A>(src.device())
            .or_else(|| gpu_of::<A>(dst.device()))
            .ok_or_else(|| Error::Invalid("pinned staging path without a GPU side".into()))?;
        through_pinned(gpu, src, so, dst, d, len)
    }
}

/// Copies chunk by chunk through `gpu`'s pinned staging memory.
pub(super) fn through_pinned<A: GpuApi>(
    gpu: &GpuDevice<A>,
    src: &Memory,
    so: usize,
    dst: &Memory,
    d: usize,
    len: usize,
) -> Result<()> {
    let _current = gpu.activate()?;
    gpu.with_staging(|chunks, _| {
        let mut done = 0;
        while done < len {
            let n = STAGING.min(len - done);
            // SAFETY: the pinned chunk holds STAGING bytes, used only under this lock.
            let chunk = unsafe { std::slice::from_raw_parts_mut(chunks[0] as *mut u8, n) };
            match gpu_of::<A>(src.device()).and_then(|g| g.ptr(src.native()).ok().map(|p| (g, p))) {
                Some((g, (p, _))) => g.download(chunk, p + (so + done) as u64, true)?,
                None => src.read(so + done, chunk)?,
            }
            match gpu_of::<A>(dst.device()).and_then(|g| g.ptr(dst.native()).ok().map(|p| (g, p))) {
                Some((g, (p, _))) => g.upload(p + (d + done) as u64, chunk, true)?,
                None => dst.write(d + done, chunk)?,
            }
            done += n;
        }
        Ok(())
    })
}
