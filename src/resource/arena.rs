//! [`Arena`]: per-thread pools over a global resource (RMM's `arena_memory_resource`).

use std::sync::{Arc, Mutex};

use super::{Block, MemoryResource};
use crate::core::error::Result;
use crate::core::location::Location;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// Per-thread arenas over a global resource: each thread sub-allocates from its own
/// [`Pool`](super::Pool), which takes superblocks from the global resource, so threads
/// do not contend on one lock. A block freed on another thread goes back to the arena
/// that made it. When a thread ends, its pool (and the memory it holds) passes to the
/// next thread that comes. Works on every backend that sub-allocates (pointers, and
/// offsets into OpenCL and WebGPU buffers, which add up). Up to [`Arena::MAX_ARENAS`]
/// threads at once get a pool of their own; more share them, round-robin.
pub struct Arena {
    global: Arc<dyn MemoryResource>,
    superblock: usize,
    /// Identifies this arena in the threads' caches.
    serial: u64,
    slots: Arc<Slots>,
}

/// The per-thread pools (read without a lock once made) and which are free.
struct Slots {
    pools: Box<[std::sync::OnceLock<super::Pool>]>,
    /// Slots whose thread ended, and the next never-used slot.
    free: Mutex<(Vec<usize>, usize)>,
}

/// A thread's hold on a slot: given back when the thread ends (or the thread's cache
/// drops it).
struct Lease {
    serial: u64,
    index: usize,
    slots: std::sync::Weak<Slots>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(slots) = self.slots.upgrade() {
            slots
                .free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .0
                .push(self.index);
        }
    }
}

/// Arena indexes live in the top bits of a block id.
const ARENA_SHIFT: u32 = 52;

impl Arena {
    /// The resource this one takes its memory from (RMM's `get_upstream_resource`).
    pub fn upstream(&self) -> &Arc<dyn MemoryResource> {
        &self.global
    }

    /// How many threads at once get a pool of their own (the index must fit a block
    /// id's top 12 bits).
    pub const MAX_ARENAS: usize = 64;

    /// Arenas taking `superblock` bytes at a time from `global`.
    pub fn new(global: Arc<dyn MemoryResource>, superblock: usize) -> Arena {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Arena {
            global,
            superblock,
            serial: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            slots: Arc::new(Slots {
                pools: (0..Self::MAX_ARENAS)
                    .map(|_| std::sync::OnceLock::new())
                    .collect(),
                free: Mutex::new((Vec::new(), 0)),
            }),
        }
    }

    /// How many per-thread pools exist (at most one per thread that allocated at the
    /// same time, up to [`Arena::MAX_ARENAS`]).
    pub fn arenas(&self) -> usize {
        self.slots
            .pools
            .iter()
            .filter(|s| s.get().is_some())
            .count()
    }

    /// This thread's slot and pool: the slot from the thread's cache (no lock, no
    /// reference count), else leased under the arena's lock and cached.
    fn mine(&self) -> (usize, &super::Pool) {
        /// Leases per thread: arenas beyond it are leased again.
        const CACHED: usize = 16;
        thread_local! {
            static LEASES: std::cell::RefCell<Vec<Lease>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        let cached = LEASES.with(|c| {
            c.borrow()
                .iter()
                .find(|l| l.serial == self.serial)
                .map(|l| l.index)
        });
        let index = cached.unwrap_or_else(|| {
            let index = self.lease();
            let lease = Lease {
                serial: self.serial,
                index,
                slots: Arc::downgrade(&self.slots),
            };
            let evicted = LEASES.with(|c| {
                let mut c = c.borrow_mut();
                let evicted = (c.len() == CACHED).then(|| c.remove(0));
                c.push(lease);
                evicted
            });
            drop(evicted); // gives its slot back (outside the cache's borrow)
            index
        });
        let pool = self.slots.pools[index].get_or_init(|| {
            super::Pool::new(Arc::clone(&self.global), self.superblock, usize::MAX / 2)
        });
        (index, pool)
    }

    /// A slot for the calling thread: one a finished thread gave back, else a new one,
    /// else (all taken) one shared round-robin.
    fn lease(&self) -> usize {
        let mut free = self.slots.free.lock().unwrap_or_else(|e| e.into_inner());
        let (given_back, next) = &mut *free;
        if let Some(index) = given_back.pop() {
            return index;
        }
        let index = *next % Self::MAX_ARENAS;
        *next += 1;
        index
    }
}

impl MemoryResource for Arena {
    fn location(&self) -> Location {
        self.global.location()
    }
    fn device(&self) -> Option<std::sync::Arc<dyn crate::core::device::Device>> {
        self.global.device()
    }
    fn describe(&self) -> String {
        format!(
            "arena({} bytes per superblock, {})",
            self.superblock,
            self.global.describe()
        )
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let (index, pool) = self.mine();
        Ok(tagged(pool.allocate(bytes, align)?, index))
    }
    /// From this thread's pool, which reuses at once what was freed on `queue`.
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        let (index, pool) = self.mine();
        Ok(tagged(pool.allocate_on(bytes, align, queue)?, index))
    }
    fn deallocate(&self, mut block: Block) {
        if let Some(pool) = self.owner(&mut block) {
            pool.deallocate(block);
        }
    }
    /// Back to the pool that made it, in stream order (no wait here).
    fn deallocate_after(&self, mut block: Block, queue: Queue, event: Event) {
        if let Some(pool) = self.owner(&mut block) {
            pool.deallocate_after(block, queue, event);
        }
    }
}

/// Marks a block with the index of the arena that made it.
fn tagged(mut block: Block, index: usize) -> Block {
    block.id |= ((index + 1) as u64) << ARENA_SHIFT;
    block
}

impl Arena {
    /// The pool that made `block`, with the arena's mark taken off the block; `None` for
    /// a block of no arena of this resource (index 0 or unmade): refused, leaked.
    fn owner(&self, block: &mut Block) -> Option<&super::Pool> {
        let index = (block.id >> ARENA_SHIFT) as usize;
        block.id &= (1 << ARENA_SHIFT) - 1;
        index
            .checked_sub(1)
            .and_then(|i| self.slots.pools.get(i))
            .and_then(std::sync::OnceLock::get)
    }
}
