//! Queues adopted from a user's own runtime queue ([`Queue::from_native`]): a CUDA or
//! HIP stream, an OpenCL command queue, a SYCL queue, locus's wgpu queue. Work locus
//! submits on the adopted [`Queue`] starts after everything the user submitted to the
//! native queue before (a marker queued there is its dependency), and the user's later
//! work on the native queue starts after locus's (a barrier on locus's event there): both
//! on the device, with no host wait, where the runtime can express it
//! ([`adoptions`](super::adoptions) keeps the table and does the ordering).

use std::sync::Arc;

use super::adoptions;
use super::event::Event;
use super::queue::Queue;
use super::registry::registry;
use crate::core::error::Result;
use crate::core::location::Location;
use crate::core::native_queue::{ForeignQueue, NativeQueue};

/// A user's own runtime queue adopted by locus ([`Queue::from_native`]): [`queue`]
/// names it to every locus call that takes a [`Queue`] (copies, buffers' moves,
/// allocations on a resource, releases). Dropping it lets go of locus's reference to the
/// native queue (OpenCL and SYCL queues are retained while adopted; a CUDA or HIP stream
/// is never destroyed by locus); work already submitted runs on.
///
/// [`queue`]: AdoptedQueue::queue
pub struct AdoptedQueue {
    queue: Queue,
    location: Location,
    native: Arc<dyn ForeignQueue>,
}

impl std::fmt::Debug for AdoptedQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdoptedQueue")
            .field("queue", &self.queue.id())
            .field("location", &self.location)
            .field("native", &self.native.native())
            .finish()
    }
}

impl AdoptedQueue {
    /// The locus queue that stands for the native one.
    pub fn queue(&self) -> Queue {
        self.queue
    }

    /// Where its device is.
    pub fn location(&self) -> Location {
        self.location
    }

    /// The native queue adopted.
    pub fn native(&self) -> NativeQueue {
        self.native.native()
    }

    /// An event that completes once everything submitted to the native queue so far has
    /// (a marker queued there: CUDA's and HIP's events, an OpenCL marker, a SYCL
    /// barrier), with no host wait; already complete where nothing is pending there. What
    /// [`Memory::release_after`](crate::Memory::release_after) takes to give memory back
    /// after the user's work on the queue, as a stream-ordered free does.
    pub fn marker(&self) -> Event {
        adoptions::marker_of(self.queue.id()).unwrap_or_else(Event::done)
    }

    /// Waits for locus's work on the queue and everything else submitted to the native
    /// queue (HAMR's `synchronize`: `cudaStreamSynchronize`).
    pub fn synchronize(&self) -> Result<()> {
        self.queue.wait()
    }
}

impl Drop for AdoptedQueue {
    fn drop(&mut self) {
        let what = self.native.native().describe();
        adoptions::let_go(self.queue.id(), self.location, what);
    }
}

impl Queue {
    /// Adopts a user's own queue of `location`'s device: locus's work submitted on the
    /// returned [`AdoptedQueue::queue`] runs after the work the user submitted to it
    /// before, and the user's later work there runs after locus's, ordered on the device
    /// (a marker and a barrier; CUDA's and HIP's events) with no host wait where the
    /// runtime allows (work locus runs on a worker thread is waited for on the host by
    /// runtimes with no user events: SYCL, CUDA, HIP, WebGPU).
    ///
    /// The queue must belong to that device and to the context locus uses there
    /// (OpenCL's and SYCL's: [`Queue::native_at`] hands locus's queue out, whose context
    /// it is); anything else is an error naming both, and nothing is adopted.
    ///
    /// # Safety
    /// The handle is a live queue of the runtime it names (a `cl_command_queue`, a
    /// `DPCTLSyclQueueRef`, a `CUstream` / `hipStream_t` of device `ordinal`'s primary
    /// context). OpenCL and SYCL queues may be released by the user after this returns
    /// (locus holds its own reference); a CUDA or HIP stream must outlive the
    /// [`AdoptedQueue`] and the work submitted on it. Locus cannot check that a CUDA or
    /// HIP stream is alive: the drivers (CUDA 12 and later, HIP 7) take a destroyed
    /// stream's handle as a dangling pointer and may crash instead of answering an
    /// error. What adoption checks is the device (the ordinal) and that the driver takes
    /// an event recorded on the stream (it refuses a stream of another context).
    pub unsafe fn from_native(location: Location, native: NativeQueue) -> Result<AdoptedQueue> {
        let device = registry().device(location)?;
        Ok(Queue::adopting(location, device.adopt_queue(&native)?))
    }

    /// A new queue standing for `foreign`, a queue of `location`'s device.
    pub(crate) fn adopting(location: Location, foreign: Arc<dyn ForeignQueue>) -> AdoptedQueue {
        let queue = Queue::new();
        adoptions::adopt(queue.id(), location, Arc::clone(&foreign));
        AdoptedQueue {
            queue,
            location,
            native: foreign,
        }
    }

    /// The runtime queue to hand a user at `location`: the one adopted, for an adopted
    /// queue of that location; otherwise the device's own in-order queue, that locus's
    /// queued copies and launches there run on (a user's work submitted to it runs after
    /// them; work locus ran on a worker thread is ordered only by this queue's last
    /// event, [`Queue::last`]). `None` where the technology has no queue (host, OpenMP).
    pub fn native_at(self, location: Location) -> Option<NativeQueue> {
        adoptions::adopted_at(self.id(), location)
            .or_else(|| registry().device(location).ok()?.native_queue())
    }
}
