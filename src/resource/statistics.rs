//! [`Statistics`]: counts current, peak and total bytes and allocations (RMM's `statistics_resource_adaptor`).

use std::sync::{Arc, Mutex};

use super::{Block, MemoryResource};
use crate::core::error::Result;
use crate::core::location::Location;

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

/// Counts current, peak and total bytes and allocations of the resource it wraps.
pub struct Statistics {
    inner: Arc<dyn MemoryResource>,
    totals: Mutex<StatisticsTotals>,
}

impl Statistics {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn MemoryResource>) -> Statistics {
        Statistics {
            inner,
            totals: Mutex::new(StatisticsTotals::default()),
        }
    }

    /// The counts so far.
    pub fn totals(&self) -> StatisticsTotals {
        *self.totals.lock().unwrap_or_else(|e| e.into_inner())
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
        let block = self.inner.allocate(bytes, align)?;
        let mut t = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        t.current_bytes += bytes;
        t.current_count += 1;
        t.total_bytes += bytes;
        t.total_count += 1;
        t.peak_bytes = t.peak_bytes.max(t.current_bytes);
        t.peak_count = t.peak_count.max(t.current_count);
        Ok(block)
    }
    fn deallocate(&self, block: Block) {
        {
            let mut t = self.totals.lock().unwrap_or_else(|e| e.into_inner());
            t.current_bytes = t.current_bytes.saturating_sub(block.bytes);
            t.current_count = t.current_count.saturating_sub(1);
        }
        self.inner.deallocate(block);
    }
}
