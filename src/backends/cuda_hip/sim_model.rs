//! What a simulated vendor runtime keeps behind its raw entry points (the HIP runtime's
//! `hip/simulated.rs`, the CUDA driver's `cuda/simulated.rs`), so that the real call
//! layers (`HipApi`, `CudaApi`) run against the rules a permissive fake would let slide:
//!
//! - **streams are asynchronous**: copies and memsets are queued on their stream and run
//!   when something waits (a stream synchronisation, an event wait or query of an event
//!   recorded after them), reading their source then;
//! - **the NULL stream is not locus's**: work queued on it, or a synchronous copy (which
//!   runs on it), is recorded as a violation: it serialises with every blocking stream of
//!   another library in the process;
//! - **memory**: allocations beyond the device's memory fail; freeing what was not
//!   allocated is a violation.
//!
//! Every call is recorded with the stream it named.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Queued work.
pub(crate) type Op = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    queued: HashMap<usize, Vec<Op>>,
    /// Events: the stream they were recorded on and how many of its ops came before.
    events: HashMap<usize, (usize, usize)>,
    /// Ops run per stream so far.
    ran: HashMap<usize, usize>,
    /// Live allocations: start -> bytes.
    sizes: HashMap<usize, usize>,
    calls: Vec<(&'static str, usize)>,
    violations: Vec<String>,
    next_event: usize,
}

/// A simulated runtime's state (a clone is the same runtime: a test keeps one to read
/// its records).
#[derive(Clone)]
pub(crate) struct SimModel {
    memory: usize,
    state: Arc<Mutex<State>>,
}

/// Allocation alignment, as the vendors' allocators give.
const ALIGN: usize = 256;

impl SimModel {
    /// A runtime whose one device has `memory` bytes.
    pub(crate) fn new(memory: usize) -> SimModel {
        SimModel {
            memory,
            state: Arc::new(Mutex::new(State {
                next_event: 0x9000,
                ..State::default()
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every call so far, with the stream it named (0: none, or the NULL stream).
    pub(crate) fn calls(&self) -> Vec<(&'static str, usize)> {
        self.lock().calls.clone()
    }

    /// What the runtime would have done wrong.
    pub(crate) fn violations(&self) -> Vec<String> {
        self.lock().violations.clone()
    }

    /// Records a call that queues nothing.
    pub(crate) fn record(&self, call: &'static str, stream: usize) {
        self.lock().calls.push((call, stream));
    }

    /// Records a synchronous copy: it runs on the legacy NULL stream (a violation), now.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn synchronous(&self, call: &'static str, op: Op) {
        {
            let mut state = self.lock();
            state.calls.push((call, 0));
            state.violations.push(format!(
                "{call}: a synchronous copy on the legacy NULL stream"
            ));
        }
        op();
    }

    /// Queues `op` on `stream`.
    pub(crate) fn enqueue(&self, call: &'static str, stream: usize, op: Op) {
        let mut state = self.lock();
        state.calls.push((call, stream));
        if stream == 0 {
            state.violations.push(format!("{call} on the NULL stream"));
        }
        state.queued.entry(stream).or_default().push(op);
    }

    /// Runs `stream`'s queue, all of it or up to `upto` ops ever queued on it.
    pub(crate) fn run(&self, stream: usize, upto: Option<usize>) {
        loop {
            let op = {
                let mut state = self.lock();
                let ran = *state.ran.get(&stream).unwrap_or(&0);
                if upto.is_some_and(|u| ran >= u) {
                    return;
                }
                let queue = state.queued.entry(stream).or_default();
                if queue.is_empty() {
                    return;
                }
                let op = queue.remove(0);
                *state.ran.entry(stream).or_default() += 1;
                op
            };
            op();
        }
    }

    /// `size` bytes of "device" memory (host memory), or `None` past the device's memory.
    pub(crate) fn allocate(&self, size: usize) -> Option<usize> {
        let mut state = self.lock();
        let used: usize = state.sizes.values().sum();
        if size > self.memory.saturating_sub(used) {
            return None;
        }
        let layout = std::alloc::Layout::from_size_align(size.max(1), ALIGN).ok()?;
        // SAFETY: a non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return None;
        }
        state.sizes.insert(ptr as usize, size);
        Some(ptr as usize)
    }

    /// Frees an allocation; false (and a violation) for one that is not live.
    pub(crate) fn release(&self, call: &'static str, ptr: usize) -> bool {
        let mut state = self.lock();
        state.calls.push((call, 0));
        match state.sizes.remove(&ptr) {
            Some(size) => {
                if let Ok(layout) = std::alloc::Layout::from_size_align(size.max(1), ALIGN) {
                    // SAFETY: allocated by `allocate` with this layout.
                    unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
                }
                true
            }
            None => {
                state
                    .violations
                    .push(format!("{call} of {ptr:#x}: not allocated"));
                false
            }
        }
    }

    /// Free and total bytes.
    pub(crate) fn memory_info(&self) -> (usize, usize) {
        let used: usize = self.lock().sizes.values().sum();
        (self.memory.saturating_sub(used), self.memory)
    }

    /// A new event's handle.
    pub(crate) fn event_create(&self) -> usize {
        let mut state = self.lock();
        state.next_event += 16;
        let id = state.next_event;
        state.events.insert(id, (0, 0));
        id
    }

    /// Records `event` after the work queued on `stream` so far; false for no such event.
    pub(crate) fn event_record(&self, event: usize, stream: usize) -> bool {
        let mut state = self.lock();
        state.calls.push(("event record", stream));
        let before = state.queued.get(&stream).map_or(0, Vec::len)
            + state.ran.get(&stream).copied().unwrap_or(0);
        match state.events.get_mut(&event) {
            Some(e) => {
                *e = (stream, before);
                true
            }
            None => false,
        }
    }

    /// Waits for `event` (runs its stream up to it); false for no such event.
    pub(crate) fn event_wait(&self, event: usize) -> bool {
        let recorded = self.lock().events.get(&event).copied();
        match recorded {
            Some((stream, upto)) => {
                self.run(stream, Some(upto));
                true
            }
            None => false,
        }
    }

    /// Destroys `event`; false for no such event.
    pub(crate) fn event_destroy(&self, event: usize) -> bool {
        self.lock().events.remove(&event).is_some()
    }
}

/// A copy of `n` bytes, made when the queued op runs.
pub(crate) fn copy_op(dst: usize, src: usize, n: usize) -> Op {
    Box::new(move || {
        // SAFETY: simulated device memory is host memory; the caller keeps both ranges
        // valid until the copy completes (the contract the queueing checks: a range freed
        // or refilled early shows as wrong data).
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) }
    })
}

/// A memset of `n` bytes, made when the queued op runs.
pub(crate) fn set_op(dst: usize, byte: u8, n: usize) -> Op {
    Box::new(move || {
        // SAFETY: as for `copy_op`.
        unsafe { std::ptr::write_bytes(dst as *mut u8, byte, n) }
    })
}

/// The facts of a simulated device of `memory` bytes named `name` (no managed access, no
/// pools, no pageable access), as the tests over simulated libraries make them.
pub(crate) fn facts(name: &str, memory: u64) -> super::GpuFacts {
    super::GpuFacts {
        name: name.into(),
        memory_bytes: memory,
        concurrent_managed_access: false,
        stream_ordered_pools: false,
        pageable_memory_access: false,
        version: "simulated".into(),
        notes: Vec::new(),
    }
}
