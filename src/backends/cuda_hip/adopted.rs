//! A user's own CUDA or HIP stream, adopted ([`QueueAdoption::adopt_queue`]): locus's stream
//! waits on the device for an event recorded on the user's stream (`cuStreamWaitEvent`),
//! and the user's stream waits for locus's stream events the same way. Work locus runs
//! on a worker thread is waited for on the host (neither API has user events).
//!
//! [`QueueAdoption::adopt_queue`]: crate::core::capability::QueueAdoption::adopt_queue

use super::work::StreamEvent;
use super::*;
use crate::core::native_queue::{ForeignQueue, NativeQueue};

/// The adopted stream (never destroyed by locus).
pub(super) struct AdoptedStream<A: GpuApi> {
    api: Arc<A>,
    ordinal: u32,
    location: Location,
    stream: u64,
    /// The stream as it was handed over.
    native: NativeQueue,
}

impl<A: GpuApi> AdoptedStream<A> {
    fn fail(&self, what: &'static str, e: GpuError) -> Error {
        Error::Backend {
            location: self.location,
            call: e.call,
            message: format!("{what}: {e}"),
            hint: "the adopted stream must stay alive while it is used".into(),
        }
    }

    fn activate(&self) -> Result<Entered<'_, A>> {
        self.api
            .enter(self.ordinal)
            .map_err(|e| self.fail("set device", e))
    }

    /// A new event recorded on the user's stream.
    fn record(&self) -> Result<StreamEvent<A>> {
        let _current = self.activate()?;
        let event = StreamEvent::create(&self.api, self.ordinal, false)
            .map_err(|e| self.fail("event create", e))?;
        // SAFETY: a live event of the current device; the stream is live (the adopter's
        // contract), and the driver refuses one of another context.
        unsafe { self.api.event_record_on(event.event, self.stream) }
            .map_err(|e| self.fail("record an event on the adopted stream", e))?;
        Ok(event)
    }
}

impl<A: GpuApi> GpuDevice<A> {
    /// Adopts `stream` of device `ordinal` (`native`). Checked where the driver can
    /// tell: the device, and an event recorded on the stream (refused for a stream of
    /// another context). Whether the stream is still alive the driver cannot tell: a
    /// destroyed stream's handle is a dangling pointer to it (CUDA 12+, HIP 7), which
    /// may crash rather than err; that stays the adopter's contract.
    pub(super) fn adopt(
        &self,
        native: &NativeQueue,
        stream: u64,
        ordinal: u32,
    ) -> Result<AdoptedStream<A>> {
        let what = format!(
            "{} stream {stream:#x} of device {ordinal}",
            A::TECHNOLOGY.name()
        );
        if ordinal != self.ordinal {
            return Err(Error::Invalid(format!(
                "{}: cannot adopt {what}: it belongs to another device; adopt it at {}:{ordinal}",
                self.location,
                A::TECHNOLOGY.name().to_lowercase()
            )));
        }
        let adopted = AdoptedStream {
            api: Arc::clone(&self.api),
            ordinal,
            location: self.location,
            stream,
            native: native.clone(),
        };
        adopted.record().map_err(|e| {
            Error::Invalid(format!(
                "{}: cannot adopt {what}: the driver refused to record an event on it \
                 ({e}); pass a stream of this device's primary context (a stream of \
                 another context, or of another device, is refused; one already destroyed \
                 cannot be detected and must never be passed)",
                self.location
            ))
        })?;
        Ok(adopted)
    }
}

impl<A: GpuApi> ForeignQueue for AdoptedStream<A> {
    fn native(&self) -> NativeQueue {
        self.native.clone()
    }

    fn marker(&self) -> Result<Option<Completion>> {
        self.record().map(|e| Some(Completion::new(e)))
    }

    fn follow(&self, work: &Completion) -> Result<bool> {
        let Some(e) = work.work_as::<StreamEvent<A>>() else {
            return Ok(false);
        };
        if !Arc::ptr_eq(&e.api, &self.api) {
            return Ok(false);
        }
        let _current = self.activate()?;
        // SAFETY: the event lives while `work` does; the stream is live.
        unsafe { self.api.stream_wait_event(self.stream, e.event) }
            .map_err(|e| self.fail("make the adopted stream wait", e))?;
        Ok(true)
    }

    fn synchronize(&self) -> Result<()> {
        let _current = self.activate()?;
        // SAFETY: the stream is live (the adopter's contract).
        unsafe { self.api.synchronize_stream(self.stream) }
            .map_err(|e| self.fail("synchronize the adopted stream", e))
    }
}
