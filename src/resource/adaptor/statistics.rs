//! [`Statistics`]: counts current, peak and total bytes and allocations (RMM's `statistics_resource_adaptor`).

use std::sync::Arc;

use crate::core::block::Block;
use crate::core::error::Result;
use crate::core::location::Location;
use crate::core::tally::Tally;
use crate::resource::MemoryResource;
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
    counts: Tally<6>,
}

/// Indexes of [`Statistics::counts`].
const ALLOCATED_BYTES: usize = 0;
const FREED_BYTES: usize = 1;
const PEAK_BYTES: usize = 2;
const ALLOCATED_COUNT: usize = 3;
const FREED_COUNT: usize = 4;
const PEAK_COUNT: usize = 5;

impl Statistics {
    /// The resource this one takes its memory from (RMM's `get_upstream_resource`).
    pub fn upstream(&self) -> &Arc<dyn MemoryResource> {
        &self.inner
    }

    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn MemoryResource>) -> Statistics {
        Statistics {
            inner,
            counts: Tally::default(),
        }
    }

    /// The counts so far.
    pub fn totals(&self) -> StatisticsTotals {
        let c = |i: usize| self.counts.sum(i) as usize;
        // Freed first: a free counted after it cannot make the current count negative.
        let (freed_bytes, freed_count) = (c(FREED_BYTES), c(FREED_COUNT));
        let (total_bytes, total_count) = (c(ALLOCATED_BYTES), c(ALLOCATED_COUNT));
        StatisticsTotals {
            current_bytes: total_bytes.saturating_sub(freed_bytes),
            peak_bytes: self.counts.max(PEAK_BYTES) as usize,
            total_bytes,
            current_count: total_count.saturating_sub(freed_count),
            peak_count: self.counts.max(PEAK_COUNT) as usize,
            total_count,
        }
    }

    /// Counts the block `allocated` holds (read in place: the result is not moved).
    #[inline(always)]
    fn count(&self, allocated: &Result<Block>) {
        let Ok(block) = allocated else {
            return;
        };
        let (c, writer) = (&self.counts, self.counts.writer());
        // Adds `n` to `allocated`, then raises the peak to `allocated - freed` (both
        // sets) when passed (a free racing with this may not be in it yet).
        let count = |allocated: usize, freed: usize, peak: usize, n: u64| {
            c.add(writer, allocated, n);
            c.raise(writer, peak, c.sum(allocated).saturating_sub(c.sum(freed)));
        };
        count(ALLOCATED_BYTES, FREED_BYTES, PEAK_BYTES, block.bytes as u64);
        count(ALLOCATED_COUNT, FREED_COUNT, PEAK_COUNT, 1);
    }

    /// Counts `block` as freed.
    #[inline(always)]
    fn uncount(&self, block: &Block) {
        let writer = self.counts.writer();
        self.counts.add(writer, FREED_BYTES, block.bytes as u64);
        self.counts.add(writer, FREED_COUNT, 1);
    }
}

impl MemoryResource for Statistics {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn device(&self) -> Option<std::sync::Arc<dyn crate::core::device::Device>> {
        self.inner.device()
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
