//! More resources and adaptors: fixed-size blocks, size-class binning, a failure
//! callback that may free memory and retry, and a CSV log that `locus replay` replays.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{Block, MemoryResource};
use crate::core::device::Device;
use crate::core::error::{Error, Result};
use crate::core::location::Location;

/// Blocks of one size, carved from upstream chunks and kept on a free list.
pub struct FixedSize {
    upstream: Arc<dyn MemoryResource>,
    device: Arc<dyn Device>,
    block: usize,
    per_chunk: usize,
    state: Mutex<FixedState>,
}

#[derive(Default)]
struct FixedState {
    chunks: Vec<Block>,
    free: Vec<(usize, usize)>,
    out: HashMap<u64, (usize, usize)>,
    next: u64,
}

impl FixedSize {
    /// Blocks of `block` bytes (rounded up to the device's sub-allocation alignment),
    /// `per_chunk` of them per upstream allocation.
    pub fn new(
        upstream: Arc<dyn MemoryResource>,
        block: usize,
        per_chunk: usize,
    ) -> Result<FixedSize> {
        let device = Arc::clone(crate::runtime::registry::registry().device(upstream.location())?);
        let align = device.sub_alignment().max(crate::core::device::ALIGNMENT);
        Ok(FixedSize {
            upstream,
            device,
            block: block.max(1).div_ceil(align) * align,
            per_chunk: per_chunk.max(1),
            state: Mutex::new(FixedState::default()),
        })
    }

    /// The block size it hands out.
    pub fn block_size(&self) -> usize {
        self.block
    }
}

impl MemoryResource for FixedSize {
    fn location(&self) -> Location {
        self.upstream.location()
    }
    fn describe(&self) -> String {
        format!("fixed({} bytes, {})", self.block, self.upstream.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        if bytes > self.block || !self.block.is_multiple_of(align.max(1)) {
            return Err(Error::Invalid(format!(
                "{}: a fixed-size resource of {}-byte blocks cannot serve {bytes} bytes aligned to {align}",
                self.location(),
                self.block
            )));
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.free.is_empty() {
            let chunk = self
                .upstream
                .allocate(self.block * self.per_chunk, crate::core::device::ALIGNMENT)?;
            let c = state.chunks.len();
            state.chunks.push(chunk);
            state
                .free
                .extend((0..self.per_chunk).rev().map(|i| (c, i * self.block)));
        }
        let Some((c, offset)) = state.free.pop() else {
            return Err(Error::Invalid("fixed-size resource: no free block".into()));
        };
        let native = match self
            .device
            .sub_native(&state.chunks[c].native, offset, self.block)
        {
            Ok(n) => n,
            Err(e) => {
                state.free.push((c, offset));
                return Err(e);
            }
        };
        state.next += 1;
        let id = state.next;
        state.out.insert(id, (c, offset));
        Ok(Block {
            native,
            bytes,
            id,
            location: self.location(),
        })
    }
    fn deallocate(&self, block: Block) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = state.out.remove(&block.id) {
            // SAFETY: made by `sub_native` in `allocate`, given back once.
            unsafe { self.device.release_sub(&block.native) };
            state.free.push(slot);
        }
    }
}

impl Drop for FixedSize {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if state.out.is_empty() {
            for chunk in state.chunks.drain(..) {
                self.upstream.deallocate(chunk);
            }
        }
    }
}

/// Size classes (powers of two from `smallest` to `largest`), each a [`FixedSize`]
/// resource; larger requests go to the fallback resource.
pub struct Binning {
    bins: Vec<FixedSize>,
    fallback: Arc<dyn MemoryResource>,
}

/// Bin indexes live in the top bits of a block id; the fallback's blocks have none.
const BIN_SHIFT: u32 = 48;

impl Binning {
    /// Bins for sizes `smallest`, 2x, 4x, ... up to `largest`, each taking `per_chunk`
    /// blocks at a time from `upstream`; anything larger goes to `fallback`.
    pub fn new(
        upstream: Arc<dyn MemoryResource>,
        fallback: Arc<dyn MemoryResource>,
        smallest: usize,
        largest: usize,
        per_chunk: usize,
    ) -> Result<Binning> {
        let mut bins = Vec::new();
        let mut size = smallest.max(1).next_power_of_two();
        while size <= largest {
            bins.push(FixedSize::new(Arc::clone(&upstream), size, per_chunk)?);
            size *= 2;
        }
        Ok(Binning { bins, fallback })
    }
}

impl MemoryResource for Binning {
    fn location(&self) -> Location {
        self.fallback.location()
    }
    fn describe(&self) -> String {
        format!(
            "binning({} bins, fallback {})",
            self.bins.len(),
            self.fallback.describe()
        )
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        match self.bins.iter().position(|b| b.block_size() >= bytes) {
            Some(i) => {
                let mut block = self.bins[i].allocate(bytes, align)?;
                block.id |= ((i + 1) as u64) << BIN_SHIFT;
                Ok(block)
            }
            None => self.fallback.allocate(bytes, align),
        }
    }
    fn deallocate(&self, mut block: Block) {
        let bin = (block.id >> BIN_SHIFT) as usize;
        if bin == 0 {
            return self.fallback.deallocate(block);
        }
        block.id &= (1 << BIN_SHIFT) - 1;
        if let Some(b) = self.bins.get(bin - 1) {
            b.deallocate(block);
        }
    }
}

/// Calls `on_failure(bytes)` when an allocation fails; when it returns true (it freed
/// something), the allocation is tried again, up to `retries` times.
pub struct FailureCallback {
    inner: Arc<dyn MemoryResource>,
    on_failure: Box<dyn Fn(usize) -> bool + Send + Sync>,
    retries: usize,
}

impl FailureCallback {
    /// Wraps `inner`.
    pub fn new(
        inner: Arc<dyn MemoryResource>,
        retries: usize,
        on_failure: impl Fn(usize) -> bool + Send + Sync + 'static,
    ) -> FailureCallback {
        FailureCallback {
            inner,
            on_failure: Box::new(on_failure),
            retries,
        }
    }
}

impl MemoryResource for FailureCallback {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn describe(&self) -> String {
        format!("failure-callback({})", self.inner.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let mut attempt = 0;
        loop {
            match self.inner.allocate(bytes, align) {
                Ok(b) => return Ok(b),
                Err(e) if attempt < self.retries && (self.on_failure)(bytes) => {
                    attempt += 1;
                    let _ = e;
                }
                Err(e) => return Err(e),
            }
        }
    }
    fn deallocate(&self, block: Block) {
        self.inner.deallocate(block);
    }
}

/// Writes a CSV line per allocation and free: `thread,time_ns,action,id,address,size,location`.
/// `locus replay` replays such a file against any resource and location.
pub struct Logging {
    inner: Arc<dyn MemoryResource>,
    out: Mutex<Box<dyn Write + Send>>,
    start: Instant,
    ids: Mutex<LogIds>,
}

/// The logging adaptor's own ids: the last one given, and (block id, address) -> id.
type LogIds = (u64, HashMap<(u64, u64), u64>);

/// The CSV header `Logging` writes first.
pub const LOG_HEADER: &str = "thread,time_ns,action,id,address,size,location";

impl Logging {
    /// Wraps `inner`, writing to `out` (the header first).
    pub fn new(inner: Arc<dyn MemoryResource>, mut out: Box<dyn Write + Send>) -> Result<Logging> {
        writeln!(out, "{LOG_HEADER}")
            .map_err(|e| Error::Invalid(format!("writing the allocation log: {e}")))?;
        Ok(Logging {
            inner,
            out: Mutex::new(out),
            start: Instant::now(),
            ids: Mutex::new((0, HashMap::new())),
        })
    }

    fn line(&self, action: &str, id: u64, block: &Block) {
        let address = match &block.native {
            crate::core::native::Native::Host { ptr } => format!("{:p}", *ptr),
            #[allow(unreachable_patterns)]
            other => format!("{other:?}").replace(',', ";"),
        };
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(
            out,
            "{:?},{},{action},{id},{address},{},{}",
            std::thread::current().id(),
            self.start.elapsed().as_nanos(),
            block.bytes,
            block.location
        );
        let _ = out.flush();
    }
}

impl MemoryResource for Logging {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn describe(&self) -> String {
        format!("logging({})", self.inner.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let block = self.inner.allocate(bytes, align)?;
        let id = {
            let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
            ids.0 += 1;
            let id = ids.0;
            ids.1.insert((block.id, addr(&block)), id);
            id
        };
        self.line("allocate", id, &block);
        Ok(block)
    }
    fn deallocate(&self, block: Block) {
        let id = self
            .ids
            .lock()
            .map(|mut ids| ids.1.remove(&(block.id, addr(&block))).unwrap_or(0))
            .unwrap_or(0);
        self.line("free", id, &block);
        self.inner.deallocate(block);
    }
}

fn addr(block: &Block) -> u64 {
    match &block.native {
        crate::core::native::Native::Host { ptr } => *ptr as u64,
        #[allow(unreachable_patterns)]
        _ => 0,
    }
}

/// What a replay measured.
#[derive(Debug, Clone, Copy)]
pub struct ReplayReport {
    /// Allocations and frees replayed.
    pub operations: usize,
    /// Wall time of the replay.
    pub seconds: f64,
    /// Most bytes live at once during the replay.
    pub peak_live_bytes: usize,
}

/// Replays a `Logging` CSV against `resource`: every allocation and free in order.
pub fn replay(log: &str, resource: &dyn MemoryResource) -> Result<ReplayReport> {
    let mut lines = log.lines();
    match lines.next() {
        Some(h) if h.trim() == LOG_HEADER => {}
        _ => {
            return Err(Error::Invalid(format!(
                "not a locus allocation log: the first line must be `{LOG_HEADER}`"
            )))
        }
    }
    let mut live: HashMap<u64, Block> = HashMap::new();
    let (mut bytes, mut peak, mut ops) = (0usize, 0usize, 0usize);
    let start = Instant::now();
    for (n, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split(',').collect();
        let bad = || {
            Error::Invalid(format!(
                "allocation log line {}: cannot read `{line}`",
                n + 2
            ))
        };
        if fields.len() < 7 {
            return Err(bad());
        }
        let id: u64 = fields[3].parse().map_err(|_| bad())?;
        let size: usize = fields[5].parse().map_err(|_| bad())?;
        match fields[2] {
            "allocate" => {
                live.insert(id, resource.allocate(size, crate::core::device::ALIGNMENT)?);
                bytes += size;
                peak = peak.max(bytes);
            }
            "free" => {
                if let Some(b) = live.remove(&id) {
                    bytes -= b.bytes();
                    resource.deallocate(b);
                }
            }
            _ => return Err(bad()),
        }
        ops += 1;
    }
    for (_, b) in live.drain() {
        resource.deallocate(b);
    }
    Ok(ReplayReport {
        operations: ops,
        seconds: start.elapsed().as_secs_f64(),
        peak_live_bytes: peak,
    })
}

/// Per-thread arenas over a global resource: each thread sub-allocates from its own
/// [`Pool`](super::Pool), which takes superblocks from the global resource, so threads
/// do not contend on one lock. A block freed on another thread goes back to the arena
/// that made it. When a thread ends, its pool (and the memory it holds) passes to the
/// next thread that comes. Works on every backend that sub-allocates (pointers, and
/// offsets into OpenCL and WebGPU buffers, which add up). Up to [`Arena::MAX_ARENAS`]
/// threads at once get a pool of their own; more share them, round-robin.
pub struct Arena {
    global: Arc<dyn MemoryResource>,
    superblock: usize,
    /// Identifies this arena in the threads' caches.
    serial: u64,
    slots: Arc<Slots>,
}

/// The per-thread pools (read without a lock once made) and which are free.
struct Slots {
    pools: Box<[std::sync::OnceLock<super::Pool>]>,
    /// Slots whose thread ended, and the next never-used slot.
    free: Mutex<(Vec<usize>, usize)>,
}

/// A thread's hold on a slot: given back when the thread ends (or the thread's cache
/// drops it).
struct Lease {
    serial: u64,
    index: usize,
    slots: std::sync::Weak<Slots>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(slots) = self.slots.upgrade() {
            slots
                .free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .0
                .push(self.index);
        }
    }
}

/// Arena indexes live in the top bits of a block id.
const ARENA_SHIFT: u32 = 52;

impl Arena {
    /// How many threads at once get a pool of their own (the index must fit a block
    /// id's top 12 bits).
    pub const MAX_ARENAS: usize = 64;

    /// Arenas taking `superblock` bytes at a time from `global`.
    pub fn new(global: Arc<dyn MemoryResource>, superblock: usize) -> Arena {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Arena {
            global,
            superblock,
            serial: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            slots: Arc::new(Slots {
                pools: (0..Self::MAX_ARENAS)
                    .map(|_| std::sync::OnceLock::new())
                    .collect(),
                free: Mutex::new((Vec::new(), 0)),
            }),
        }
    }

    /// How many per-thread pools exist (at most one per thread that allocated at the
    /// same time, up to [`Arena::MAX_ARENAS`]).
    pub fn arenas(&self) -> usize {
        self.slots
            .pools
            .iter()
            .filter(|s| s.get().is_some())
            .count()
    }

    /// This thread's slot and pool: the slot from the thread's cache (no lock, no
    /// reference count), else leased under the arena's lock and cached.
    fn mine(&self) -> (usize, &super::Pool) {
        /// Leases per thread: arenas beyond it are leased again.
        const CACHED: usize = 16;
        thread_local! {
            static LEASES: std::cell::RefCell<Vec<Lease>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        let cached = LEASES.with(|c| {
            c.borrow()
                .iter()
                .find(|l| l.serial == self.serial)
                .map(|l| l.index)
        });
        let index = cached.unwrap_or_else(|| {
            let index = self.lease();
            let lease = Lease {
                serial: self.serial,
                index,
                slots: Arc::downgrade(&self.slots),
            };
            let evicted = LEASES.with(|c| {
                let mut c = c.borrow_mut();
                let evicted = (c.len() == CACHED).then(|| c.remove(0));
                c.push(lease);
                evicted
            });
            drop(evicted); // gives its slot back (outside the cache's borrow)
            index
        });
        let pool = self.slots.pools[index].get_or_init(|| {
            super::Pool::new(Arc::clone(&self.global), self.superblock, usize::MAX / 2)
        });
        (index, pool)
    }

    /// A slot for the calling thread: one a finished thread gave back, else a new one,
    /// else (all taken) one shared round-robin.
    fn lease(&self) -> usize {
        let mut free = self.slots.free.lock().unwrap_or_else(|e| e.into_inner());
        let (given_back, next) = &mut *free;
        if let Some(index) = given_back.pop() {
            return index;
        }
        let index = *next % Self::MAX_ARENAS;
        *next += 1;
        index
    }
}

impl MemoryResource for Arena {
    fn location(&self) -> Location {
        self.global.location()
    }
    fn describe(&self) -> String {
        format!(
            "arena({} bytes per superblock, {})",
            self.superblock,
            self.global.describe()
        )
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let (index, pool) = self.mine();
        let mut block = pool.allocate(bytes, align)?;
        block.id |= ((index + 1) as u64) << ARENA_SHIFT;
        Ok(block)
    }
    fn deallocate(&self, mut block: Block) {
        let index = (block.id >> ARENA_SHIFT) as usize;
        block.id &= (1 << ARENA_SHIFT) - 1;
        // A block of no arena of this resource (index 0 or unmade): refused, leaked.
        if let Some(pool) = index
            .checked_sub(1)
            .and_then(|i| self.slots.pools.get(i))
            .and_then(std::sync::OnceLock::get)
        {
            pool.deallocate(block);
        }
    }
}
