//! [`Limiting`]: a budget on the bytes in use (RMM's `limiting_resource_adaptor`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::core::block::Block;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::resource::MemoryResource;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// Refuses allocations that would take its bytes in use over a budget.
pub struct Limiting {
    inner: Arc<dyn MemoryResource>,
    budget: usize,
    used: AtomicUsize,
}

impl Limiting {
    /// The resource this one takes its memory from (RMM's `get_upstream_resource`).
    pub fn upstream(&self) -> &Arc<dyn MemoryResource> {
        &self.inner
    }

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
    fn device(&self) -> Option<std::sync::Arc<dyn crate::core::device::Device>> {
        self.inner.device()
    }
    fn describe(&self) -> String {
        format!("limiting({}, {} bytes)", self.inner.describe(), self.budget)
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        self.within_budget(bytes, |inner| inner.allocate(bytes, align))
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        self.within_budget(bytes, |inner| inner.allocate_on(bytes, align, queue))
    }
    fn deallocate(&self, block: Block) {
        self.used.fetch_sub(block.bytes, Ordering::SeqCst);
        self.inner.deallocate(block);
    }
    fn deallocate_after(&self, block: Block, queue: Queue, event: Event) {
        self.used.fetch_sub(block.bytes, Ordering::SeqCst);
        self.inner.deallocate_after(block, queue, event);
    }
}

impl Limiting {
    /// Takes `bytes` from the budget, then allocates with `allocate` (the budget is
    /// given back if it fails).
    fn within_budget(
        &self,
        bytes: usize,
        allocate: impl FnOnce(&dyn MemoryResource) -> Result<Block>,
    ) -> Result<Block> {
        // Taken only when it fits: no sum that overflows, nothing to give back on refusal.
        let taken = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(bytes)
                    .filter(|total| *total <= self.budget)
            });
        if let Err(previous) = taken {
            return Err(Error::OutOfMemory {
                location: self.location(),
                requested: bytes,
                by: "limiting adaptor".into(),
                reason: format!(
                    "allocating {bytes} bytes would exceed the budget of {} bytes ({previous} in use)",
                    self.budget
                ),
            });
        }
        allocate(self.inner.as_ref()).inspect_err(|_| {
            self.used.fetch_sub(bytes, Ordering::SeqCst);
        })
    }
}
