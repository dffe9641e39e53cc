//! The table of adopted queues, by locus queue number, and how work is ordered with one:
//! a marker of the user's work there as a dependency of locus's, and the user's later
//! work held behind locus's event (a barrier, `cuStreamWaitEvent`, an OpenCL user event),
//! or a wait here where the runtime has neither. [`Queue`](super::queue::Queue) asks it
//! at every submission; [`AdoptedQueue`](super::adopted_queue::AdoptedQueue) fills it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::event::{when_done, Event};
use crate::core::completion::Dependency;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::native_queue::{ForeignQueue, NativeQueue};

/// A queue adopted at a location, or the record that its [`AdoptedQueue`] was dropped.
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
/// `AdoptedQueue` is gone (work submitted then would not be ordered with the user's).
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

/// Records queue `id` as standing for `foreign`, a queue of `location`'s device.
pub(crate) fn adopt(id: u64, location: Location, foreign: Arc<dyn ForeignQueue>) {
    lock().insert(id, Adoption::Live(location, foreign));
    ANY.store(true, Ordering::Release);
}

/// Records that queue `id`'s adoption (of `what`) was dropped: work on it is refused.
pub(crate) fn let_go(id: u64, location: Location, what: String) {
    lock().insert(id, Adoption::Dropped(location, what));
}

/// The native queue queue `id` was adopted from at `location`, while adopted.
pub(crate) fn adopted_at(id: u64, location: Location) -> Option<NativeQueue> {
    match lock().get(&id) {
        Some(Adoption::Live(at, queue)) if *at == location => Some(queue.native()),
        _ => None,
    }
}

/// For an adopted queue `id`, an event of the work the user submitted to the native
/// queue so far (a failed marker drains the queue instead); `None` for locus's own
/// queues, whose work locus already tracks.
pub(crate) fn marker_of(id: u64) -> Option<Event> {
    let (_, queue) = foreign(id).ok().flatten()?;
    match marker(queue.as_ref()) {
        Ok(marker) => marker.filter(|m| !m.is_complete()),
        Err(_) => {
            let _ = queue.synchronize();
            None
        }
    }
}
