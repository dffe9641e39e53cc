//! A pool: large upstream blocks, sub-allocated by coalescing best fit over size classes
//! (the TLSF layout: every operation is O(1), whatever the number of free ranges).
//!
//! The metadata lives outside the memory (device memory cannot hold headers): `tlsf.rs`
//! keeps it, one record per range; this file hands ranges out and takes them back.

use std::sync::{Arc, Mutex, MutexGuard};

use super::{Block, MemoryResource};
use crate::core::device::Device;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;
use tlsf::{Range, State, NIL};

struct Chunk {
    block: Block,
}

/// A range freed while work (completed by `event`, on `queue`) may still use it.
struct Pending {
    range: u32,
    queue: Queue,
    event: Event,
}

/// Coalescing best-fit sub-allocator over an upstream resource: grows by at least its
/// initial size until its maximum, and gives wholly free chunks back on [`Pool::release`].
/// Works on every location whose backend can address part of an allocation (host,
/// OpenMP, SYCL, CUDA, HIP pointers; OpenCL and WebGPU buffer offsets).
///
/// Stream order: memory given back with [`MemoryResource::deallocate_after`] while work
/// on a queue may still use it is handed out again at once to an allocation on that
/// same queue ([`MemoryResource::allocate_on`]: work on one queue runs in order), and to
/// any other only after the work's event.
///
/// ```
/// use std::sync::Arc;
///
/// use locus::resource::{self, MemoryResource, Pool};
/// use locus::{Location, Memory};
///
/// let at = Location::Host; // or any location
/// // 8 MiB taken from the location's own allocation call, growing up to 1 GiB.
/// let pool: Arc<dyn MemoryResource> = Arc::new(Pool::new(resource::upstream(at)?, 8 << 20, 1 << 30));
/// let a = Memory::from_resource(&pool, 4096)?; // a range of the pool's first chunk
/// let b = Memory::from_resource(&pool, 4096)?;
/// assert_eq!(a.location(), at);
/// drop((a, b)); // back to the pool, not to the system
/// # Ok::<(), locus::Error>(())
/// ```
pub struct Pool {
    upstream: Arc<dyn MemoryResource>,
    device: Arc<dyn Device>,
    location: Location,
    initial: usize,
    maximum: usize,
    align: usize,
    /// This pool's mark in block ids (bits 32..52), so foreign blocks are recognised.
    tag: u64,
    state: Mutex<State>,
}

/// Block ids: bits 0..32 the range record + 1, bits 32..52 the pool's tag (the top bits
/// are left to [`super::Arena`]).
const TAG_SHIFT: u32 = 32;
const TAG_MASK: u64 = (1 << 20) - 1;

impl Pool {
    /// The resource this one takes its memory from (RMM's `get_upstream_resource`).
    pub fn upstream(&self) -> &Arc<dyn MemoryResource> {
        &self.upstream
    }

    /// A pool over `upstream` that grows in steps of at least `initial` bytes up to
    /// `maximum` bytes in all. Nothing is allocated until the first request (or
    /// [`Pool::reserve`]).
    pub fn new(upstream: Arc<dyn MemoryResource>, initial: usize, maximum: usize) -> Pool {
        let location = upstream.location();
        // The upstream's own device (one made outside the registry, too), else the
        // registry's at its location.
        let device = super::device_of(&*upstream)
            .unwrap_or_else(|_| crate::runtime::registry::registry().host());
        let align = device
            .sub_alignment()
            .max(crate::core::device::ALIGNMENT)
            .next_power_of_two();
        Pool {
            upstream,
            device,
            location,
            initial: initial.max(align),
            maximum,
            align,
            tag: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
                (NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) & TAG_MASK).max(1)
            },
            state: Mutex::new(State::new()),
        }
    }

    /// Takes at least `bytes` from upstream now, as one free chunk (RMM's initial pool
    /// size, allocated up front so that the first allocations do not pay for it).
    pub fn reserve(&self, bytes: usize) -> Result<()> {
        let bytes = self.round(bytes)?;
        self.grow(self.lock(), bytes).1.map(|_| ())
    }

    /// Bytes taken from upstream.
    pub fn held_bytes(&self) -> usize {
        self.lock().held
    }

    /// Gives every wholly free chunk back to upstream; returns the bytes released.
    pub fn release(&self) -> usize {
        let mut state = self.reclaim(self.lock(), false);
        let mut released = 0;
        let whole: Vec<u32> = (0..state.ranges.len() as u32)
            .filter(|&i| {
                let r = &state.ranges[i as usize];
                r.free && r.prev == NIL && r.next == NIL && state.chunks[r.chunk as usize].is_some()
            })
            .collect();
        for i in whole {
            state.unlink(i);
            state.spare.push(i);
            let c = state.ranges[i as usize].chunk as usize;
            if let Some(chunk) = state.chunks[c].take() {
                released += chunk.block.bytes;
                self.upstream.deallocate(chunk.block);
            }
        }
        state.held -= released;
        released
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `bytes` rounded up to the pool's alignment (at least one unit); an
    /// out-of-memory error when that does not fit in memory sizes.
    fn round(&self, bytes: usize) -> Result<usize> {
        bytes
            .max(1)
            .checked_next_multiple_of(self.align)
            .ok_or_else(|| Error::OutOfMemory {
                location: self.location,
                requested: bytes,
                by: "pool".into(),
                reason: "the size does not fit in memory sizes".into(),
            })
    }

    /// Adds a chunk of at least `need` bytes (and at least the initial size); returns
    /// its one free range. The upstream is asked without the pool's
    /// lock (`state` is let go and taken again): an upstream that calls back into this
    /// pool (a failure callback that frees one of its blocks) is served, never a
    /// deadlock.
    fn grow<'a>(
        &'a self,
        state: MutexGuard<'a, State>,
        need: usize,
    ) -> (MutexGuard<'a, State>, Result<u32>) {
        let location = self.location();
        let grow = need.max(self.initial);
        let over_maximum = |state: &State| {
            (state.held.saturating_add(grow) > self.maximum).then(|| Error::OutOfMemory {
                location,
                requested: need,
                by: "pool".into(),
                reason: format!(
                    "it cannot grow by {grow} bytes: it holds {} of its maximum {} bytes; free buffers or call release()",
                    state.held, self.maximum
                ),
            })
        };
        if let Some(e) = over_maximum(&state) {
            return (state, Err(e));
        }
        drop(state);
        let block = self.upstream.allocate(grow, self.align);
        let mut state = self.lock();
        let block = match block {
            Ok(block) => block,
            Err(e) => return (state, Err(e)),
        };
        // Another thread may have grown the pool meanwhile.
        if let Some(e) = over_maximum(&state) {
            drop(state);
            self.upstream.deallocate(block);
            return (self.lock(), Err(e));
        }
        state.held += grow;
        let c = match state.chunks.iter().position(Option::is_none) {
            Some(i) => {
                state.chunks[i] = Some(Chunk { block });
                i
            }
            None => {
                state.chunks.push(Some(Chunk { block }));
                state.chunks.len() - 1
            }
        };
        let i = state.record(Range {
            chunk: c as u32,
            offset: 0,
            len: grow,
            free: false,
            used: false,
            prev: NIL,
            next: NIL,
            class_prev: NIL,
            class_next: NIL,
        });
        state.link(i);
        (state, Ok(i))
    }

    /// A free range of at least `search` bytes when none was found: a new chunk; at the
    /// maximum, a range freed while the upstream was asked (by another thread, or by the
    /// upstream's failure callback giving back a block of this pool), else one pending
    /// work frees after a host wait, else growth once more.
    fn grow_for<'a>(
        &'a self,
        state: MutexGuard<'a, State>,
        search: usize,
    ) -> Result<(MutexGuard<'a, State>, u32)> {
        let (state, grown) = self.grow(state, search);
        let e = match grown {
            Ok(i) => return Ok((state, i)),
            Err(e) if e.is_out_of_memory() => e,
            Err(e) => return Err(e),
        };
        if let Some(i) = state.find(search) {
            return Ok((state, i));
        }
        if state.pending.is_empty() {
            return Err(e);
        }
        let state = self.reclaim(state, true);
        if let Some(i) = state.find(search) {
            return Ok((state, i));
        }
        let (state, grown) = self.grow(state, search);
        grown.map(|i| (state, i))
    }

    /// Cuts range `i` (taken out of the free lists, at least `need + align - self.align`
    /// bytes) down to the `need` bytes that start at a multiple of `align`; the padding
    /// before and after goes back to the free lists.
    fn carve(&self, state: &mut State, i: u32, need: usize, align: usize) -> Result<u32> {
        let r = state.ranges[i as usize];
        let base = state.chunks[r.chunk as usize]
            .as_ref()
            .ok_or_else(|| Error::Invalid("pool chunk vanished".into()))?
            .block
            .native
            .address();
        let address = base + r.offset as u64;
        let lead = ((align as u64 - address % align as u64) % align as u64) as usize;
        let mut i = i;
        if lead > 0 {
            if let Some(rest) = state.split(i, lead) {
                state.give(i);
                i = rest;
            }
        }
        if let Some(rest) = state.split(i, need) {
            state.give(rest);
        }
        Ok(i)
    }

    /// Hands out range `i` (already taken out of the free lists) as a block.
    fn hand_out(&self, state: &mut State, i: u32, bytes: usize) -> Result<Block> {
        let r = state.ranges[i as usize];
        let parent = &state.chunks[r.chunk as usize]
            .as_ref()
            .ok_or_else(|| Error::Invalid("pool chunk vanished".into()))?
            .block
            .native;
        match self.device.sub_native(parent, r.offset, r.len) {
            Ok(native) => {
                state.live += 1;
                state.ranges[i as usize].used = true;
                Ok(Block {
                    native,
                    bytes,
                    id: (self.tag << TAG_SHIFT) | (u64::from(i) + 1),
                    location: self.location(),
                    origin: None,
                    tracking: 0,
                })
            }
            Err(e) => {
                state.give(i);
                Err(e)
            }
        }
    }

    /// The range behind a block of this pool, or `None` for a foreign block.
    fn range_of(&self, state: &State, block: &Block) -> Option<u32> {
        if (block.id >> TAG_SHIFT) & TAG_MASK != self.tag {
            return None;
        }
        let i = u32::try_from((block.id & 0xFFFF_FFFF).checked_sub(1)?).ok()?;
        let r = state.ranges.get(i as usize)?;
        let ours = block.location == self.location() && r.used && r.len >= block.bytes;
        ours.then_some(i)
    }

    /// Takes a block back (no longer handed out; not yet free): its range, or `None`
    /// for a foreign block, which is left alone (leaked rather than the free lists
    /// corrupted).
    fn take_back(&self, state: &mut State, block: &Block) -> Option<u32> {
        let range = self.range_of(state, block)?;
        // SAFETY: the handle was made by `sub_native` of this device in `allocate` and
        // is given back exactly once (blocks are not Clone); no backend's sub-allocation
        // handle owns an object that pending work could still use.
        unsafe { self.device.release_sub(&block.native) };
        state.live -= 1;
        state.ranges[range as usize].used = false;
        Some(range)
    }

    fn allocate_in(&self, bytes: usize, align: usize, queue: Option<Queue>) -> Result<Block> {
        crate::core::aligned::check_alignment(self.location, align)?;
        let need = self.round(bytes)?;
        // Beyond the pool's own alignment: a range with room to start at a multiple of
        // `align`, carved down after.
        let over = align.saturating_sub(self.align);
        let search = need.checked_add(over).ok_or_else(|| Error::OutOfMemory {
            location: self.location,
            requested: bytes,
            by: "pool".into(),
            reason: format!("{bytes} bytes aligned to {align} does not fit in memory sizes"),
        })?;
        let mut state = self.lock();
        // Memory pending on the same queue is reused at once (over-aligned requests
        // take free memory only: carving would free parts of a pending range).
        let pending = queue.filter(|_| over == 0);
        if let Some(q) = pending {
            if let Some((i, event)) = state.take_pending(q, true, need) {
                let block = self.hand_out(&mut state, i, bytes);
                state.hand_out_busy(i, q, event);
                return block;
            }
        }
        state = self.reclaim(state, false);
        // Best fit; failing that (RMM's order), a range another queue's work still uses,
        // with the new queue's work ordered after that work (no host wait); then growth;
        // and only at the maximum with nothing else fitting, a host wait for the pending
        // work (locus has user events: waiting first could wait on a gate that the
        // caller itself would open later).
        let found = state.find(search);
        if found.is_none() {
            if let Some(q) = pending {
                if let Some((i, event)) = state.take_pending(q, false, need) {
                    let block = self.hand_out(&mut state, i, bytes);
                    state.hand_out_busy(i, q, event.clone());
                    drop(state);
                    q.order_after(event);
                    return block;
                }
            }
        }
        let i = match found {
            Some(i) => i,
            None => {
                let (again, i) = self.grow_for(state, search)?;
                state = again;
                i
            }
        };
        state.take(i, search);
        let i = if over > 0 {
            self.carve(&mut state, i, need, align)?
        } else {
            i
        };
        self.hand_out(&mut state, i, bytes)
    }
}

impl MemoryResource for Pool {
    fn location(&self) -> Location {
        self.location
    }
    fn device(&self) -> Option<Arc<dyn Device>> {
        Some(Arc::clone(&self.device))
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
        self.allocate_in(bytes, align, None)
    }

    /// Also reuses, at once, memory freed on `queue` whose work may still be running
    /// there: the new owner's work on `queue` runs after it.
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        self.allocate_in(bytes, align, Some(queue))
    }

    fn deallocate_after(&self, block: Block, queue: Queue, event: Event) {
        let (range, earlier) = {
            let mut state = self.lock();
            let Some(range) = self.take_back(&mut state, &block) else {
                return;
            };
            (range, state.take_busy(range))
        };
        // Free once this work is done, and the earlier work it was handed out under.
        // Events are asked without the pool's lock (see `reclaim`); meanwhile the range
        // is neither free nor pending, so nothing hands it out.
        let event = match earlier {
            Some(earlier) => Event::all(&[earlier.event, event.clone()]).unwrap_or(event),
            None => event,
        };
        self.lock().pending.push(Pending {
            range,
            queue,
            event,
        });
    }

    fn deallocate(&self, block: Block) {
        let mut state = self.lock();
        if let Some(range) = self.take_back(&mut state, &block) {
            // Handed out while earlier work may still use it: pending until that is done
            // (`reclaim` asks its event, outside the lock).
            match state.take_busy(range) {
                Some(earlier) => state.pending.push(earlier),
                None => state.give(range),
            }
        }
    }
}

mod pending;
mod tlsf;

#[cfg(test)]
mod tests;
