//! A strict simulated driver behind [`GpuApi`]: device memory is host memory (CHAI's
//! simulation idea), and the driver's rules that a permissive fake would let slide are
//! enforced, so that code which would break on the first real GPU breaks here:
//!
//! - **a current context per thread**: every call but `activate`, `enable_peer` and
//!   `compile` fails with `CUDA_ERROR_INVALID_CONTEXT` on a thread where no device of
//!   this driver is current, and works on the current device's stream (the synchronous
//!   copies of the raw baseline too: `native.rs`);
//! - **streams are asynchronous**: copies, memsets and launches are queued, and run
//!   only when something waits for them (a synchronous call, a stream synchronisation,
//!   an event wait, or an event query, which reports "not ready" once before the work
//!   runs); a DMA reads its source when it runs, not when it was queued;
//! - **one stream per device, in order**: a memset is queued on it like a copy (locus
//!   never uses the NULL stream, whose work a non-blocking stream does not wait for: a
//!   NULL-stream memset, held back like this, read back the bytes from before it);
//! - **users' own streams** (made by tests): one stream's work waits for another's only
//!   through an event (`cuStreamWaitEvent`);
//! - **events belong to their context**: recording, waiting for, querying or destroying
//!   an event needs its device current; a stream of another device may wait for it
//!   (`cuStreamWaitEvent`);
//! - **devices run their own streams**: a peer copy queued on one device's stream does
//!   not run the other device's stream first (only an event orders them);
//! - **run-time compilers**: a source that includes a header fails to compile (NVRTC and
//!   hiprtc bring their own built-ins and find no system header);
//! - **launch sizes**: a zero or oversized grid, more work items along x than the
//!   driver takes (HIP's 2^32 - 1, or fewer as a test says), or a block of more than
//!   1024 threads, is `CUDA_ERROR_INVALID_VALUE`;
//! - **exclusive-process devices**: a device in `busy` refuses a context; **fault
//!   injection**: [`Strict::fail_once`] makes the next call of that name fail, and
//!   [`Strict::fail_batch_copy`] the next batch at one copy (reported as the driver's
//!   `failIdx`);
//! - **pool memory is its device's**: a kernel given a pointer into another device's
//!   stream-ordered pool memory is `CUDA_ERROR_ILLEGAL_ADDRESS` (peer access does not
//!   cover the pool; `cuMemPoolSetAccess` would);
//! - **the pool's release threshold**: memory a stream-ordered free gave back stays in
//!   the pool (and counts as used) until a synchronisation returns it to the system,
//!   unless the threshold was raised (`cuMemPoolSetAttribute`, on the pool locus makes
//!   for itself with its first stream-ordered allocation); the pool serves the next
//!   stream-ordered allocation first;
//! - **IPC handles** (`ipc.rs`): each simulated driver a process of its own;
//! - **batched copies** (`cuMemcpyBatchAsync`, as from CUDA 12.8): an empty batch, or
//!   copies that depend on each other, is `CUDA_ERROR_INVALID_VALUE`;
//! - **stream-ordered allocation**: memory from a pool (`cuMemAllocFromPoolAsync`) is
//!   given back by `cuMemFreeAsync` only when the stream reaches the free (work queued
//!   before it still reads the memory), and counts as used until then; `cuMemFree` and
//!   `cuMemFreeHost` synchronise implicitly, as the real calls do.
//!
//! Calls that return nothing (`free`, `event_destroy`) record a violation instead of
//! failing; tests assert [`Strict::violations`] is empty.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use super::*;
use alloc::DRIVER_ALIGNMENT;
use streams::{device_stream_handle, Op, StreamId, Streams};

mod alloc;
mod compiler;
mod handles;
mod inspect;
mod ipc;
mod native;
mod pools;
mod streams;

pub(crate) use inspect::{facts, one_device};

thread_local! {
    /// The (driver instance, device) current on this thread.
    static CURRENT: Cell<Option<(u64, u32)>> = const { Cell::new(None) };
}

struct EventState {
    ordinal: u32,
    /// The stream it was recorded on, and the position it waits for there.
    at: Option<(StreamId, u64)>,
    queried: bool,
}

#[derive(Default)]
struct State {
    /// One stream per device, and the users' own.
    streams: Streams,
    events: HashMap<u64, EventState>,
    fail_once: Vec<&'static str>,
    /// The copy at which the next batch fails (`Strict::fail_batch_copy`).
    fail_batch_copy: Option<usize>,
    violations: Vec<String>,
    calls: Vec<&'static str>,
    /// Preferred locations set (`cuMemAdvise`): start, length, device (`None`: host).
    advice: Vec<(u64, usize, Option<u32>)>,
    /// Host memory registered in place (`cuMemHostRegister`): start, length.
    registered: Vec<(u64, usize)>,
    /// Memory opened from other processes' IPC handles (`ipc.rs`).
    opened_ipc: Vec<u64>,
}

/// Live allocations by start: size, device and kind.
type Allocations = HashMap<u64, (usize, u32, GpuMemory)>;

/// The strict simulated CUDA driver (see the module docs).
pub(super) struct Strict {
    id: u64,
    peer: Vec<(u32, u32)>,
    memory: usize,
    busy: Vec<u32>,
    next_event: AtomicU64,
    state: Mutex<State>,
    /// Live allocations: size, device and kind. Apart from `state`, whose lock queued
    /// work runs under, so that a queued free can take it.
    sizes: Arc<Mutex<Allocations>>,
    /// Per device: bytes stream-ordered frees gave back to the pool, which it keeps
    /// (until a synchronisation releases them, unless told to keep them), and whether
    /// it was told to (`cuMemPoolSetAttribute` of the release threshold).
    pools: Arc<Mutex<Vec<(usize, bool)>>>,
    /// The most work items a launch takes along x (HIP's limit, or less in a test).
    launch_items: AtomicU64,
}

const INVALID_VALUE: i32 = 1;
const OUT_OF_MEMORY: i32 = 2;
const INVALID_CONTEXT: i32 = 201;
const DEVICE_UNAVAILABLE: i32 = 46;
const INVALID_HANDLE: i32 = 400;
const ILLEGAL_ADDRESS: i32 = 700;
const UNKNOWN: i32 = 999;

fn error(call: &'static str, code: i32, name: &str) -> GpuError {
    GpuError {
        call,
        code,
        name: name.into(),
        out_of_memory: code == OUT_OF_MEMORY,
    }
}

impl Strict {
    /// `devices` devices, peer access where `peer` allows, allocations of more than `memory`
    /// bytes refused as out of memory, and the devices in `busy` refusing a context
    /// (exclusive-process mode, in use elsewhere).
    pub(super) fn new(
        devices: u32,
        peer: Vec<(u32, u32)>,
        memory: usize,
        busy: Vec<u32>,
    ) -> Strict {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let state = State {
            streams: Streams::new(devices),
            ..State::default()
        };
        Strict {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            peer,
            memory,
            busy,
            next_event: AtomicU64::new(1),
            state: Mutex::new(state),
            sizes: Arc::default(),
            pools: Arc::new(Mutex::new(vec![(0, false); devices as usize])),
            launch_items: AtomicU64::new(Self::MAX_ITEMS_X),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn sizes(&self) -> std::sync::MutexGuard<'_, Allocations> {
        self.sizes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The device current on this thread, after the injected failure check; `call`
    /// names the driver call for the error.
    fn enter(&self, call: &'static str) -> Result<u32, GpuError> {
        let mut state = self.lock();
        state.calls.push(call);
        if let Some(i) = state.fail_once.iter().position(|c| *c == call) {
            state.fail_once.remove(i);
            return Err(error(call, UNKNOWN, "CUDA_ERROR_UNKNOWN: injected failure"));
        }
        match CURRENT.with(Cell::get) {
            Some((id, ordinal)) if id == self.id => Ok(ordinal),
            _ => Err(error(
                call,
                INVALID_CONTEXT,
                "CUDA_ERROR_INVALID_CONTEXT: invalid device context (none is current on this thread)",
            )),
        }
    }

    /// Queues `op` on the device's stream; runs the stream up to it when `wait` is set.
    fn queue(&self, ordinal: u32, wait: bool, op: Op) {
        let mut state = self.lock();
        let id = StreamId::Device(ordinal);
        let at = state.streams.push(id, op);
        if wait {
            state.streams.run_to(id, at);
        }
    }

    /// Records `event` at the end of stream `id`'s queued work.
    fn record(&self, event: u64, id: StreamId) {
        let mut state = self.lock();
        let at = state.streams.queued(id);
        if let Some(e) = state.events.get_mut(&event) {
            e.at = Some((id, at));
            e.queried = false;
        }
    }
}

impl GpuApi for Strict {
    const TECHNOLOGY: Technology = Technology::Cuda;
    const NATIVE_CALLS: [&'static str; 3] = ["cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyDtoD"];

    fn activate(&self, ordinal: u32) -> Result<(), GpuError> {
        let devices = {
            let mut state = self.lock();
            state.calls.push("cuCtxSetCurrent");
            state.streams.devices()
        };
        if ordinal as usize >= devices {
            return Err(error("cuCtxSetCurrent", 101, "CUDA_ERROR_INVALID_DEVICE"));
        }
        if self.busy.contains(&ordinal) {
            return Err(error(
                "cuCtxSetCurrent",
                DEVICE_UNAVAILABLE,
                "CUDA_ERROR_DEVICE_UNAVAILABLE: the device is in exclusive-process mode and in use",
            ));
        }
        CURRENT.with(|c| c.set(Some((self.id, ordinal))));
        Ok(())
    }

    /// The (driver instance, device) current on this thread: another instance's is
    /// another library's context.
    type Current = Option<(u64, u32)>;

    fn current(&self) -> Option<(u64, u32)> {
        CURRENT.with(Cell::get)
    }

    fn restore(&self, current: Option<(u64, u32)>) {
        self.lock().calls.push("cuCtxSetCurrent");
        CURRENT.with(|c| c.set(current));
    }

    fn is_current(&self, current: Option<(u64, u32)>, ordinal: u32) -> bool {
        current == Some((self.id, ordinal))
    }

    unsafe fn alloc(&self, kind: GpuMemory, bytes: usize) -> Result<u64, GpuError> {
        self.alloc_now(kind, bytes)
    }

    unsafe fn free(&self, kind: GpuMemory, ptr: u64) {
        let call = match kind {
            GpuMemory::StreamOrdered => "cuMemFreeAsync",
            _ => "cuMemFree",
        };
        let device = match self.enter(call) {
            Ok(device) => device,
            Err(e) => {
                self.lock()
                    .violations
                    .push(format!("free of {ptr:#x}: {e}"));
                return;
            }
        };
        if !self.sizes().contains_key(&ptr) {
            self.lock()
                .violations
                .push(format!("free of {ptr:#x}: not allocated"));
            return;
        }
        let sizes = Arc::clone(&self.sizes);
        let pools = Arc::clone(&self.pools);
        let to_pool = kind == GpuMemory::StreamOrdered;
        let release = move || {
            let removed = sizes.lock().unwrap_or_else(|e| e.into_inner()).remove(&ptr);
            if let Some((bytes, device, _)) = removed {
                if to_pool {
                    let mut pools = pools.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(pool) = pools.get_mut(device as usize) {
                        pool.0 += bytes;
                    }
                }
                if let Ok(layout) =
                    std::alloc::Layout::from_size_align(bytes.max(1), DRIVER_ALIGNMENT)
                {
                    // SAFETY: `ptr` came from `alloc` with this layout, freed once
                    // (removed from `sizes` under the lock).
                    unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
                }
            }
        };
        match kind {
            // Given back when the stream reaches it.
            GpuMemory::StreamOrdered => self.queue(device, false, Box::new(release)),
            // `cuMemFree` / `cuMemFreeHost` synchronise implicitly: the work queued
            // before them (a copy still reading the block) runs first. Freeing at once
            // let such a copy read freed memory (the RMM-kinds test read zeros when
            // libtest's output capture reused the block).
            _ => {
                self.lock().streams.run_all(StreamId::Device(device));
                release()
            }
        }
    }

    unsafe fn to_device(
        &self,
        dst: u64,
        src: *const u8,
        n: usize,
        wait: bool,
    ) -> Result<(), GpuError> {
        let device = self.enter("cuMemcpyHtoDAsync")?;
        self.queue(device, wait, Self::copy_op(dst, src as u64, n));
        Ok(())
    }

    unsafe fn native_copy(
        &self,
        d: Direction,
        dst: u64,
        src: u64,
        n: usize,
    ) -> Option<native::CallResult> {
        // SAFETY: per the caller's contract.
        Some(unsafe { self.native_copy_now(d, dst, src, n) })
    }

    unsafe fn to_host(&self, dst: *mut u8, src: u64, n: usize, wait: bool) -> Result<(), GpuError> {
        let device = self.enter("cuMemcpyDtoHAsync")?;
        self.queue(device, wait, Self::copy_op(dst as u64, src, n));
        Ok(())
    }

    unsafe fn on_device(&self, dst: u64, src: u64, n: usize, wait: bool) -> Result<(), GpuError> {
        let device = self.enter("cuMemcpyDtoDAsync")?;
        self.queue(device, wait, Self::copy_op(dst, src, n));
        Ok(())
    }

    unsafe fn peer(&self, dst: u64, _: u32, src: u64, _: u32, n: usize) -> Result<(), GpuError> {
        let device = self.enter("cuMemcpyPeerAsync")?;
        self.queue(device, true, Self::copy_op(dst, src, n));
        Ok(())
    }

    unsafe fn ipc_handle(&self, ptr: u64) -> Result<[u8; 64], GpuError> {
        self.ipc_handle_now(ptr)
    }

    unsafe fn ipc_open(&self, handle: &[u8; 64]) -> Result<u64, GpuError> {
        self.ipc_open_now(handle)
    }

    unsafe fn ipc_close(&self, ptr: u64) -> Result<(), GpuError> {
        self.ipc_close_now(ptr)
    }

    fn has_copy_batch(&self) -> bool {
        true
    }

    unsafe fn copy_batch(&self, copies: &[(u64, u64, usize)]) -> Result<(), BatchFailure> {
        // SAFETY: per the caller's contract.
        unsafe { self.copy_batch_now(copies) }
    }

    unsafe fn memset(&self, dst: u64, byte: u8, n: usize, wait: bool) -> Result<(), GpuError> {
        let device = self.enter("cuMemsetD8Async")?;
        self.queue(
            device,
            wait,
            Box::new(move || {
                // SAFETY: simulated device memory of at least `n` bytes (caller's contract).
                unsafe { std::ptr::write_bytes(dst as *mut u8, byte, n) };
            }),
        );
        Ok(())
    }

    fn synchronize(&self) -> Result<(), GpuError> {
        let device = self.enter("cuStreamSynchronize")?;
        self.lock().streams.run_all(StreamId::Device(device));
        self.trim_pool(device);
        Ok(())
    }

    fn prefer_location(&self, ptr: u64, n: usize, device: Option<u32>) -> Result<(), GpuError> {
        self.enter("cuMemAdvise")?;
        self.lock().advice.push((ptr, n, device));
        Ok(())
    }

    fn event_create(&self) -> Result<u64, GpuError> {
        let ordinal = self.enter("cuEventCreate")?;
        let id = self.next_event.fetch_add(1, Ordering::Relaxed);
        self.lock().events.insert(
            id,
            EventState {
                ordinal,
                at: None,
                queried: false,
            },
        );
        Ok(id)
    }

    unsafe fn event_record(&self, event: u64) -> Result<(), GpuError> {
        let device = self.event("cuEventRecord", event)?;
        self.record(event, StreamId::Device(device));
        Ok(())
    }

    unsafe fn event_wait(&self, event: u64) -> Result<(), GpuError> {
        self.event("cuEventSynchronize", event)?;
        let mut state = self.lock();
        if let Some((id, at)) = state.events.get(&event).and_then(|e| e.at) {
            state.streams.run_to(id, at);
        }
        Ok(())
    }

    unsafe fn event_query(&self, event: u64) -> Result<bool, GpuError> {
        self.event("cuEventQuery", event)?;
        let mut state = self.lock();
        let Some(e) = state.events.get_mut(&event) else {
            return Ok(true);
        };
        let Some((id, at)) = e.at else {
            return Ok(true);
        };
        let first = !e.queried;
        e.queried = true;
        if state.streams.ran(id) >= at {
            return Ok(true);
        }
        if first {
            return Ok(false);
        }
        state.streams.run_to(id, at);
        Ok(true)
    }

    unsafe fn event_destroy(&self, event: u64) {
        if let Err(e) = self.event("cuEventDestroy", event) {
            self.lock().violations.push(format!("event destroy: {e}"));
            return;
        }
        self.lock().events.remove(&event);
    }

    fn enable_peer(&self, from: u32, to: u32) -> bool {
        self.peer.contains(&(from, to))
    }

    fn compile(&self, source: &str, entry: &str) -> Result<u64, GpuError> {
        self.lock().calls.push("nvrtcCompileProgram");
        compiler::check(source, entry)?;
        Ok(1)
    }

    unsafe fn launch(
        &self,
        _: u64,
        grid: [u32; 3],
        block: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<(), GpuError> {
        let device = self.enter("cuLaunchKernel")?;
        compiler::check_launch(grid, block, self.max_items_x())?;
        // SAFETY: per `launch`'s contract, one 8-byte slot per parameter.
        unsafe { self.check_pool_access(device, params) }?;
        // The simulation runs no kernel code: a launch is queued work that does nothing.
        self.queue(device, false, Box::new(|| {}));
        Ok(())
    }

    fn stream_handle(&self, ordinal: u32) -> u64 {
        device_stream_handle(ordinal)
    }

    fn max_items_x(&self) -> u64 {
        self.launch_items.load(Ordering::Relaxed)
    }

    unsafe fn synchronize_stream(&self, stream: u64) -> Result<(), GpuError> {
        let device = self.enter("cuStreamSynchronize")?;
        let id = if stream <= 2 {
            StreamId::Device(device)
        } else {
            self.stream("cuStreamSynchronize", stream, device)?
        };
        self.lock().streams.run_all(id);
        self.trim_pool(device);
        Ok(())
    }

    unsafe fn event_record_on(&self, event: u64, stream: u64) -> Result<(), GpuError> {
        let device = self.event("cuEventRecord", event)?;
        let id = self.stream("cuEventRecord", stream, device)?;
        self.record(event, id);
        Ok(())
    }

    unsafe fn stream_wait_event(&self, stream: u64, event: u64) -> Result<(), GpuError> {
        // The stream is of the current context; the event may be of another device's
        // (cuStreamWaitEvent / hipStreamWaitEvent allow it: how one device's stream
        // waits for another's work).
        let device = self.enter("cuStreamWaitEvent")?;
        let id = self.stream("cuStreamWaitEvent", stream, device)?;
        let mut state = self.lock();
        let Some(e) = state.events.get(&event) else {
            return Err(error(
                "cuStreamWaitEvent",
                INVALID_HANDLE,
                "CUDA_ERROR_INVALID_HANDLE: no such event",
            ));
        };
        if let Some((on, at)) = e.at {
            state.streams.push_wait(id, on, at);
        }
        Ok(())
    }

    fn memory_info(&self) -> Result<(u64, u64), GpuError> {
        self.enter("cuMemGetInfo")?;
        let used = self.used();
        Ok((self.memory.saturating_sub(used) as u64, self.memory as u64))
    }

    fn pointer_device(&self, ptr: u64) -> Result<u32, GpuError> {
        let current = self.enter("cuPointerGetAttribute")?;
        if self.is_registered(ptr) {
            return Ok(current);
        }
        self.sizes()
            .iter()
            .find(|(start, (bytes, _, _))| (**start..**start + *bytes as u64).contains(&ptr))
            .map(|(_, (_, ordinal, _))| *ordinal)
            .ok_or_else(|| {
                error(
                    "cuPointerGetAttribute",
                    INVALID_VALUE,
                    "CUDA_ERROR_INVALID_VALUE: not a device pointer",
                )
            })
    }

    fn pointer_range(&self, ptr: u64) -> Result<Option<GpuPointer>, GpuError> {
        self.enter("cuPointerGetAttribute")?;
        Ok(self
            .sizes()
            .iter()
            .find(|(start, (bytes, _, _))| (**start..**start + *bytes as u64).contains(&ptr))
            .map(|(&base, &(len, ordinal, memory))| GpuPointer {
                ordinal,
                base,
                len,
                memory,
            }))
    }

    unsafe fn host_register(&self, ptr: *mut u8, len: usize) -> Result<(), GpuError> {
        self.enter("cuMemHostRegister")?;
        self.register(ptr as u64, len)
    }

    unsafe fn host_unregister(&self, ptr: *mut u8) -> Result<(), GpuError> {
        self.enter("cuMemHostUnregister")?;
        self.unregister(ptr as u64)
    }

    fn native(ptr: u64, kind: GpuMemory) -> Native {
        Native::Cuda { ptr, kind }
    }

    fn unpack(native: &Native) -> Option<(u64, GpuMemory)> {
        match native {
            Native::Cuda { ptr, kind } => Some((*ptr, *kind)),
            _ => None,
        }
    }
}
