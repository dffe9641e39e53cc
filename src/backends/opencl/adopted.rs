//! A user's own OpenCL command queue, adopted ([`QueueAdoption::adopt_queue`]): locus's work
//! waits for a marker of the user's work there, and the user's later work waits for
//! locus's behind a barrier (its `cl_event` in the wait list; a user event for work of
//! a worker thread), all on the device.
//!
//! [`QueueAdoption::adopt_queue`]: crate::core::capability::QueueAdoption::adopt_queue

use cl3::command_queue::{
    enqueue_barrier_with_wait_list, enqueue_marker_with_wait_list, get_command_queue_info,
    release_command_queue, retain_command_queue, CL_QUEUE_CONTEXT, CL_QUEUE_DEVICE,
};
use cl3::event::{create_user_event, set_user_event_status};
use cl3::info_type::InfoType;
use opencl3::types::{cl_command_queue, cl_context};

use super::*;
use crate::core::native_queue::{ForeignQueue, Gate, NativeQueue};

/// The adopted queue, retained while adopted.
pub(super) struct AdoptedClQueue {
    queue: cl_command_queue,
    context: cl_context,
    location: Location,
    /// It is locus's own queue of the device (handed out, then adopted).
    own: bool,
}

// SAFETY: OpenCL queues, contexts and events may be used from any thread (OpenCL 1.1+).
unsafe impl Send for AdoptedClQueue {}
// SAFETY: as above; `&self` methods only enqueue, query and wait.
unsafe impl Sync for AdoptedClQueue {}

impl Drop for AdoptedClQueue {
    fn drop(&mut self) {
        if crate::core::shutdown::is_shutting_down() {
            return;
        }
        // SAFETY: the reference `adopt` retained, released once, here.
        let _ = unsafe { release_command_queue(self.queue) };
    }
}

impl AdoptedClQueue {
    fn fail(&self, call: &'static str, code: cl_int) -> Error {
        Error::Backend {
            location: self.location,
            call,
            message: cl_text(code),
            hint: "the adopted command queue must stay valid while it is used".into(),
        }
    }
}

impl OpenClDevice {
    /// Adopts `queue` if it is a queue of this device in locus's context.
    ///
    /// # Safety
    /// `queue` is a live `cl_command_queue` (of any context).
    pub(super) unsafe fn adopt(&self, queue: cl_command_queue) -> Result<AdoptedClQueue> {
        let ptr = |info| match get_command_queue_info(queue, info) {
            Ok(InfoType::Ptr(p)) => Ok(p as usize),
            Ok(_) => Ok(0),
            Err(code) => Err(code),
        };
        let what = format!("OpenCL command queue {queue:?}");
        let (device, context) = match (ptr(CL_QUEUE_DEVICE), ptr(CL_QUEUE_CONTEXT)) {
            (Ok(d), Ok(c)) => (d, c),
            (Err(code), _) | (_, Err(code)) => {
                return Err(Error::Invalid(format!(
                    "{}: cannot adopt {what}: clGetCommandQueueInfo says {}; pass a live queue",
                    self.location,
                    cl_text(code)
                )))
            }
        };
        if device != self.device.id() as usize {
            return Err(Error::Invalid(format!(
                "{}: cannot adopt {what}: it is a queue of another OpenCL device \
                 ({device:#x}, not {:?} `{}`); adopt it at that device's location",
                self.location,
                self.device.id(),
                self.info.name
            )));
        }
        if context != self.context.get() as usize {
            return Err(Error::Invalid(format!(
                "{}: cannot adopt {what}: it belongs to another context ({context:#x}, not \
                 locus's {:?}), which cannot use locus's buffers; make it in locus's context \
                 (locus::Queue::native_at hands out locus's queue, whose context it is)",
                self.location,
                self.context.get()
            )));
        }
        // SAFETY: a live queue (checked above); released by the adopted value's drop.
        unsafe { retain_command_queue(queue) }.map_err(|c| self.fail("clRetainCommandQueue", c))?;
        Ok(AdoptedClQueue {
            queue,
            context: self.context.get(),
            location: self.location,
            own: queue == self.queue.get(),
        })
    }
}

impl ForeignQueue for AdoptedClQueue {
    fn native(&self) -> NativeQueue {
        NativeQueue::OpenCl(self.queue.cast())
    }

    fn marker(&self) -> Result<Option<Completion>> {
        // SAFETY: the retained queue; an empty wait list.
        let event = unsafe { enqueue_marker_with_wait_list(self.queue, 0, ptr::null()) }
            .map_err(|c| self.fail("clEnqueueMarkerWithWaitList", c))?;
        Ok(Some(Completion::new(ClWork::elsewhere(event))))
    }

    fn follow(&self, work: &Completion) -> Result<bool> {
        let Some(event) = work.work_as::<ClWork>().map(ClWork::event) else {
            return Ok(false);
        };
        let context = opencl3::event::get_event_info(event, opencl3::event::CL_EVENT_CONTEXT);
        if !matches!(context, Ok(InfoType::Ptr(c)) if c as usize == self.context as usize) {
            return Ok(false);
        }
        // SAFETY: the retained queue; `event` lives while `work` does, and OpenCL keeps
        // what a wait list names for as long as the barrier needs it.
        let barrier = unsafe { enqueue_barrier_with_wait_list(self.queue, 1, &event) }
            .map_err(|c| self.fail("clEnqueueBarrierWithWaitList", c))?;
        // SAFETY: the barrier's event, not needed: released once, here.
        let _ = unsafe { release_event(barrier) };
        Ok(true)
    }

    fn gate(&self) -> Result<Option<Gate>> {
        // Never on locus's own queue: the worker's copy the gate waits for may enqueue
        // there itself, behind the gate (a deadlock); the caller waits on the host.
        if self.own {
            return Ok(None);
        }
        let gate =
            create_user_event(self.context).map_err(|c| self.fail("clCreateUserEvent", c))?;
        // SAFETY: the retained queue; the user event lives until the gate opens.
        match unsafe { enqueue_barrier_with_wait_list(self.queue, 1, &gate) } {
            // SAFETY: the barrier's event, not needed: released once, here.
            Ok(barrier) => drop(unsafe { release_event(barrier) }),
            Err(code) => {
                // SAFETY: the user event made above, used by nothing: released once.
                let _ = unsafe { release_event(gate) };
                return Err(self.fail("clEnqueueBarrierWithWaitList", code));
            }
        }
        let gate = ClWork::elsewhere(gate);
        Ok(Some(Box::new(move |ok: bool| {
            // A negative status fails the commands waiting for it (CL_COMPLETE: 0).
            let status = if ok { opencl3::event::CL_COMPLETE } else { -1 };
            let _ = set_user_event_status(gate.event(), status);
            drop(gate);
        })))
    }

    fn synchronize(&self) -> Result<()> {
        cl3::command_queue::finish(self.queue).map_err(|c| self.fail("clFinish", c))
    }
}
