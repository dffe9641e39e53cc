//! [`Statistics`]: counts current, peak and total bytes and allocations (RMM's `statistics_resource_adaptor`).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use super::{Block, MemoryResource};
use crate::core::error::Result;
use crate::core::location::Location;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// Counts of a [`Statistics`] adaptor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatisticsTotals {
    /// Bytes allocated now.
    pub current_bytes: usize,
    /// Most bytes allocated at once.
    pub peak_bytes: usize,
    /// Bytes allocated in all.
    pub total_bytes: usize,
    /// Allocations now.
    pub current_count: usize,
    /// Most allocations at once.
    pub peak_count: usize,
    /// Allocations in all.
    pub total_count: usize,
}

/// Counts current, peak and total bytes and allocations of the resource it wraps. A
/// block given back after running work ([`MemoryResource::deallocate_after`]) stops
/// counting at once, as in RMM, and goes to the inner resource in stream order.
///
/// No lock (RMM's takes one per call). The counts kept are what was allocated and what
/// was freed (bytes and blocks), the current ones their differences, and the peaks are
/// raised only when passed. The first thread to allocate or free through the adaptor
/// owns a set of counts only it writes, with plain loads and stores; every other thread
/// counts in a shared set with two read-modify-writes per call. A reading sums both,
/// so it is exact when no call is in flight; one taken while other threads allocate
/// may mix moments.
pub struct Statistics {
    inner: Arc<dyn MemoryResource>,
    /// The [`current_thread`] number of the thread that writes `owned` (0: none yet).
    owner: AtomicU64,
    /// Counts of the owning thread.
    owned: Counts,
    /// Counts of every other thread.
    shared: Counts,
}

/// One set of counts, on a cache line of its own (the owner's stores do not evict the
/// shared set other threads write, and the other way round).
#[derive(Default)]
#[repr(align(64))]
struct Counts([AtomicUsize; 6]);

/// Indexes of [`Counts`].
const ALLOCATED_BYTES: usize = 0;
const FREED_BYTES: usize = 1;
const PEAK_BYTES: usize = 2;
const ALLOCATED_COUNT: usize = 3;
const FREED_COUNT: usize = 4;
const PEAK_COUNT: usize = 5;

/// A number for the calling thread, never 0 and never given to another thread (a
/// thread-local read after the first call).
fn current_thread() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static NUMBER: Cell<u64> = const { Cell::new(0) };
    }
    NUMBER.with(|n| match n.get() {
        0 => {
            let number = NEXT.fetch_add(1, Relaxed);
            n.set(number);
            number
        }
        number => number,
    })
}

impl Statistics {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn MemoryResource>) -> Statistics {
        Statistics {
            inner,
            owner: AtomicU64::new(0),
            owned: Counts::default(),
            shared: Counts::default(),
        }
    }

    /// The counts so far.
    pub fn totals(&self) -> StatisticsTotals {
        let c = |i: usize| self.owned.0[i].load(Relaxed) + self.shared.0[i].load(Relaxed);
        // Freed first: a free counted after it cannot make the current count negative.
        let (freed_bytes, freed_count) = (c(FREED_BYTES), c(FREED_COUNT));
        let (total_bytes, total_count) = (c(ALLOCATED_BYTES), c(ALLOCATED_COUNT));
        let peak = |i: usize| {
            self.owned.0[i]
                .load(Relaxed)
                .max(self.shared.0[i].load(Relaxed))
        };
        StatisticsTotals {
            current_bytes: total_bytes.saturating_sub(freed_bytes),
            peak_bytes: peak(PEAK_BYTES),
            total_bytes,
            current_count: total_count.saturating_sub(freed_count),
            peak_count: peak(PEAK_COUNT),
            total_count,
        }
    }

    /// Whether the calling thread owns `owned` (made its owner if there is none yet).
    #[inline(always)]
    fn owns(&self) -> bool {
        let me = current_thread();
        match self.owner.load(Relaxed) {
            0 => self.owner.compare_exchange(0, me, Relaxed, Relaxed).is_ok(),
            owner => owner == me,
        }
    }

    /// Counts the block `allocated` holds (read in place: the result is not moved).
    #[inline(always)]
    fn count(&self, allocated: &Result<Block>) {
        let Ok(block) = allocated else {
            return;
        };
        let owns = self.owns();
        let (mine, theirs) = match owns {
            true => (&self.owned.0, &self.shared.0),
            false => (&self.shared.0, &self.owned.0),
        };
        // Adds `n` to `allocated`, then raises the peak to `allocated - freed` (both
        // sets) when passed (a free racing with this may not be in it yet).
        let count = |allocated: usize, freed: usize, peak: usize, n: usize| {
            let added = match owns {
                true => {
                    let added = mine[allocated].load(Relaxed).wrapping_add(n);
                    mine[allocated].store(added, Relaxed);
                    added
                }
                false => mine[allocated].fetch_add(n, Relaxed).wrapping_add(n),
            };
            let now = added
                .wrapping_add(theirs[allocated].load(Relaxed))
                .saturating_sub(
                    mine[freed]
                        .load(Relaxed)
                        .wrapping_add(theirs[freed].load(Relaxed)),
                );
            if now > mine[peak].load(Relaxed) {
                match owns {
                    true => mine[peak].store(now, Relaxed),
                    false => {
                        mine[peak].fetch_max(now, Relaxed);
                    }
                }
            }
        };
        count(ALLOCATED_BYTES, FREED_BYTES, PEAK_BYTES, block.bytes);
        count(ALLOCATED_COUNT, FREED_COUNT, PEAK_COUNT, 1);
    }

    /// Counts `block` as freed.
    #[inline(always)]
    fn uncount(&self, block: &Block) {
        match self.owns() {
            true => {
                let add = |i: usize, n: usize| {
                    let counts = &self.owned.0;
                    counts[i].store(counts[i].load(Relaxed).wrapping_add(n), Relaxed);
                };
                add(FREED_BYTES, block.bytes);
                add(FREED_COUNT, 1);
            }
            false => {
                self.shared.0[FREED_BYTES].fetch_add(block.bytes, Relaxed);
                self.shared.0[FREED_COUNT].fetch_add(1, Relaxed);
            }
        }
    }
}

impl MemoryResource for Statistics {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn describe(&self) -> String {
        format!("statistics({})", self.inner.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let allocated = self.inner.allocate(bytes, align);
        self.count(&allocated);
        allocated
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        let allocated = self.inner.allocate_on(bytes, align, queue);
        self.count(&allocated);
        allocated
    }
    fn deallocate(&self, block: Block) {
        self.uncount(&block);
        self.inner.deallocate(block);
    }
    fn deallocate_after(&self, block: Block, queue: Queue, event: Event) {
        self.uncount(&block);
        self.inner.deallocate_after(block, queue, event);
    }
}
