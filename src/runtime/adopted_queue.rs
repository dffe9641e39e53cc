//! Queues adopted from a user's own runtime queue ([`Queue::from_native`]): a CUDA or
//! HIP stream, an OpenCL command queue, a SYCL queue, locus's wgpu queue. Work locus
//! submits on the adopted [`Queue`] starts after everything the user submitted to the
//! native queue before (a marker queued there is its dependency), and the user's later
//! work on the native queue starts after locus's (a barrier on locus's event there): both
//! on the device, with no host wait, where the runtime can express it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::event::{when_done, Event};
use super::queue::Queue;
use super::registry::registry;
use crate::core::completion::Dependency;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::native_queue::{ForeignQueue, NativeQueue};

/// A queue adopted at a location, or the record that its [`AdoptedQueue`] was dropped.
#[derive(Clone)]
enum Adoption {
    Live(Location, Arc<dyn ForeignQueue>),
    Dropped(Location, String),
}

fn adoptions() -> &'static Mutex<HashMap<u64, Adoption>> {
    static ADOPTIONS: OnceLock<Mutex<HashMap<u64, Adoption>>> = OnceLock::new();
    ADOPTIONS.get_or_init(Mutex::default)
}

fn lock() -> std::sync::MutexGuard<'static, HashMap<u64, Adoption>> {
    adoptions().lock().unwrap_or_else(|e| e.into_inner())
}

/// Set by the first adoption: until then no queue is adopted, and every submission
/// skips the table's lock.
static ANY: AtomicBool = AtomicBool::new(false);

/// The native queue behind queue `id`, if it was adopted; an error once its
/// [`AdoptedQueue`] is gone (work submitted then would not be ordered with the user's).
pub(crate) fn foreign(id: u64) -> Result<Option<(Location, Arc<dyn ForeignQueue>)>> {
    if !ANY.load(Ordering::Acquire) {
        return Ok(None);
    }
    match lock().get(&id) {
        None => Ok(None),
        Some(Adoption::Live(location, queue)) => Ok(Some((*location, Arc::clone(queue)))),
        Some(Adoption::Dropped(location, what)) => Err(Error::Invalid(format!(
            "{location}: locus queue {id} was adopted from {what}, and its AdoptedQueue has \
             been dropped; keep the AdoptedQueue alive while work is submitted on its queue"
        ))),
    }
}

/// The event of everything submitted to `queue` so far, as a dependency of locus's work.
pub(crate) fn marker(queue: &dyn ForeignQueue) -> Result<Option<Event>> {
    Ok(queue.marker()?.map(|work| Event::native(work, Vec::new())))
}

/// Orders `queue`'s later work after `event`: on the device where the runtime can wait
/// for it (its own event, or a gate opened when a worker's copy ends), else by waiting
/// here.
pub(crate) fn follow(queue: &dyn ForeignQueue, event: &Event) -> Result<()> {
    if event.is_complete() {
        return event.wait();
    }
    if let Some(work) = Dependency::completion(event) {
        if queue.follow(work)? {
            return Ok(());
        }
    }
    if let Some(open) = queue.gate()? {
        let theirs = event.clone();
        when_done(event.clone(), move || open(theirs.wait().is_ok()));
        return Ok(());
    }
    event.wait()
}

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

    /// Waits for locus's work on the queue and everything else submitted to the native
    /// queue (HAMR's `synchronize`: `cudaStreamSynchronize`).
    pub fn synchronize(&self) -> Result<()> {
        self.queue.wait()
    }
}

impl Drop for AdoptedQueue {
    fn drop(&mut self) {
        let what = self.native.native().describe();
        lock().insert(self.queue.id(), Adoption::Dropped(self.location, what));
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
    /// [`AdoptedQueue`] and the work submitted on it.
    pub unsafe fn from_native(location: Location, native: NativeQueue) -> Result<AdoptedQueue> {
        let device = registry().device(location)?;
        Ok(Queue::adopting(location, device.adopt_queue(&native)?))
    }

    /// A new queue standing for `foreign`, a queue of `location`'s device.
    pub(crate) fn adopting(location: Location, foreign: Arc<dyn ForeignQueue>) -> AdoptedQueue {
        let queue = Queue::new();
        lock().insert(queue.id(), Adoption::Live(location, Arc::clone(&foreign)));
        ANY.store(true, Ordering::Release);
        AdoptedQueue {
            queue,
            location,
            native: foreign,
        }
    }

    /// For an adopted queue, an event of the work the user submitted to the native queue
    /// so far (a failed marker drains the queue instead); `None` for locus's own queues,
    /// whose work locus already tracks.
    pub(crate) fn foreign_marker(self) -> Option<Event> {
        let (_, queue) = foreign(self.id()).ok().flatten()?;
        match marker(queue.as_ref()) {
            Ok(marker) => marker.filter(|m| !m.is_complete()),
            Err(_) => {
                let _ = queue.synchronize();
                None
            }
        }
    }

    /// The runtime queue to hand a user at `location`: the one adopted, for an adopted
    /// queue of that location; otherwise the device's own in-order queue, that locus's
    /// queued copies and launches there run on (a user's work submitted to it runs after
    /// them; work locus ran on a worker thread is ordered only by this queue's last
    /// event, [`Queue::last`]). `None` where the technology has no queue (host, OpenMP).
    pub fn native_at(self, location: Location) -> Option<NativeQueue> {
        if let Some(Adoption::Live(at, queue)) = lock().get(&self.id()) {
            if *at == location {
                return Some(queue.native());
            }
        }
        registry().device(location).ok()?.native_queue()
    }
}
