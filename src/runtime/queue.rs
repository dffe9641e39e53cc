//! [`Queue`]: a stream of asynchronous work, run in submission order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::event::Event;
use crate::core::error::Result;

/// A queue of work (a stream): asynchronous operations submitted on one queue
/// ([`Memory::copy_to_async_on`](crate::Memory::copy_to_async_on)) run in submission order, each after the one
/// before (natively chained where the technology allows: OpenCL and SYCL events). Memory
/// freed on a queue ([`Memory::release_after`](crate::Memory::release_after)) is handed out again at once to an
/// allocation on the same queue ([`Memory::from_resource_on`](crate::Memory::from_resource_on)), whose work on
/// that queue runs after the earlier work, and to other queues only after its event.
///
/// A `Queue` is a name (cheap to copy); locus keeps each queue's last event while its
/// work may run (the memory that work uses stays alive until then, even when every other
/// handle is dropped), and forgets finished queues as new ones come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Queue(u64);

type Slot = Arc<Mutex<Option<Event>>>;

/// The last event of every queue with work that may still run.
#[derive(Default)]
struct Tails {
    slots: HashMap<u64, Slot>,
    /// Finished queues are dropped from `slots` when it grows to this many.
    sweep_at: usize,
}

impl Tails {
    /// Forgets queues whose last work is done (and that no call is using).
    fn sweep(&mut self) {
        self.slots.retain(|_, slot| {
            if Arc::strong_count(slot) > 1 {
                return true; // in use by a call right now
            }
            let Ok(mut tail) = slot.try_lock() else {
                return true;
            };
            if tail.as_ref().is_some_and(Event::is_complete) {
                *tail = None;
            }
            tail.is_some()
        });
        self.sweep_at = (2 * self.slots.len()).max(64);
    }
}

fn tails() -> &'static Mutex<Tails> {
    static TAILS: OnceLock<Mutex<Tails>> = OnceLock::new();
    TAILS.get_or_init(Mutex::default)
}

/// How many queues locus tracks now (queues with work that may still run, and recently
/// finished ones not yet forgotten).
#[cfg(test)]
pub(crate) fn tracked_queues() -> usize {
    tails()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .slots
        .len()
}

impl Queue {
    /// The queue's number (unique in the process; the `Stream` column of allocation
    /// logs).
    pub fn id(self) -> u64 {
        self.0
    }

    /// A new, distinct queue.
    pub fn new() -> Queue {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Queue(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    fn slot(&self) -> Slot {
        let mut tails = tails().lock().unwrap_or_else(|e| e.into_inner());
        if tails.slots.len() >= tails.sweep_at {
            tails.sweep();
        }
        Arc::clone(tails.slots.entry(self.0).or_default())
    }

    /// Submits work on this queue: `submit` gets the dependencies (`after` plus the
    /// queue's last event) and returns the work's event, which becomes the last.
    pub(crate) fn submit(
        &self,
        after: &[Event],
        submit: impl FnOnce(&[Event]) -> Result<Event>,
    ) -> Result<Event> {
        let slot = self.slot();
        let mut tail = slot.lock().unwrap_or_else(|e| e.into_inner());
        let previous = tail.take().filter(|t| !t.is_complete());
        let mut deps = after.to_vec();
        deps.extend(previous.iter().cloned());
        match submit(&deps) {
            Ok(event) => {
                *tail = Some(event.clone());
                Ok(event)
            }
            Err(e) => {
                *tail = previous; // nothing was submitted: the earlier work stays last
                Err(e)
            }
        }
    }

    /// The last work submitted on this queue, while it may still be running.
    pub fn last(&self) -> Option<Event> {
        let slot = self.slot();
        let mut tail = slot.lock().unwrap_or_else(|e| e.into_inner());
        if tail.as_ref().is_some_and(Event::is_complete) {
            *tail = None;
        }
        tail.clone()
    }

    /// Waits for everything submitted on this queue (the synchronous form of the queue).
    pub fn wait(&self) -> Result<()> {
        let slot = self.slot();
        let mut tail = slot.lock().unwrap_or_else(|e| e.into_inner());
        match tail.take() {
            Some(t) => t.wait(),
            None => Ok(()),
        }
    }
}

impl Default for Queue {
    fn default() -> Queue {
        Queue::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_queues_are_forgotten() {
        let src = Arc::new(
            crate::core::memory::Memory::new(crate::core::location::Location::Host, 64).unwrap(),
        );
        let dst = Arc::new(
            crate::core::memory::Memory::new(crate::core::location::Location::Host, 64).unwrap(),
        );
        for _ in 0..1000 {
            // One queue per copy, never used again (the pattern that leaked).
            let queue = Queue::new();
            let event = src.copy_to_async_on(queue, 0, &dst, 0, 64, &[]).unwrap();
            event.wait().unwrap();
        }
        let tracked = tracked_queues();
        assert!(
            tracked < 200,
            "{tracked} queues tracked after 1000 finished ones"
        );
    }
}
