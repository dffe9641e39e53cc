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
pub struct Statistics {
    inner: Arc<dyn MemoryResource>,
    /// The counts, each its own atomic (no lock on the allocation path; a reading taken
    /// while other threads allocate may mix moments).
    counts: [AtomicUsize; 6],
}

/// Indexes of [`Statistics::counts`].
const CURRENT_BYTES: usize = 0;
const PEAK_BYTES: usize = 1;
const TOTAL_BYTES: usize = 2;
const CURRENT_COUNT: usize = 3;
const PEAK_COUNT: usize = 4;
const TOTAL_COUNT: usize = 5;

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
        StatisticsTotals {
            current_bytes: c(CURRENT_BYTES),
            peak_bytes: c(PEAK_BYTES),
            total_bytes: c(TOTAL_BYTES),
            current_count: c(CURRENT_COUNT),
            peak_count: c(PEAK_COUNT),
            total_count: c(TOTAL_COUNT),
        }
    }

    fn counted(&self, block: Result<Block>) -> Result<Block> {
        let block = block?;
        let bytes = block.bytes;
        let c = &self.counts;
        let now = c[CURRENT_BYTES].fetch_add(bytes, Relaxed) + bytes;
        c[PEAK_BYTES].fetch_max(now, Relaxed);
        c[TOTAL_BYTES].fetch_add(bytes, Relaxed);
        let count = c[CURRENT_COUNT].fetch_add(1, Relaxed) + 1;
        c[PEAK_COUNT].fetch_max(count, Relaxed);
        c[TOTAL_COUNT].fetch_add(1, Relaxed);
        Ok(block)
    }

    fn uncount(&self, block: &Block) {
        let sub = |i: usize, n: usize| {
            let _ = self.counts[i].fetch_update(Relaxed, Relaxed, |v| Some(v.saturating_sub(n)));
        };
        sub(CURRENT_BYTES, block.bytes);
        sub(CURRENT_COUNT, 1);
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
