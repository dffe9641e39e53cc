//! [`Binning`]: size classes, each a [`FixedSize`](super::FixedSize) resource, and a fallback (RMM's `binning_memory_resource`).

use std::sync::Arc;

use super::{Block, FixedSize, MemoryResource};
use crate::core::error::Result;
use crate::core::location::Location;

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
