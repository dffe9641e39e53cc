//! [`FixedSize`]: blocks of one size on a free list (RMM's `fixed_size_memory_resource`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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
