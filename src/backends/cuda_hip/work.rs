//! CUDA's and HIP's queued work: [`StreamEvent`] (an event recorded on the device's
//! stream) and the native asynchronous copies that make it.

use super::*;

/// A copy or kernel recorded on a GPU stream: an event polled and waited through the
/// vendor API, destroyed once done.
/// The event is queried, waited for and destroyed on whichever thread asks (the reaper,
/// a user's thread), so every call first makes its device current there, as cudarc
/// binds an event's context before using it.
pub(crate) struct StreamEvent<A: GpuApi> {
    pub(super) api: Arc<A>,
    pub(super) event: u64,
    /// The device whose context the event belongs to.
    pub(super) ordinal: u32,
    /// Recorded on the device's own stream (locus's), not on a user's adopted one.
    pub(super) own_stream: bool,
}

impl<A: GpuApi> StreamEvent<A> {
    /// A new event of device `ordinal` (current on this thread), to be recorded on its own
    /// stream (`own_stream`) or on a user's.
    pub(crate) fn create(api: &Arc<A>, ordinal: u32, own_stream: bool) -> Result<Self, GpuError> {
        Ok(StreamEvent {
            api: Arc::clone(api),
            event: api.event_create()?,
            ordinal,
            own_stream,
        })
    }

    fn failed(&self, doing: &str, e: GpuError) -> Error {
        Error::Invalid(format!(
            "{doing} a {} stream event of device {}: {e}",
            A::TECHNOLOGY.name(),
            self.ordinal
        ))
    }
}

impl<A: GpuApi> NativeWork for StreamEvent<A> {
    fn poll(&self) -> bool {
        // Not complete unless the driver says so: a refused query (no context) must not
        // let the memory the work uses go.
        let Ok(_current) = self.api.enter(self.ordinal) else {
            return false;
        };
        // SAFETY: the event is alive until this value is dropped.
        unsafe { self.api.event_query(self.event) }.unwrap_or(false)
    }

    fn block(&self) -> Result<()> {
        let _current = self
            .api
            .enter(self.ordinal)
            .map_err(|e| self.failed("making the device current to wait for", e))?;
        // SAFETY: as above.
        unsafe { self.api.event_wait(self.event) }.map_err(|e| self.failed("waiting for", e))
    }

    fn native_event(&self) -> Option<crate::core::completion::NativeEvent> {
        use crate::core::completion::NativeEvent;
        let (event, ordinal) = (self.event, self.ordinal);
        match A::TECHNOLOGY {
            Technology::Hip => Some(NativeEvent::Hip { event, ordinal }),
            _ => Some(NativeEvent::Cuda { event, ordinal }),
        }
    }
}

impl<A: GpuApi> Drop for StreamEvent<A> {
    fn drop(&mut self) {
        // At the process's end the event goes with the process: the driver may be
        // shutting down.
        if crate::core::shutdown::is_shutting_down() {
            return;
        }
        if let Ok(_current) = self.api.enter(self.ordinal) {
            // SAFETY: made by `event_create`, destroyed once; the driver defers
            // destroying an event that is still pending until it completes.
            unsafe { self.api.event_destroy(self.event) };
        }
    }
}

impl<A: GpuApi> GpuDevice<A> {
    /// True when everything locus queues on this device later runs after `work` with no
    /// host wait: an event on the device's own stream (one in-order stream per device
    /// carries every copy, memset, launch and event), or on a user's stream of this
    /// device, which the own stream is then made to wait for (`cuStreamWaitEvent`).
    pub(super) fn stream_ordered(&self, work: &Completion) -> bool {
        let Some(e) = work.work_as::<StreamEvent<A>>() else {
            return false;
        };
        if e.ordinal != self.ordinal || !Arc::ptr_eq(&e.api, &self.api) {
            return false;
        }
        if e.own_stream {
            return true;
        }
        let own = self.api.stream_handle(self.ordinal);
        // SAFETY: the event lives while `work` does; the device's own stream is live.
        self.activate().is_ok() && unsafe { self.api.stream_wait_event(own, e.event) }.is_ok()
    }

    /// Within this device: `cuMemcpyDtoDAsync` / `hipMemcpyAsync` on its stream and an
    /// event recorded after it (device, pinned and managed memory alike).
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
        let (Some((s, _)), Some((d, _))) = (A::unpack(src.native()), A::unpack(dst.native()))
        else {
            return Ok(None);
        };
        if src.location() != self.location
            || dst.location() != self.location
            || src.overlaps(src_offset, dst, dst_offset, len)
        {
            return Ok(None);
        }
        // Work on this stream is ordered by it; any other dependency still running
        // sends the copy to a worker that waits for it.
        if native_deps(after, |c| self.stream_ordered(c).then_some(()))?.is_none() {
            return Ok(None);
        }
        let _current = self.activate()?;
        let event = StreamEvent::create(&self.api, self.ordinal, true)
            .map_err(|e| self.fail("event create", e))?;
        // SAFETY: both ranges were bounds-checked and do not overlap; the returned Event
        // keeps both memories alive until the copy (and the event after it) completes.
        unsafe {
            self.api
                .on_device(d + dst_offset as u64, s + src_offset as u64, len, false)
                .and_then(|()| self.api.event_record(event.event))
        }
        .map_err(|e| self.fail("copy on device", e))?;
        Ok(Some(Completion::new(event)))
    }
}
