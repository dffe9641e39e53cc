//! A user's own SYCL queue, adopted ([`QueueAdoption::adopt_queue`]): locus's work depends on a
//! barrier submitted to the user's queue (`ext_oneapi_submit_barrier`), and the user's
//! later work there waits for locus's SYCL events behind another barrier; both on the
//! device. Work of a worker thread is waited for on the host (SYCL's C API has no user
//! events).
//!
//! [`QueueAdoption::adopt_queue`]: crate::core::capability::QueueAdoption::adopt_queue

use super::*;
use crate::core::native_queue::{ForeignQueue, NativeQueue};

/// The adopted queue: locus's own reference to it (`DPCTLQueue_Copy`), deleted on drop.
pub(super) struct AdoptedSyclQueue {
    api: &'static DpctlApi,
    queue: DPCTLSyclQueueRef,
    location: Location,
}

// SAFETY: a `sycl::queue` may be used from any thread; dpctl's references are plain
// pointers to it.
unsafe impl Send for AdoptedSyclQueue {}
// SAFETY: as above; `&self` methods only submit barriers and wait.
unsafe impl Sync for AdoptedSyclQueue {}

impl Drop for AdoptedSyclQueue {
    fn drop(&mut self) {
        if crate::core::shutdown::is_shutting_down() {
            return;
        }
        // SAFETY: the reference `adopt` made, deleted once, here.
        unsafe { self.api.DPCTLQueue_Delete(self.queue) };
    }
}

impl SyclDevice {
    /// Adopts `queue` if it is a queue of this device in locus's context.
    ///
    /// # Safety
    /// `queue` is a live `DPCTLSyclQueueRef`.
    pub(super) unsafe fn adopt(&self, queue: DPCTLSyclQueueRef) -> Result<AdoptedSyclQueue> {
        let what = format!("SYCL queue {queue:?}");
        if queue.is_null() {
            return Err(Error::Invalid(format!(
                "{}: cannot adopt a null SYCL queue reference; pass a live DPCTLSyclQueueRef \
                 (dpctl's SyclQueue.addressof_ref())",
                self.location
            )));
        }
        // SAFETY: a live queue (the caller's contract); the device and context
        // references returned are owned here and deleted below.
        let (same_device, same_context) = unsafe {
            let device = self.api.DPCTLQueue_GetDevice(queue);
            let context = self.api.DPCTLQueue_GetContext(queue);
            let same = (
                !device.is_null() && self.api.DPCTLDevice_AreEq(device, self.device),
                !context.is_null() && self.api.DPCTLContext_AreEq(context, self.context),
            );
            if !device.is_null() {
                self.api.DPCTLDevice_Delete(device);
            }
            if !context.is_null() {
                self.api.DPCTLContext_Delete(context);
            }
            same
        };
        if !same_device {
            return Err(Error::Invalid(format!(
                "{}: cannot adopt {what}: it is a queue of another SYCL device, not `{}`; \
                 adopt it at that device's location",
                self.location, self.info.name
            )));
        }
        if !same_context {
            return Err(Error::Invalid(format!(
                "{}: cannot adopt {what}: it belongs to another SYCL context, whose queues \
                 cannot use locus's USM; make it in locus's context (the context of the \
                 queue locus::Queue::native_at hands out)",
                self.location
            )));
        }
        // SAFETY: a live queue; the copy is locus's own reference, deleted at drop.
        let copy = unsafe { self.copy_queue_ref(queue) }?;
        Ok(AdoptedSyclQueue {
            api: self.api,
            queue: copy,
            location: self.location,
        })
    }
}

impl AdoptedSyclQueue {
    fn barrier(&self, events: &[DPCTLSyclEventRef]) -> Result<SyclWork> {
        // SAFETY: locus's reference to a live queue; the events are live (held by the
        // caller) for the call, and SYCL keeps what a barrier depends on.
        let event = unsafe {
            if events.is_empty() {
                self.api.DPCTLQueue_SubmitBarrier(self.queue)
            } else {
                self.api.DPCTLQueue_SubmitBarrierForEvents(
                    self.queue,
                    events.as_ptr(),
                    events.len() as size_t,
                )
            }
        };
        if event.is_null() {
            return Err(Error::Backend {
                location: self.location,
                call: "DPCTLQueue_SubmitBarrier",
                message: "dpctl returned no event".into(),
                hint: "the adopted queue must stay valid while it is used".into(),
            });
        }
        Ok(SyclWork {
            api: self.api,
            event,
            profiled: false,
        })
    }
}

impl ForeignQueue for AdoptedSyclQueue {
    fn native(&self) -> NativeQueue {
        NativeQueue::Sycl(self.queue.cast())
    }

    fn marker(&self) -> Result<Option<Completion>> {
        self.barrier(&[]).map(|work| Some(Completion::new(work)))
    }

    fn follow(&self, work: &Completion) -> Result<bool> {
        let Some(event) = work.work_as::<SyclWork>().map(SyclWork::event) else {
            return Ok(false);
        };
        // The barrier's own event is not needed: its reference is deleted at once (SYCL
        // runs the barrier regardless). A barrier the runtime refuses (an event of
        // another context) leaves the wait to the caller, on the host.
        Ok(self.barrier(&[event]).map(drop).is_ok())
    }

    fn synchronize(&self) -> Result<()> {
        // SAFETY: locus's reference to a live queue.
        unsafe { self.api.DPCTLQueue_Wait(self.queue) };
        Ok(())
    }
}
