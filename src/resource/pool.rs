//! A pool: large upstream blocks, sub-allocated by coalescing best fit.

use std::collections::{BTreeMap, BTreeSet, HashMap};
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
    /// Every free range by size, for best fit in O(log n): (length, chunk, offset).
    by_size: BTreeSet<(usize, usize, usize)>,
    /// Handed-out blocks: id -> (chunk, offset, length).
    live: HashMap<u64, (usize, usize, usize)>,
    /// Freed blocks whose last work (on a queue) may still be running.
    pending: Vec<Pending>,
    next_id: u64,
    held: usize,
}

/// A block freed while work (completed by `event`, on `queue`) may still use it.
struct Pending {
    chunk: usize,
    offset: usize,
    length: usize,
    /// Kept for same-queue reuse without a wait (not done yet).
    #[allow(dead_code)]
    queue: crate::Queue,
    event: crate::Event,
}

impl State {
    /// Adds a free range to chunk `c`, merged with its free neighbours.
    fn give(&mut self, c: usize, offset: usize, length: usize) {
        let Some(chunk) = self.chunks[c].as_mut() else {
            return;
        };
        let (mut start, mut len) = (offset, length);
        if let Some((&prev, &prev_len)) = chunk.free.range(..offset).next_back() {
            if prev + prev_len == offset {
                chunk.free.remove(&prev);
                self.by_size.remove(&(prev_len, c, prev));
                start = prev;
                len += prev_len;
            }
        }
        if let Some(next_len) = chunk.free.remove(&(start + len)) {
            self.by_size.remove(&(next_len, c, start + len));
            len += next_len;
        }
        chunk.free.insert(start, len);
        self.by_size.insert((len, c, start));
    }

    /// Takes `need` bytes from the start of the free range (length, c, offset).
    fn take(&mut self, (length, c, offset): (usize, usize, usize), need: usize) {
        self.by_size.remove(&(length, c, offset));
        if let Some(chunk) = self.chunks[c].as_mut() {
            chunk.free.remove(&offset);
            if length > need {
                chunk.free.insert(offset + need, length - need);
                self.by_size.insert((length - need, c, offset + need));
            }
        }
    }
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
        Pool {
            upstream,
            device,
            initial: initial.max(align),
            maximum,
            align,
            state: Mutex::new(State::default()),
        }
    }

    /// Bytes taken from upstream.
    pub fn held_bytes(&self) -> usize {
        self.state.lock().map(|s| s.held).unwrap_or(0)
    }

    /// Gives every wholly free chunk back to upstream; returns the bytes released.
    pub fn release(&self) -> usize {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut released = 0;
        for c in 0..state.chunks.len() {
            let whole = state.chunks[c]
                .as_ref()
                .is_some_and(|k| k.free.len() == 1 && k.free.get(&0) == Some(&k.block.bytes));
            if whole {
                if let Some(chunk) = state.chunks[c].take() {
                    state.by_size.remove(&(chunk.block.bytes, c, 0));
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

impl Pool {
    /// Gives back every pending block whose work is done (without waiting).
    fn reclaim(state: &mut State, wait: bool) {
        let mut i = 0;
        while i < state.pending.len() {
            let done = state.pending[i].event.is_complete()
                || (wait && state.pending[i].event.wait().is_ok());
            if done {
                let p = state.pending.swap_remove(i);
                state.give(p.chunk, p.offset, p.length);
            } else {
                i += 1;
            }
        }
    }
}

impl MemoryResource for Pool {
    fn location(&self) -> Location {
        self.upstream.location()
    }

    fn describe(&self) -> String {
        format!(
            "pool({}, {} up to {} bytes)",
            self.upstream.describe(),
            self.initial,
            self.maximum
        )
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
        Pool::reclaim(&mut state, false);
        // Best fit: the smallest free range that holds `need`; failing that, memory
        // still pending on another queue is waited for before the pool grows.
        let mut best = state.by_size.range((need, 0, 0)..).next().copied();
        if best.is_none() && !state.pending.is_empty() {
            Pool::reclaim(&mut state, true);
            best = state.by_size.range((need, 0, 0)..).next().copied();
        }
        let range = match best {
            Some(r) => r,
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
                state.held += grow;
                let chunk = Chunk {
                    block,
                    free: BTreeMap::new(),
                };
                let c = match state.chunks.iter().position(Option::is_none) {
                    Some(i) => {
                        state.chunks[i] = Some(chunk);
                        i
                    }
                    None => {
                        state.chunks.push(Some(chunk));
                        state.chunks.len() - 1
                    }
                };
                state.give(c, 0, grow);
                (grow, c, 0)
            }
        };
        let (_, chunk_index, offset) = range;
        let parent = &state.chunks[chunk_index]
            .as_ref()
            .ok_or_else(|| Error::Invalid("pool chunk vanished".into()))?
            .block
            .native;
        let native = self.device.sub_native(parent, offset, need)?;
        state.take(range, need);
        state.next_id += 1;
        let id = state.next_id;
        state.live.insert(id, (chunk_index, offset, need));
        Ok(Block {
            native,
            bytes,
            id,
            location,
        })
    }

    fn deallocate_after(&self, block: Block, queue: crate::Queue, event: crate::Event) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some((chunk, offset, length)) = state.live.remove(&block.id) else {
            return;
        };
        // SAFETY: made by `sub_native` in `allocate`, given back once; an OpenCL
        // sub-buffer's release is deferred by the runtime until its commands finish.
        unsafe { self.device.release_sub(&block.native) };
        state.pending.push(Pending {
            chunk,
            offset,
            length,
            queue,
            event,
        });
    }

    fn deallocate(&self, block: Block) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some((chunk_index, offset, length)) = state.live.remove(&block.id) else {
            return; // not ours: leak rather than corrupt the free lists
        };
        // SAFETY: the handle was made by `sub_native` of this device in `allocate` and
        // is given back exactly once (blocks are not Clone).
        unsafe { self.device.release_sub(&block.native) };
        state.give(chunk_index, offset, length);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        Pool::reclaim(state, true);
        if !state.live.is_empty() {
            // Blocks still out keep their chunks: leak them rather than free memory in use.
            eprintln!(
                "locus: pool at {} dropped with {} blocks still allocated",
                self.upstream.location(),
                state.live.len()
            );
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

    fn state_with(ranges: &[(usize, usize)]) -> State {
        let mut s = State::default();
        s.chunks.push(Some(Chunk {
            block: Block {
                native: crate::backends::Native::Host {
                    ptr: std::ptr::null_mut(),
                },
                bytes: 100,
                id: 0,
                location: Location::Host,
            },
            free: BTreeMap::new(),
        }));
        for &(o, l) in ranges {
            s.give(0, o, l);
        }
        s
    }

    #[test]
    fn free_ranges_coalesce_and_stay_indexed() {
        let mut s = state_with(&[(0, 10), (20, 10)]);
        s.give(0, 10, 10);
        assert_eq!(
            s.chunks[0].as_ref().unwrap().free,
            BTreeMap::from([(0, 30)])
        );
        assert_eq!(
            s.by_size.iter().copied().collect::<Vec<_>>(),
            vec![(30, 0, 0)]
        );
        let mut s = state_with(&[(0, 10), (40, 10), (20, 5)]);
        assert_eq!(s.chunks[0].as_ref().unwrap().free.len(), 3);
        // Best fit picks the smallest range that holds the request.
        let best = *s.by_size.range((5, 0, 0)..).next().unwrap();
        assert_eq!(best, (5, 0, 20));
        s.take(best, 5);
        assert_eq!(s.by_size.len(), 2);
        let best = *s.by_size.range((6, 0, 0)..).next().unwrap();
        s.take(best, 6);
        assert_eq!(
            s.by_size.iter().copied().collect::<Vec<_>>(),
            vec![(4, 0, 6), (10, 0, 40)]
        );
        for &(len, _, off) in &s.by_size {
            assert_eq!(s.chunks[0].as_ref().unwrap().free[&off], len);
        }
    }
}
