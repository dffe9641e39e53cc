//! A simulated HIP runtime behind [`HipRuntime`] (issue 48: the simulator serves HIP's
//! entry points too), for HipApi's real call layer on a machine with no AMD GPU. Device
//! memory is host memory; the rules a permissive fake would let slide are kept:
//!
//! - **streams are asynchronous**: `hipMemcpyAsync` and `hipMemsetAsync` are queued on
//!   their stream and run when something waits (`hipStreamSynchronize`, an event wait or
//!   query of an event recorded after them), reading their source then;
//! - **the NULL stream is not locus's**: a copy or memset queued on it is recorded as a
//!   violation (it would serialise with every blocking stream of another library);
//! - **a current device per thread**: `hipSetDevice` / `hipGetDevice`;
//! - **memory**: `hipMalloc`, `hipHostMalloc`, `hipMallocManaged` beyond the device's
//!   memory are `hipErrorOutOfMemory`; freeing what was not allocated is a violation.
//!
//! Every call is recorded with its stream ([`SimHip::calls`]).

use std::cell::Cell;
use std::collections::HashMap;
use std::os::raw::{c_char, c_int, c_uint, c_void};
use std::sync::{Arc, Mutex};

use super::bindings::*;
use super::raw_traits::HipRuntime;

thread_local! {
    static DEVICE: Cell<c_int> = const { Cell::new(0) };
}

type Op = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    /// Work queued per stream (by handle), in order.
    queued: HashMap<usize, Vec<Op>>,
    /// Events: the stream they were recorded on and how much of its queue came before.
    events: HashMap<usize, (usize, usize)>,
    /// Ops run per stream so far (an event is done once its stream ran past it).
    ran: HashMap<usize, usize>,
    /// Live allocations: start -> bytes.
    sizes: HashMap<usize, usize>,
    calls: Vec<(&'static str, usize)>,
    violations: Vec<String>,
    next_event: usize,
}

/// The simulated runtime (see the module docs); a clone is the same runtime (a test
/// keeps one to read its records).
#[derive(Clone)]
pub(super) struct SimHip {
    memory: usize,
    state: Arc<Mutex<State>>,
}

/// Allocation alignment (as hipMalloc's).
const ALIGN: usize = 256;

impl SimHip {
    /// A runtime whose one device has `memory` bytes.
    pub(super) fn new(memory: usize) -> SimHip {
        SimHip {
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
    pub(super) fn calls(&self) -> Vec<(&'static str, usize)> {
        self.lock().calls.clone()
    }

    /// What the runtime would have done wrong.
    pub(super) fn violations(&self) -> Vec<String> {
        self.lock().violations.clone()
    }

    fn record(&self, call: &'static str, stream: usize) {
        self.lock().calls.push((call, stream));
    }

    fn enqueue(&self, call: &'static str, stream: hipStream_t, op: Op) -> hipError_t {
        let mut state = self.lock();
        state.calls.push((call, stream as usize));
        if stream.is_null() {
            state.violations.push(format!("{call} on the NULL stream"));
        }
        state.queued.entry(stream as usize).or_default().push(op);
        hipError_t_hipSuccess
    }

    /// Runs `stream`'s queue up to (not including) `upto` of all ops ever queued on it.
    fn run(&self, stream: usize, upto: Option<usize>) {
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

    fn allocate(&self, out: *mut *mut c_void, size: usize) -> hipError_t {
        let mut state = self.lock();
        let used: usize = state.sizes.values().sum();
        if size > self.memory.saturating_sub(used) {
            return hipError_t_hipErrorOutOfMemory;
        }
        let Ok(layout) = std::alloc::Layout::from_size_align(size.max(1), ALIGN) else {
            return hipError_t_hipErrorOutOfMemory;
        };
        // SAFETY: a non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return hipError_t_hipErrorOutOfMemory;
        }
        state.sizes.insert(ptr as usize, size);
        // SAFETY: the caller's out-pointer.
        unsafe { *out = ptr.cast() };
        hipError_t_hipSuccess
    }

    fn release(&self, call: &'static str, ptr: *mut c_void) -> hipError_t {
        let mut state = self.lock();
        state.calls.push((call, 0));
        match state.sizes.remove(&(ptr as usize)) {
            Some(size) => {
                let layout = std::alloc::Layout::from_size_align(size.max(1), ALIGN);
                if let Ok(layout) = layout {
                    // SAFETY: allocated above with this layout.
                    unsafe { std::alloc::dealloc(ptr.cast(), layout) };
                }
                hipError_t_hipSuccess
            }
            None => {
                state
                    .violations
                    .push(format!("{call} of {ptr:p}: not allocated"));
                hipError_t_hipErrorInvalidValue
            }
        }
    }
}

impl HipRuntime for SimHip {
    unsafe fn hipSetDevice(&self, device: c_int) -> hipError_t {
        self.record("hipSetDevice", 0);
        if device != 0 {
            return hipError_t_hipErrorInvalidDevice;
        }
        DEVICE.with(|d| d.set(device));
        hipError_t_hipSuccess
    }
    unsafe fn hipGetDevice(&self, device: *mut c_int) -> hipError_t {
        // SAFETY: the caller's out-pointer.
        unsafe { *device = DEVICE.with(Cell::get) };
        hipError_t_hipSuccess
    }
    unsafe fn hipMalloc(&self, ptr: *mut *mut c_void, size: usize) -> hipError_t {
        self.record("hipMalloc", 0);
        self.allocate(ptr, size)
    }
    unsafe fn hipHostMalloc(&self, ptr: *mut *mut c_void, size: usize, _: c_uint) -> hipError_t {
        self.record("hipHostMalloc", 0);
        self.allocate(ptr, size)
    }
    unsafe fn hipMallocManaged(&self, ptr: *mut *mut c_void, size: usize, _: c_uint) -> hipError_t {
        self.record("hipMallocManaged", 0);
        self.allocate(ptr, size)
    }
    unsafe fn hipFree(&self, ptr: *mut c_void) -> hipError_t {
        self.release("hipFree", ptr)
    }
    unsafe fn hipHostFree(&self, ptr: *mut c_void) -> hipError_t {
        self.release("hipHostFree", ptr)
    }
    unsafe fn hipMemGetInfo(&self, free: *mut usize, total: *mut usize) -> hipError_t {
        let used: usize = self.lock().sizes.values().sum();
        // SAFETY: the caller's out-pointers.
        unsafe {
            *free = self.memory.saturating_sub(used);
            *total = self.memory;
        }
        hipError_t_hipSuccess
    }
    unsafe fn hipMemcpyAsync(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        n: usize,
        _: hipMemcpyKind,
        stream: hipStream_t,
    ) -> hipError_t {
        let (d, s) = (dst as usize, src as usize);
        let op: Op = Box::new(move || {
            // SAFETY: device memory is host memory; the caller keeps both ranges valid
            // until the copy completes (the contract the queueing checks: a range freed
            // or refilled early shows as wrong data).
            unsafe { std::ptr::copy(s as *const u8, d as *mut u8, n) }
        });
        self.enqueue("hipMemcpyAsync", stream, op)
    }
    unsafe fn hipMemsetAsync(
        &self,
        dst: *mut c_void,
        value: c_int,
        n: usize,
        stream: hipStream_t,
    ) -> hipError_t {
        let d = dst as usize;
        let op: Op = Box::new(move || {
            // SAFETY: as for the copy.
            unsafe { std::ptr::write_bytes(d as *mut u8, value as u8, n) }
        });
        self.enqueue("hipMemsetAsync", stream, op)
    }
    unsafe fn hipStreamSynchronize(&self, stream: hipStream_t) -> hipError_t {
        self.record("hipStreamSynchronize", stream as usize);
        self.run(stream as usize, None);
        hipError_t_hipSuccess
    }
    unsafe fn hipEventCreateWithFlags(&self, event: *mut hipEvent_t, _: c_uint) -> hipError_t {
        let mut state = self.lock();
        state.next_event += 16;
        let id = state.next_event;
        state.events.insert(id, (0, 0));
        // SAFETY: the caller's out-pointer.
        unsafe { *event = id as hipEvent_t };
        hipError_t_hipSuccess
    }
    unsafe fn hipEventRecord(&self, event: hipEvent_t, stream: hipStream_t) -> hipError_t {
        let mut state = self.lock();
        state.calls.push(("hipEventRecord", stream as usize));
        let s = stream as usize;
        let queued =
            state.queued.get(&s).map_or(0, Vec::len) + state.ran.get(&s).copied().unwrap_or(0);
        match state.events.get_mut(&(event as usize)) {
            Some(e) => {
                *e = (s, queued);
                hipError_t_hipSuccess
            }
            None => hipError_t_hipErrorInvalidHandle,
        }
    }
    unsafe fn hipEventSynchronize(&self, event: hipEvent_t) -> hipError_t {
        let recorded = self.lock().events.get(&(event as usize)).copied();
        match recorded {
            Some((stream, upto)) => {
                self.run(stream, Some(upto));
                hipError_t_hipSuccess
            }
            None => hipError_t_hipErrorInvalidHandle,
        }
    }
    unsafe fn hipEventQuery(&self, event: hipEvent_t) -> hipError_t {
        // Done once waited for (as the strict CUDA simulator: work runs when asked).
        // SAFETY: forwarded.
        unsafe { self.hipEventSynchronize(event) }
    }
    unsafe fn hipEventDestroy(&self, event: hipEvent_t) -> hipError_t {
        match self.lock().events.remove(&(event as usize)) {
            Some(_) => hipError_t_hipSuccess,
            None => hipError_t_hipErrorInvalidHandle,
        }
    }
    unsafe fn hipStreamWaitEvent(
        &self,
        _: hipStream_t,
        event: hipEvent_t,
        _: c_uint,
    ) -> hipError_t {
        // The waiting stream's later work comes after the event's: run up to it now.
        // SAFETY: forwarded.
        unsafe { self.hipEventSynchronize(event) }
    }
    unsafe fn hipGetErrorName(&self, _: hipError_t) -> *const c_char {
        c"hipErrorSimulated".as_ptr()
    }
    unsafe fn hipGetErrorString(&self, _: hipError_t) -> *const c_char {
        c"an error of the simulated HIP runtime".as_ptr()
    }
}
