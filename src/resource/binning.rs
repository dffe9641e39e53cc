//! [`Binning`]: size classes, each a [`FixedSize`](super::FixedSize) resource, and a fallback (RMM's `binning_memory_resource`).

use std::sync::Arc;

use super::{Block, FixedSize, MemoryResource};
use crate::core::error::Result;
use crate::core::location::Location;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// Size classes (powers of two from `smallest` to `largest`), each a [`FixedSize`]
/// resource; larger requests go to the fallback resource.
pub struct Binning {
    bins: Vec<FixedSize>,
    upstream: Arc<dyn MemoryResource>,
    fallback: Arc<dyn MemoryResource>,
}

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
        // Powers of two up to `largest` (at most 64 of them: the doubling stops where
        // it would overflow).
        let mut size = smallest.max(1).checked_next_power_of_two();
        while let Some(bin) = size.filter(|s| *s <= largest) {
            bins.push(FixedSize::new(Arc::clone(&upstream), bin, per_chunk)?);
            size = bin.checked_mul(2);
        }
        Ok(Binning {
            bins,
            upstream,
            fallback,
        })
    }

    /// The resource the bins take their chunks from (RMM's `get_upstream_resource`).
    pub fn upstream(&self) -> &Arc<dyn MemoryResource> {
        &self.upstream
    }

    /// The resource that serves sizes above the largest bin.
    pub fn fallback(&self) -> &Arc<dyn MemoryResource> {
        &self.fallback
    }
}

impl MemoryResource for Binning {
    fn location(&self) -> Location {
        self.fallback.location()
    }
    fn device(&self) -> Option<std::sync::Arc<dyn crate::core::device::Device>> {
        self.fallback.device()
    }
    fn describe(&self) -> String {
        format!(
            "binning({} bins, fallback {})",
            self.bins.len(),
            self.fallback.describe()
        )
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        self.owner(bytes).allocate(bytes, align)
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        self.owner(bytes).allocate_on(bytes, align, queue)
    }
    fn deallocate(&self, block: Block) {
        self.owner(block.bytes).deallocate(block);
    }
    fn deallocate_after(&self, block: Block, queue: Queue, event: Event) {
        self.owner(block.bytes)
            .deallocate_after(block, queue, event);
    }
}

impl Binning {
    /// The smallest bin that holds `bytes`, else the fallback: a block goes back by its
    /// size to the resource that made it (no mark in its id, which belongs to the
    /// resource that made it).
    fn owner(&self, bytes: usize) -> &dyn MemoryResource {
        match self.bins.iter().find(|b| b.block_size() >= bytes) {
            Some(bin) => bin,
            None => self.fallback.as_ref(),
        }
    }
}
