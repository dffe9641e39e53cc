//! What a simulated vendor runtime keeps behind its raw entry points (the HIP runtime's
//! `hip/simulated.rs`, the CUDA driver's `cuda/simulated.rs`), so that the real call
//! layers (`HipApi`, `CudaApi`) run against the rules a permissive fake would let slide:
//!
//! - **streams are asynchronous**: copies and memsets are queued on their stream and run
//!   when something waits (a stream synchronisation, an event wait or query of an event
//!   recorded after them), reading their source then; or, with [`SimModel::progressing`],
//!   also on their own, a little later, on a thread of the runtime's (as a GPU's copy
//!   engines run beside the host), each stream in its order;
//! - **the NULL stream is not locus's**: work queued on it, or a synchronous copy (which
//!   runs on it), is recorded as a violation: it serialises with every blocking stream of
//!   another library in the process;
//! - **memory**: allocations beyond the device's memory fail; freeing what was not
//!   allocated is a violation; each allocation has its kind, which the pointer queries,
//!   advice, registration, IPC and batches check (`memory.rs`, `ipc.rs`, `batch.rs`);
//! - **device-wide synchronisation**: the calls that wait for every stream of the
//!   device (`cuMemFree`, `hipFree`, `hipHostUnregister`) run all queued work and are
//!   recorded as such ([`SimModel::device_wide_syncs`]);
//! - **sticky errors**: after an illegal address, every call of the process fails
//!   ([`SimModel::poisoned`]), as a real context is lost;
//! - **deinitialisation**: once the runtime has shut down ([`SimModel::deinitialise`],
//!   as at the process's end), every call is a violation and fails;
//! - **modules and launches** (`modules.rs`): images the driver would refuse, functions
//!   a module lacks, launch sizes beyond the limits.
//!
//! Every call is recorded with the stream it named. The vendors' simulators
//! (`cuda/simulated/`, `hip/simulated/`) translate their entry points into these rules
//! and a [`Refusal`] into their own error codes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

mod batch;
mod ipc;
mod memory;
mod modules;
mod rect;
pub(crate) use rect::SimRectEnd;

pub(crate) use batch::depend_on_each_other;
pub(crate) use memory::{Found, Kind};
pub(crate) use modules::{elf_image, ptx_entries, read_image, Image};

/// Queued work.
pub(crate) type Op = Box<dyn FnOnce() + Send>;

/// Why a simulated call refuses, in the words both vendors have a code for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A bad argument (`CUDA_ERROR_INVALID_VALUE`, `hipErrorInvalidValue`).
    InvalidValue,
    /// Host memory already registered, or pinned by the driver already.
    AlreadyRegistered,
    /// Unregistering what was not registered at that address.
    NotRegistered,
    /// A fault: sticky, every later call fails too.
    IllegalAddress,
    /// A handle the process cannot use (its own IPC handle).
    InvalidContext,
    /// A function a module does not have.
    NotFound,
    /// An unknown module or function handle.
    InvalidHandle,
}

/// What the stream of a call is, when the call is device-wide rather than on one stream.
pub(crate) const DEVICE_WIDE: usize = usize::MAX;

#[derive(Default)]
struct State {
    queued: HashMap<usize, Vec<Op>>,
    /// Events: the stream they were recorded on and how many of its ops came before.
    events: HashMap<usize, (usize, usize)>,
    /// Ops run per stream so far.
    ran: HashMap<usize, usize>,
    /// Live allocations: start -> bytes.
    sizes: HashMap<usize, usize>,
    /// Live allocations' kinds.
    kinds: HashMap<usize, Kind>,
    /// Host ranges registered in place: start, length, mapped into the device.
    registered: Vec<(usize, usize, bool)>,
    /// Memory opened from other processes' IPC handles: start -> times opened.
    opened: HashMap<usize, u32>,
    /// Exported allocations freed while another process had them open, kept until
    /// closed there: start -> bytes.
    kept_for_ipc: HashMap<usize, usize>,
    /// The call whose illegal address lost the context.
    poisoned: Option<&'static str>,
    /// The runtime has shut down.
    deinitialised: bool,
    /// Whether the device reads registered host memory at its host address
    /// (`CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`).
    host_pointer_for_registered: bool,
    /// The copy at which the next batch fails.
    fail_batch_copy: Option<usize>,
    modules: modules::Modules,
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
    /// Held while a queued op runs (taking it, then the state's lock): one op at a time,
    /// each stream's in order, and an op counted as run only once it has.
    running: Arc<Mutex<()>>,
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
                host_pointer_for_registered: true,
                ..State::default()
            })),
            running: Arc::new(Mutex::new(())),
        }
    }

    /// As [`SimModel::new`], with the queued work also progressing on its own: a thread
    /// of the runtime's runs it a little after it is queued, whether or not anything
    /// waits (it ends with the last handle of the runtime).
    pub(crate) fn progressing(memory: usize) -> SimModel {
        let model = SimModel::new(memory);
        let engine = SimModel {
            memory,
            state: Arc::clone(&model.state),
            running: Arc::clone(&model.running),
        };
        std::thread::spawn(move || loop {
            std::thread::sleep(std::time::Duration::from_micros(50));
            // Only this thread's handle left: the runtime is gone.
            if Arc::strong_count(&engine.state) == 1 {
                return;
            }
            let next = {
                let state = engine.lock();
                state
                    .queued
                    .iter()
                    .find(|(_, q)| !q.is_empty())
                    .map(|(s, _)| *s)
            };
            if let Some(stream) = next {
                engine.run_one(stream);
            }
        });
        model
    }

    /// Runs the oldest op queued on `stream`, if any; false when there was none.
    fn run_one(&self, stream: usize) -> bool {
        let _one_at_a_time = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let op = {
            let mut state = self.lock();
            let queue = state.queued.entry(stream).or_default();
            if queue.is_empty() {
                return false;
            }
            queue.remove(0)
        };
        op();
        *self.lock().ran.entry(stream).or_default() += 1;
        true
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

    /// Records something the runtime would have done wrong.
    pub(crate) fn violation(&self, what: String) {
        self.lock().violations.push(what);
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

    /// Queues a copy of `n` bytes from `src` to `dst` on `stream` (`call` recorded).
    pub(crate) fn queue_copy(
        &self,
        call: &'static str,
        stream: usize,
        dst: usize,
        src: usize,
        n: usize,
    ) {
        self.enqueue(call, stream, copy_op(dst, src, n));
    }

    /// Runs `stream`'s queue, all of it or up to `upto` ops ever queued on it.
    pub(crate) fn run(&self, stream: usize, upto: Option<usize>) {
        loop {
            {
                // An op the progress thread runs now is counted once it is done.
                let _settled = self.running.lock().unwrap_or_else(|e| e.into_inner());
                let ran = *self.lock().ran.get(&stream).unwrap_or(&0);
                if upto.is_some_and(|u| ran >= u) {
                    return;
                }
            }
            if !self.run_one(stream) {
                return;
            }
        }
    }

    /// `size` bytes of memory of `kind`, or `None` past the device's memory.
    pub(crate) fn allocate_kind(&self, size: usize, kind: Kind) -> Option<usize> {
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
        state.kinds.insert(ptr as usize, kind);
        Some(ptr as usize)
    }

    /// Frees an allocation; false (and a violation) for one that is not live.
    pub(crate) fn release(&self, call: &'static str, ptr: usize) -> bool {
        let mut state = self.lock();
        state.calls.push((call, 0));
        match state.sizes.remove(&ptr) {
            Some(size) => {
                state.kinds.remove(&ptr);
                if ipc::opened_elsewhere(self.id(), ptr) {
                    // The driver keeps the memory for the other process until it closes
                    // its mapping.
                    state.kept_for_ipc.insert(ptr, size);
                    return true;
                }
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

    /// Runs every stream's queued work, as the calls that synchronise the whole device
    /// do, and records `call` as one ([`SimModel::device_wide_syncs`]).
    pub(crate) fn synchronize_device(&self, call: &'static str) {
        self.record(call, DEVICE_WIDE);
        let streams: Vec<usize> = self.lock().queued.keys().copied().collect();
        streams.into_iter().for_each(|s| self.run(s, None));
    }

    /// The calls so far that waited for the whole device.
    pub(crate) fn device_wide_syncs(&self) -> Vec<&'static str> {
        self.lock()
            .calls
            .iter()
            .filter(|(_, s)| *s == DEVICE_WIDE)
            .map(|(c, _)| *c)
            .collect()
    }

    /// The call whose illegal address lost the context, after which every call fails.
    pub(crate) fn poisoned(&self) -> Option<&'static str> {
        self.lock().poisoned
    }

    /// Loses the context at `call` (an illegal address): a violation, and every later
    /// call fails.
    pub(crate) fn poison(&self, call: &'static str, why: String) {
        let mut state = self.lock();
        state
            .violations
            .push(format!("{call}: illegal address: {why}"));
        state.poisoned.get_or_insert(call);
    }

    /// Shuts the runtime down, as at the process's end: every later call is a violation.
    pub(crate) fn deinitialise(&self) {
        self.lock().deinitialised = true;
    }

    /// Whether the runtime has shut down; a call now (`call`) is recorded as a violation.
    pub(crate) fn called_after_deinitialisation(&self, call: &str) -> bool {
        let mut state = self.lock();
        if state.deinitialised {
            state
                .violations
                .push(format!("{call} called after the runtime shut down"));
        }
        state.deinitialised
    }

    /// This runtime's identity among the simulated processes (IPC handles name it).
    pub(crate) fn id(&self) -> usize {
        Arc::as_ptr(&self.state) as usize
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
        // No op in flight while the stream's count is taken.
        let _settled = self.running.lock().unwrap_or_else(|e| e.into_inner());
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
        pci: None,
        notes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_work_runs_when_waited_for_or_on_its_own_when_progressing() {
        for progressing in [false, true] {
            let model = match progressing {
                true => SimModel::progressing(1 << 20),
                false => SimModel::new(1 << 20),
            };
            let mut byte = Box::new(0u8);
            let at = &mut *byte as *mut u8 as usize;
            model.enqueue("memset", 0x10, set_op(at, 7, 1));
            std::thread::sleep(std::time::Duration::from_millis(50));
            let settled = {
                let _done = model.running.lock().unwrap();
                // SAFETY: `byte` lives; no op runs while `running` is held.
                unsafe { *(at as *const u8) }
            };
            assert_eq!(settled == 7, progressing, "progressing: {progressing}");
            model.run(0x10, None);
            assert_eq!(*byte, 7);
        }
    }
}
