//! Adaptors over any memory resource: statistics, a byte budget, live-allocation
//! tracking.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{Block, MemoryResource};
use crate::core::error::{Error, Result};
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

/// Refuses allocations that would take its bytes in use over a budget.
pub struct Limiting {
    inner: Arc<dyn MemoryResource>,
    budget: usize,
    used: AtomicUsize,
}

impl Limiting {
    /// Wraps `inner` with a budget of `budget` bytes in use at once.
    pub fn new(inner: Arc<dyn MemoryResource>, budget: usize) -> Limiting {
        Limiting {
            inner,
            budget,
            used: AtomicUsize::new(0),
        }
    }

    /// Bytes in use now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

impl MemoryResource for Limiting {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn describe(&self) -> String {
        format!("limiting({}, {} bytes)", self.inner.describe(), self.budget)
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let previous = self.used.fetch_add(bytes, Ordering::SeqCst);
        if previous + bytes > self.budget {
            self.used.fetch_sub(bytes, Ordering::SeqCst);
            return Err(Error::Invalid(format!(
                "{}: allocating {bytes} bytes would exceed the budget of {} bytes ({previous} in use); free memory or raise the limit",
                self.location(),
                self.budget
            )));
        }
        self.inner.allocate(bytes, align).inspect_err(|_| {
            self.used.fetch_sub(bytes, Ordering::SeqCst);
        })
    }
    fn deallocate(&self, block: Block) {
        self.used.fetch_sub(block.bytes, Ordering::SeqCst);
        self.inner.deallocate(block);
    }
}

/// Records every live allocation; the ones still alive when it is dropped are reported
/// as leaks (and can be listed any time with [`Tracking::leaks`]).
pub struct Tracking {
    inner: Arc<dyn MemoryResource>,
    live: Mutex<HashMap<u64, (usize, String)>>,
    next: AtomicUsize,
}

impl Tracking {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn MemoryResource>) -> Tracking {
        Tracking {
            inner,
            live: Mutex::new(HashMap::new()),
            next: AtomicUsize::new(1),
        }
    }

    /// The allocations alive now: (bytes, thread that made it).
    pub fn leaks(&self) -> Vec<(usize, String)> {
        self.live
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }
}

impl MemoryResource for Tracking {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn describe(&self) -> String {
        format!("tracking({})", self.inner.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let mut block = self.inner.allocate(bytes, align)?;
        // The tracker keys blocks by its own id, kept in the high bits of the block's id
        // so that the inner resource still recognises its part.
        let key = self.next.fetch_add(1, Ordering::Relaxed) as u64;
        let thread = format!("{:?}", std::thread::current().id());
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key << 40 | block.id, (bytes, thread));
        block.id |= key << 40;
        Ok(block)
    }
    fn deallocate(&self, mut block: Block) {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&block.id);
        block.id &= (1 << 40) - 1;
        self.inner.deallocate(block);
    }
}

impl Drop for Tracking {
    fn drop(&mut self) {
        let leaks = self.leaks();
        if !leaks.is_empty() {
            let bytes: usize = leaks.iter().map(|l| l.0).sum();
            eprintln!(
                "locus: {} allocation(s) of {bytes} bytes at {} were never freed (tracking adaptor)",
                leaks.len(),
                self.location()
            );
        }
    }
}
