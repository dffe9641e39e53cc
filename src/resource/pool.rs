//! A pool: large upstream blocks, sub-allocated by coalescing best fit.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use super::{Block, MemoryResource};
use crate::backends::Device;
use crate::error::{Error, Result};
use crate::location::Location;

struct Chunk {
    block: Block,
    /// Free ranges: offset -> length.
    free: BTreeMap<usize, usize>,
}

#[derive(Default)]
struct State {
    chunks: Vec<Option<Chunk>>,
    /// Handed-out blocks: id -> (chunk, offset, length).
    live: HashMap<u64, (usize, usize, usize)>,
    next_id: u64,
    held: usize,
}

/// Coalescing best-fit sub-allocator over an upstream resource: grows by at least its
/// initial size until its maximum, and gives wholly free chunks back on [`Pool::release`].
/// Works on every location whose backend can address part of an allocation (host,
/// OpenMP, SYCL, CUDA, HIP pointers; OpenCL sub-buffers).
pub struct Pool {
    upstream: Arc<dyn MemoryResource>,
    device: Arc<dyn Device>,
    initial: usize,
    maximum: usize,
    align: usize,
    state: Mutex<State>,
}

impl Pool {
    /// A pool over `upstream` that grows in steps of at least `initial` bytes up to
    /// `maximum` bytes in all. Nothing is allocated until the first request.
    pub fn new(upstream: Arc<dyn MemoryResource>, initial: usize, maximum: usize) -> Pool {
        let location = upstream.location();
        let device = crate::registry()
            .device(location)
            .map(Arc::clone)
            .unwrap_or_else(|_| crate::registry().host());
        let align = device.sub_alignment().max(crate::backends::ALIGNMENT);
        Pool { upstream, device, initial: initial.max(align), maximum, align, state: Mutex::new(State::default()) }
    }

    /// Bytes taken from upstream.
    pub fn held_bytes(&self) -> usize {
        self.state.lock().map(|s| s.held).unwrap_or(0)
    }

    /// Gives every wholly free chunk back to upstream; returns the bytes released.
    pub fn release(&self) -> usize {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut released = 0;
        for slot in state.chunks.iter_mut() {
            let whole = slot
                .as_ref()
                .is_some_and(|c| c.free.len() == 1 && c.free.get(&0) == Some(&c.block.bytes));
            if whole {
                if let Some(chunk) = slot.take() {
                    released += chunk.block.bytes;
                    self.upstream.deallocate(chunk.block);
                }
            }
        }
        state.held -= released;
        released
    }

    fn round(&self, bytes: usize) -> usize {
        bytes.max(1).div_ceil(self.align) * self.align
    }
}

impl MemoryResource for Pool {
    fn location(&self) -> Location {
        self.upstream.location()
    }

    fn describe(&self) -> String {
        format!("pool({}, {} up to {} bytes)", self.upstream.describe(), self.initial, self.maximum)
    }

    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let location = self.location();
        if align > self.align || !self.align.is_multiple_of(align.max(1)) {
            return Err(Error::Invalid(format!(
                "{location}: the pool aligns blocks to {} bytes; {align} was asked for",
                self.align
            )));
        }
        let need = self.round(bytes);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        // Best fit: the smallest free range that holds `need`.
        let best = state
            .chunks
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.as_ref().map(|c| (i, c)))
            .flat_map(|(i, c)| c.free.iter().map(move |(&o, &l)| (l, i, o)))
            .filter(|(l, _, _)| *l >= need)
            .min();
        let (chunk_index, offset) = match best {
            Some((_, i, o)) => (i, o),
            None => {
                let grow = need.max(self.initial);
                if state.held + grow > self.maximum {
                    return Err(Error::Invalid(format!(
                        "{location}: the pool cannot grow by {grow} bytes: it holds {} of its maximum {} bytes; \
                         free buffers, call release(), or make a larger pool",
                        state.held, self.maximum
                    )));
                }
                let block = self.upstream.allocate(grow, crate::backends::ALIGNMENT)?;
                let mut free = BTreeMap::new();
                free.insert(0, grow);
                state.held += grow;
                let index = match state.chunks.iter().position(Option::is_none) {
                    Some(i) => {
                        state.chunks[i] = Some(Chunk { block, free });
                        i
                    }
                    None => {
                        state.chunks.push(Some(Chunk { block, free }));
                        state.chunks.len() - 1
                    }
                };
                (index, 0)
            }
        };
        let chunk = state.chunks[chunk_index].as_mut().ok_or_else(|| Error::Invalid("pool chunk vanished".into()))?;
        let length = chunk.free.remove(&offset).unwrap_or(0);
        if length > need {
            chunk.free.insert(offset + need, length - need);
        }
        let native = match self.device.sub_native(&chunk.block.native, offset, need) {
            Ok(n) => n,
            Err(e) => {
                // Put the range back (and merge it) before reporting.
                chunk.free.insert(offset, length.min(need));
                coalesce(&mut chunk.free, offset);
                return Err(e);
            }
        };
        state.next_id += 1;
        let id = state.next_id;
        state.live.insert(id, (chunk_index, offset, need));
        Ok(Block { native, bytes, id, location })
    }

    fn deallocate(&self, block: Block) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some((chunk_index, offset, length)) = state.live.remove(&block.id) else {
            return; // not ours: leak rather than corrupt the free lists
        };
        // SAFETY: the handle was made by `sub_native` of this device in `allocate` and
        // is given back exactly once (blocks are not Clone).
        unsafe { self.device.release_sub(&block.native) };
        if let Some(chunk) = state.chunks[chunk_index].as_mut() {
            chunk.free.insert(offset, length);
            coalesce(&mut chunk.free, offset);
        }
    }
}

/// Merges the free range at `offset` with its neighbours.
fn coalesce(free: &mut BTreeMap<usize, usize>, offset: usize) {
    let mut start = offset;
    let mut length = free[&offset];
    if let Some((&prev, &prev_len)) = free.range(..offset).next_back() {
        if prev + prev_len == offset {
            free.remove(&offset);
            start = prev;
            length += prev_len;
        }
    }
    if let Some(&next_len) = free.get(&(start + length)) {
        free.remove(&(start + length));
        length += next_len;
    }
    free.insert(start, length);
}

impl Drop for Pool {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if !state.live.is_empty() {
            // Blocks still out keep their chunks: leak them rather than free memory in use.
            eprintln!("locus: pool at {} dropped with {} blocks still allocated", self.upstream.location(), state.live.len());
            return;
        }
        for chunk in state.chunks.drain(..).flatten() {
            self.upstream.deallocate(chunk.block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalescing_merges_neighbours() {
        let mut free = BTreeMap::from([(0, 10), (20, 10)]);
        free.insert(10, 10);
        coalesce(&mut free, 10);
        assert_eq!(free, BTreeMap::from([(0, 30)]));
        let mut free = BTreeMap::from([(0, 10), (40, 10)]);
        free.insert(20, 5);
        coalesce(&mut free, 20);
        assert_eq!(free, BTreeMap::from([(0, 10), (20, 5), (40, 10)]));
    }
}
