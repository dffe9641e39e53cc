//! [`Queue`]: a stream of asynchronous work, run in submission order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::adoptions;
use super::event::Event;
use crate::core::error::{Error, Result};

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
///
/// ```
/// use std::sync::Arc;
///
/// use locus::{Location, Memory, Queue};
///
/// let queue = Queue::new();
/// let a = Arc::new(Memory::new(Location::Host, 4096)?);
/// a.write(0, &[1u8; 4096])?;
/// let b = Arc::new(Memory::new(*locus::available().last().unwrap(), 4096)?);
/// let c = Arc::new(Memory::new(Location::Host, 4096)?);
/// a.copy_to_async_on(queue, 0, &b, 0, 4096, &[])?; // returns at once
/// b.copy_to_async_on(queue, 0, &c, 0, 4096, &[])?; // runs after the first
/// queue.wait()?;
/// let mut back = [0u8; 4096];
/// c.read(0, &mut back)?;
/// assert!(back.iter().all(|&x| x == 1));
/// # Ok::<(), locus::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Queue(u64);

/// The work a queue's next submission must follow: its last work, and the events it was
/// ordered after since ([`Queue::order_after`]). Kept as the events themselves, so that a
/// backend chains each natively (an OpenCL or SYCL event, a CUDA stream event) where a
/// combined event would send the work to a waiting thread.
type Slot = Arc<Mutex<Vec<Event>>>;

/// The events that later work on every queue with work that may still run must follow.
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
            tail.retain(|e| !e.is_complete());
            !tail.is_empty()
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

    /// Submits work on this queue: `submit` gets the dependencies (`after` plus what the
    /// queue's work must follow) and returns the work's event, which becomes the last.
    pub(crate) fn submit(
        &self,
        after: &[Event],
        submit: impl FnOnce(&[Event]) -> Result<Event>,
    ) -> Result<Event> {
        let foreign = adoptions::foreign(self.0)?;
        let slot = self.slot();
        let mut tail = slot.lock().unwrap_or_else(|e| e.into_inner());
        tail.retain(|e| !e.is_complete());
        let mut deps = after.to_vec();
        deps.extend(tail.iter().cloned());
        // An adopted queue: after what the user submitted to it so far.
        if let Some((_, queue)) = &foreign {
            deps.extend(adoptions::marker(queue.as_ref())?);
        }
        // Nothing submitted on error: what the queue followed, it still follows.
        let event = submit(&deps)?;
        // The new work runs after everything before it: its event stands for all.
        *tail = vec![event.clone()];
        drop(tail);
        // And the user's later work on the adopted queue after it.
        if let Some((location, queue)) = foreign {
            adoptions::follow(queue.as_ref(), &event).map_err(|e| {
                Error::Invalid(format!(
                    "{location}: the work was submitted, but ordering {}'s later work after \
                     it failed ({e}); wait for the returned event before using the queue",
                    queue.native().describe()
                ))
            })?;
        }
        Ok(event)
    }

    /// Orders the work submitted on this queue from now on after `event`, without a wait
    /// here (CUDA's `cuStreamWaitEvent`, an OpenCL wait list, SYCL's `depends_on`: the
    /// next submission takes `event` itself as a dependency, chained natively where its
    /// backend can).
    pub(crate) fn order_after(&self, event: Event) {
        if event.is_complete() {
            return;
        }
        let slot = self.slot();
        slot.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    }

    /// The last work submitted on this queue, while it may still be running (one event
    /// for everything the queue's next work would follow).
    pub fn last(&self) -> Option<Event> {
        let mut pending = self.pending();
        match pending.len() {
            0 => None,
            1 => pending.pop(),
            // No thread could wait for them: wait here for all but the last.
            _ => Event::all(&pending).ok().or_else(|| {
                let last = pending.pop();
                pending.iter().for_each(|e| {
                    let _ = e.wait();
                });
                last
            }),
        }
    }

    /// The events the queue's next work would follow that are still running (kept apart:
    /// see [`Queue::order_after`]).
    ///
    /// For an adopted queue, a marker of the user's work on it so far is among them (a
    /// failed marker is waited for here: the queue is drained instead).
    pub(crate) fn pending(&self) -> Vec<Event> {
        let slot = self.slot();
        let mut tail = slot.lock().unwrap_or_else(|e| e.into_inner());
        tail.retain(|e| !e.is_complete());
        let mut pending = tail.clone();
        drop(tail);
        pending.extend(self.foreign_marker());
        pending
    }

    /// For a queue adopted from a user's ([`Queue::from_native`]), an event of the work
    /// the user submitted to the native queue so far; `None` for locus's own queues.
    pub(crate) fn foreign_marker(self) -> Option<Event> {
        adoptions::marker_of(self.0)
    }

    /// Waits for everything submitted on this queue (the synchronous form of the queue);
    /// the first failure.
    ///
    /// For an adopted queue ([`Queue::from_native`]), everything submitted to the native
    /// queue too (`clFinish`, `queue.wait()`, `cuStreamSynchronize`).
    pub fn wait(&self) -> Result<()> {
        let foreign = adoptions::foreign(self.0)?;
        let slot = self.slot();
        let mut tail = slot.lock().unwrap_or_else(|e| e.into_inner());
        let taken = std::mem::take(&mut *tail);
        drop(tail);
        let ours = taken.iter().map(Event::wait).fold(Ok(()), Result::and);
        match foreign {
            Some((_, queue)) => ours.and(queue.synchronize()),
            None => ours,
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
