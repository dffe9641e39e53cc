//! One event type for every technology: what an asynchronous copy returns. The host
//! waits on it; any later asynchronous operation takes it as a dependency (natively
//! where the technology allows, by a host wait otherwise).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::backends::Completion;
use crate::error::{Error, Result};

enum State {
    /// Still running natively (an OpenCL event, a SYCL event, a wgpu submission).
    #[cfg_attr(not(feature = "opencl"), allow(dead_code))]
    Native(Completion),
    /// Still running on a worker thread.
    Thread(JoinHandle<Result<()>>),
    /// Finished, with its outcome (kept so every waiter sees it).
    Finished(Result<(), String>),
}

/// Completion of asynchronous work. Cheap to clone; every clone waits on the same work.
#[derive(Clone)]
pub struct Event {
    state: Arc<Mutex<State>>,
    /// Memory the work uses, kept alive until the event is dropped.
    _keep: Arc<Vec<Arc<crate::Memory>>>,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event(complete: {})", self.is_complete())
    }
}

impl Event {
    /// An event that has already happened.
    pub fn done() -> Event {
        Event {
            state: Arc::new(Mutex::new(State::Finished(Ok(())))),
            _keep: Arc::default(),
        }
    }

    #[cfg_attr(not(feature = "opencl"), allow(dead_code))]
    pub(crate) fn native(completion: Completion, keep: Vec<Arc<crate::Memory>>) -> Event {
        Event {
            state: Arc::new(Mutex::new(State::Native(completion))),
            _keep: Arc::new(keep),
        }
    }

    pub(crate) fn thread(handle: JoinHandle<Result<()>>) -> Event {
        Event {
            state: Arc::new(Mutex::new(State::Thread(handle))),
            _keep: Arc::default(),
        }
    }

    /// Blocks until the work is done; its error, if any (every waiter gets it).
    pub fn wait(&self) -> Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let outcome = match std::mem::replace(&mut *state, State::Finished(Ok(()))) {
            State::Native(c) => c.wait().map_err(|e| e.to_string()),
            State::Thread(h) => match h.join() {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(_) => Err("the asynchronous copy's worker thread panicked".to_string()),
            },
            State::Finished(r) => r,
        };
        *state = State::Finished(outcome.clone());
        outcome.map_err(Error::Invalid)
    }

    /// The OpenCL event behind this event, when it is still a pending OpenCL command.
    #[cfg(feature = "opencl")]
    pub(crate) fn opencl_event(&self) -> Option<opencl3::types::cl_event> {
        match &*self.state.lock().unwrap_or_else(|e| e.into_inner()) {
            State::Native(c) => c.opencl_event(),
            _ => None,
        }
    }

    /// True once the work is known to be done (without blocking).
    pub fn is_complete(&self) -> bool {
        match &*self.state.lock().unwrap_or_else(|e| e.into_inner()) {
            State::Finished(_) => true,
            State::Thread(h) => h.is_finished(),
            State::Native(c) => c.poll_complete(),
        }
    }
}

/// Names a queue of work (a stream, a command queue) for stream-ordered memory reuse.
/// Today memory freed with [`crate::Memory::release_after`] is reused by any queue only
/// once its event is done; reuse on the same queue without waiting is not done yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Queue(u64);

impl Queue {
    /// A new, distinct queue name.
    pub fn new() -> Queue {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Queue(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl Default for Queue {
    fn default() -> Queue {
        Queue::new()
    }
}
