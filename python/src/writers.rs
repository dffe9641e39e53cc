//! A buffer's open write handles (their memory stays the newest copy, and what their
//! consumers queued lands before locus reads again) and the record of the buffers a
//! call on this thread holds (a Python host function may read its own arguments).

use super::*;

/// A write handle handed out: the memory it writes stays the newest copy while the
/// handle is open, and is declared written once more after it closes (or goes without
/// being closed), so that writes made between a read elsewhere and the close are kept.
pub(crate) struct Writer {
    view: Weak<View>,
    memory: Arc<Memory>,
    consumer: Location,
    /// For a handle at a SYCL location: the queues a consumer queues its writes on
    /// (locus's own, which `dpnp.asarray` uses, and dpctl's cached queue of the device,
    /// which `dpnp.from_dlpack` uses). Waited for before the buffer is used again.
    queues: Option<crate::usm::ConsumerQueues>,
    /// For a handle at a CUDA or HIP location: the streams its consumers named.
    streams: Option<Arc<crate::consumer_streams::ConsumerStreams>>,
}

impl Writer {
    /// The write handle `view` at `consumer` (with its consumers' queues, for SYCL).
    pub(crate) fn new(
        view: &Arc<View>,
        consumer: Location,
        queues: Option<crate::usm::ConsumerQueues>,
    ) -> Writer {
        Writer {
            view: Arc::downgrade(view),
            memory: Arc::clone(&view.memory),
            consumer,
            queues,
            streams: view.streams.clone(),
        }
    }

    fn open(&self) -> bool {
        self.view
            .upgrade()
            .is_some_and(|v| v.open.load(Ordering::SeqCst))
    }
}

/// What a call holding a buffer's store recorded of it when it locked it (nothing else
/// can change it until the call lets go): what a Python host function running on the
/// same thread reads of its own arguments.
#[derive(Clone)]
pub(crate) struct HeldByCall {
    buffer: usize,
    pub(crate) location: Location,
    pub(crate) replicas: Vec<(Location, bool)>,
}

thread_local! {
    /// The buffers whose stores a call on this thread holds, while it runs (a Python host
    /// function runs inside the call, on this thread, and may name its own arguments:
    /// locking one of them again would wait for itself forever).
    static HELD_BY_CALL: std::cell::RefCell<Vec<HeldByCall>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Records, for as long as it lives, that this thread's call holds the stores of some
/// buffers.
pub(crate) struct CallHold {
    count: usize,
}

impl CallHold {
    pub(crate) fn new() -> CallHold {
        CallHold { count: 0 }
    }

    /// Records that the call holds `buffer`'s `store`.
    pub(crate) fn hold(&mut self, buffer: &PyBuffer, store: &Store) {
        let held = HeldByCall {
            buffer: buffer as *const PyBuffer as usize,
            location: store.location(),
            replicas: store.replicas(),
        };
        HELD_BY_CALL.with(|h| h.borrow_mut().push(held));
        self.count += 1;
    }
}

impl Drop for CallHold {
    fn drop(&mut self) {
        HELD_BY_CALL.with(|h| {
            let mut h = h.borrow_mut();
            let keep = h.len().saturating_sub(self.count);
            h.truncate(keep);
        });
    }
}

impl PyBuffer {
    /// Re-declares the write of every write handle handed out since the last call (the
    /// memory each wrote holds the newest data: open ones share one location, a second
    /// one is refused), forgets those closed since, and returns the open ones' location.
    /// Every operation on the buffer calls it first, so a read elsewhere while a handle
    /// is open copies the handle's newest data, and writes made after such a read are
    /// still the current data once the handle closes.
    pub(crate) fn sync_writers(&self, store: &mut Store) -> locus::Result<Option<Location>> {
        let mut writers = lock(&self.writers);
        for w in writers.iter() {
            // What a consumer queued through the handle lands before locus reads.
            if let Some(queues) = &w.queues {
                queues.wait(w.consumer)?;
            }
            if let Some(streams) = &w.streams {
                streams.wait()?;
            }
            store.declare_written(&w.memory);
        }
        writers.retain(Writer::open);
        Ok(writers.first().map(|w| w.consumer))
    }

    /// The store, locked (a thread without the GIL, or one that released it).
    pub(crate) fn store(&self) -> locus::Result<MutexGuard<'_, Store>> {
        self.refuse_if_held_by_call()?;
        Ok(lock(&self.store))
    }

    /// What a call on this thread recorded of this buffer, if one holds it now.
    pub(crate) fn held_by_call(&self) -> Option<HeldByCall> {
        let me = self as *const PyBuffer as usize;
        HELD_BY_CALL.with(|h| h.borrow().iter().find(|b| b.buffer == me).cloned())
    }

    /// An error naming the buffer when a call on this thread holds it (a host function
    /// using its own argument): waiting for the store would wait for itself.
    pub(crate) fn refuse_if_held_by_call(&self) -> locus::Result<()> {
        match self.held_by_call() {
            None => Ok(()),
            Some(held) => Err(locus::Error::Invalid(format!(
                "the {} buffer {:?} at {} is an argument of the call running on this thread \
                 (its host function's own argument): the call holds it until it ends, and this \
                 operation would wait for itself; in the host function use the arrays it was \
                 given, and use the buffer after the call (its location, shape, dtype, size \
                 and repr can be read during it)",
                self.dtype.name,
                self.dims(),
                held.location
            ))),
        }
    }
}
