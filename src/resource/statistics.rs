//! [`Statistics`]: counts current, peak and total bytes and allocations (RMM's `statistics_resource_adaptor`).

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
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
/// Two read-modify-writes per allocation and two per free, no lock: the counts kept are
/// what was allocated and what was freed (bytes and blocks), the current ones their
/// differences, and the peaks are raised only when passed. A reading taken while other
/// threads allocate may mix moments.
pub struct Statistics {
    inner: Arc<dyn MemoryResource>,
    counts: [AtomicUsize; 6],
}

/// Indexes of [`Statistics::counts`].
const ALLOCATED_BYTES: usize = 0;
const FREED_BYTES: usize = 1;
const PEAK_BYTES: usize = 2;
const ALLOCATED_COUNT: usize = 3;
const FREED_COUNT: usize = 4;
const PEAK_COUNT: usize = 5;

impl Statistics {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn MemoryResource>) -> Statistics {
        Statistics {
            inner,
            counts: Default::default(),
        }
    }

    /// The counts so far.
    pub fn totals(&self) -> StatisticsTotals {
        let c = |i: usize| self.counts[i].load(Relaxed);
        // Freed first: a free counted after it cannot make the current count negative.
        let (freed_bytes, freed_count) = (c(FREED_BYTES), c(FREED_COUNT));
        let (total_bytes, total_count) = (c(ALLOCATED_BYTES), c(ALLOCATED_COUNT));
        StatisticsTotals {
            current_bytes: total_bytes.saturating_sub(freed_bytes),
            peak_bytes: c(PEAK_BYTES),
            total_bytes,
            current_count: total_count.saturating_sub(freed_count),
            peak_count: c(PEAK_COUNT),
            total_count,
        }
    }

    fn counted(&self, allocated: Result<Block>) -> Result<Block> {
        let Ok(block) = &allocated else {
            return allocated;
        };
        let c = &self.counts;
        // `allocated - freed` now (a free racing with this may not be in it yet), and
        // the peak raised to it when passed.
        let count = |allocated: usize, freed: usize, peak: usize, n: usize| {
            let now = c[allocated]
                .fetch_add(n, Relaxed)
                .wrapping_add(n)
                .saturating_sub(c[freed].load(Relaxed));
            if now > c[peak].load(Relaxed) {
                c[peak].fetch_max(now, Relaxed);
            }
        };
        count(ALLOCATED_BYTES, FREED_BYTES, PEAK_BYTES, block.bytes);
        count(ALLOCATED_COUNT, FREED_COUNT, PEAK_COUNT, 1);
        allocated
    }

    fn uncount(&self, block: &Block) {
        self.counts[FREED_BYTES].fetch_add(block.bytes, Relaxed);
        self.counts[FREED_COUNT].fetch_add(1, Relaxed);
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
        self.counted(self.inner.allocate(bytes, align))
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        self.counted(self.inner.allocate_on(bytes, align, queue))
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
