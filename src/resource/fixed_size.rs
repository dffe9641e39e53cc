//! [`FixedSize`]: blocks of one size on a free list (RMM's `fixed_size_memory_resource`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::{Block, MemoryResource};
use crate::core::device::{Device, ALIGNMENT};
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// The most a chunk is aligned to for its blocks (a block size with more trailing zero
/// bits still gets blocks aligned to this; more is served by upstream directly).
const MAX_CHUNK_ALIGN: usize = 4096;

/// Blocks of one size, carved from upstream chunks and kept on a free list.
///
/// Stream order: a block given back after running work
/// ([`MemoryResource::deallocate_after`]) is handed out again at once for work on the
/// same queue ([`MemoryResource::allocate_on`]), and to anyone else once the work is
/// done; nobody waits for it. Alignment: blocks are aligned to the largest power of two
/// that divides the block size (up to 4 KiB); a request for more goes to upstream.
pub struct FixedSize {
    upstream: Arc<dyn MemoryResource>,
    device: Arc<dyn Device>,
    block: usize,
    /// What every block's address is a multiple of.
    align: usize,
    per_chunk: usize,
    state: Mutex<FixedState>,
}

/// Where a handed-out block came from.
enum Slot {
    /// `(chunk, offset)` of this resource's chunks.
    Carved(usize, usize),
    /// Straight from upstream (an alignment the chunks do not give), with upstream's id.
    Upstream(u64),
}

/// A slot given back while work on `queue` (done at `event`) may still use it.
struct Pending {
    slot: (usize, usize),
    queue: Queue,
    event: Event,
}

#[derive(Default)]
struct FixedState {
    chunks: Vec<Block>,
    free: Vec<(usize, usize)>,
    pending: Vec<Pending>,
    out: HashMap<u64, Slot>,
    next: u64,
}

impl FixedSize {
    /// The resource this one takes its memory from (RMM's `get_upstream_resource`).
    pub fn upstream(&self) -> &Arc<dyn MemoryResource> {
        &self.upstream
    }

    /// Blocks of `block` bytes (rounded up to the device's sub-allocation alignment),
    /// `per_chunk` of them per upstream allocation.
    pub fn new(
        upstream: Arc<dyn MemoryResource>,
        block: usize,
        per_chunk: usize,
    ) -> Result<FixedSize> {
        let location = upstream.location();
        let device = Arc::clone(crate::runtime::registry::registry().device(location)?);
        let sub = device.sub_alignment().max(ALIGNMENT).next_power_of_two();
        let too_large = || {
            Error::Invalid(format!(
                "{location}: a fixed-size resource of {block}-byte blocks, {per_chunk} per chunk, does not fit in memory sizes; ask for smaller blocks or fewer per chunk"
            ))
        };
        let block = block
            .max(1)
            .checked_next_multiple_of(sub)
            .ok_or_else(too_large)?;
        let per_chunk = per_chunk.max(1);
        block.checked_mul(per_chunk).ok_or_else(too_large)?;
        Ok(FixedSize {
            upstream,
            device,
            block,
            align: (block & block.wrapping_neg()).min(MAX_CHUNK_ALIGN).max(sub),
            per_chunk,
            state: Mutex::new(FixedState::default()),
        })
    }

    /// The block size it hands out.
    pub fn block_size(&self) -> usize {
        self.block
    }

    fn lock(&self) -> MutexGuard<'_, FixedState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn allocate_in(&self, bytes: usize, align: usize, queue: Option<Queue>) -> Result<Block> {
        crate::core::aligned::check_alignment(self.location(), align)?;
        if bytes > self.block {
            return Err(Error::Invalid(format!(
                "{}: a fixed-size resource of {}-byte blocks cannot serve {bytes} bytes",
                self.location(),
                self.block
            )));
        }
        if align > self.align {
            return self.upstream_block(bytes, align, queue);
        }
        let mut state = self.lock();
        // A slot released on the same queue is reused at once; its event is dropped
        // after the lock is let go.
        let reused = queue
            .and_then(|q| state.pending.iter().position(|p| p.queue == q))
            .map(|k| state.pending.swap_remove(k));
        let (slot, spent) = match reused {
            Some(p) => (p.slot, Some(p.event)),
            None => {
                reclaim(&mut state);
                if state.free.is_empty() {
                    // The upstream is asked without this resource's lock: one that calls
                    // back into it (a failure callback giving back a block) is served,
                    // never a deadlock.
                    drop(state);
                    let chunk = self
                        .upstream
                        .allocate(self.block * self.per_chunk, self.align);
                    state = self.lock();
                    match chunk {
                        Ok(chunk) => {
                            let c = state.chunks.len();
                            state.chunks.push(chunk);
                            state
                                .free
                                .extend((0..self.per_chunk).rev().map(|i| (c, i * self.block)));
                        }
                        // A block freed meanwhile (by another thread, or by the upstream's
                        // failure callback) serves this one.
                        Err(e) if e.is_out_of_memory() && !state.free.is_empty() => {}
                        Err(e) => return Err(e),
                    }
                }
                let slot = state.free.pop().ok_or_else(|| {
                    Error::Invalid(format!(
                        "{}: fixed-size resource: no free block",
                        self.location()
                    ))
                })?;
                (slot, None)
            }
        };
        let (c, offset) = slot;
        let native = match self
            .device
            .sub_native(&state.chunks[c].native, offset, self.block)
        {
            Ok(n) => n,
            Err(e) => {
                state.free.push(slot);
                return Err(e);
            }
        };
        state.next += 1;
        let id = state.next;
        state.out.insert(id, Slot::Carved(c, offset));
        drop(state);
        drop(spent);
        Ok(Block {
            native,
            bytes,
            id,
            location: self.location(),
            origin: None,
            tracking: 0,
        })
    }

    /// A block aligned beyond the chunks' alignment, straight from upstream.
    fn upstream_block(&self, bytes: usize, align: usize, queue: Option<Queue>) -> Result<Block> {
        let mut block = match queue {
            Some(q) => self.upstream.allocate_on(bytes, align, q)?,
            None => self.upstream.allocate(bytes, align)?,
        };
        let mut state = self.lock();
        state.next += 1;
        let id = state.next;
        state.out.insert(id, Slot::Upstream(block.id));
        block.id = id;
        Ok(block)
    }

    /// Takes `block` back: its slot, or `None` when it went back to upstream (or is
    /// not this resource's: left alone, leaked rather than freed twice).
    fn take_back(
        &self,
        state: &mut FixedState,
        mut block: Block,
        after: Option<(Queue, Event)>,
    ) -> Option<(usize, usize)> {
        match state.out.remove(&block.id)? {
            Slot::Carved(c, offset) => {
                // SAFETY: made by `sub_native` in `allocate_in`, given back once.
                unsafe { self.device.release_sub(&block.native) };
                Some((c, offset))
            }
            Slot::Upstream(id) => {
                block.id = id;
                match after {
                    Some((queue, event)) => self.upstream.deallocate_after(block, queue, event),
                    None => self.upstream.deallocate(block),
                }
                None
            }
        }
    }
}

/// Frees the pending slots whose work is done.
fn reclaim(state: &mut FixedState) {
    let mut k = 0;
    while k < state.pending.len() {
        if state.pending[k].event.is_complete() {
            let p = state.pending.swap_remove(k);
            state.free.push(p.slot);
        } else {
            k += 1;
        }
    }
}

impl MemoryResource for FixedSize {
    fn location(&self) -> Location {
        self.upstream.location()
    }
    fn device(&self) -> Option<std::sync::Arc<dyn crate::core::device::Device>> {
        self.upstream.device()
    }
    fn describe(&self) -> String {
        format!("fixed({} bytes, {})", self.block, self.upstream.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        self.allocate_in(bytes, align, None)
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        self.allocate_in(bytes, align, Some(queue))
    }
    fn deallocate(&self, block: Block) {
        let mut state = self.lock();
        if let Some(slot) = self.take_back(&mut state, block, None) {
            state.free.push(slot);
        }
    }
    fn deallocate_after(&self, block: Block, queue: Queue, event: Event) {
        let mut state = self.lock();
        if let Some(slot) = self.take_back(&mut state, block, Some((queue, event.clone()))) {
            state.pending.push(Pending { slot, queue, event });
        }
    }
}

impl Drop for FixedSize {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        for p in std::mem::take(&mut state.pending) {
            let _ = p.event.wait();
        }
        if state.out.is_empty() {
            for chunk in state.chunks.drain(..) {
                self.upstream.deallocate(chunk);
            }
        }
    }
}
