//! [`Tracking`]: records every live allocation and reports leaks (RMM's
//! `tracking_resource_adaptor`).
//!
//! The allocation path takes no lock and looks nothing up: each live block gets a
//! 16-byte slot (its size and the thread that made it) from the thread's own cache of
//! free slot numbers (no atomic read-modify-write), else a lock-free free list, and
//! carries the slot's number and the adaptor's tag in its `tracking` field while it is
//! out, so that giving it back only stores to the slot (reads nothing from it: the
//! slot of a block freed long after it was made is rarely in cache). Slots live in
//! segments that double in size and are never moved, so a slot's address is stable.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::{Block, MemoryResource};
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// Records every live allocation; the ones still alive when it is dropped are reported
/// as leaks (and can be listed any time with [`Tracking::leaks`]).
///
/// Like RMM's, it records sizes only unless asked for more: [`Tracking::with_threads`]
/// also records the thread that made each allocation (a thread-local read per
/// allocation), as RMM's `capture_stacks` records stacks.
pub struct Tracking {
    inner: Arc<dyn MemoryResource>,
    slots: Arc<Slots>,
    threads: bool,
    /// This adaptor's tag in its blocks' `tracking` field (unique per adaptor made).
    tag: u64,
}

/// One live block's record: 16 bytes, four to a cache line.
#[derive(Default)]
struct Slot {
    /// While the block is out: its size + 1 in the low 48 bits and the allocating
    /// thread's number in [`thread_names`] in the high 16; 0 when the slot is free.
    live: AtomicU64,
    /// While the block is out, the `tracking` field an inner tracking adaptor had set
    /// (one adaptor over another); while the slot is on the free list, the next free
    /// slot + 1 (0: none).
    word: AtomicU64,
}

/// The bits of [`Slot::live`] that hold the size + 1.
const SIZE_BITS: u32 = 48;
const SIZE_MASK: u64 = (1 << SIZE_BITS) - 1;

/// Segment `k` holds `FIRST << k` slots; 32 segments cover every `u32` slot number.
const FIRST: usize = 64;
const SEGMENTS: usize = 32;

/// A block's `tracking` field: the slot number in the low 32 bits, the adaptor's tag in
/// bits 32..63, and in bit 63 whether the slot keeps an inner adaptor's field to put
/// back.
const NESTED: u64 = 1 << 63;
const TAG_BITS: u64 = 0x7fff_ffff << 32;

/// Slots and their free list.
struct Slots {
    segments: [OnceLock<Box<[Slot]>>; SEGMENTS],
    /// The next never-used slot number.
    fresh: AtomicU64,
    /// The free list's head: the slot number + 1 in the low 32 bits (0: empty), a change
    /// count in the high 32 (so that a head popped and pushed back meanwhile is seen).
    head: AtomicU64,
}

impl Slots {
    fn new() -> Slots {
        Slots {
            segments: std::array::from_fn(|_| OnceLock::new()),
            fresh: AtomicU64::new(0),
            head: AtomicU64::new(0),
        }
    }

    /// Segment and offset of slot `n`.
    #[inline]
    fn place(n: u32) -> (usize, usize) {
        let shifted = n as usize / FIRST + 1;
        let segment = (usize::BITS - 1 - shifted.leading_zeros()) as usize;
        (segment, n as usize - FIRST * ((1 << segment) - 1))
    }

    /// Slot `n`, made (with its segment) if needed.
    #[inline]
    fn slot(&self, n: u32) -> &Slot {
        let (segment, offset) = Slots::place(n);
        let slots = self.segments[segment]
            .get_or_init(|| (0..FIRST << segment).map(|_| Slot::default()).collect());
        &slots[offset]
    }

    /// Slot `n` if its segment exists.
    #[inline]
    fn existing(&self, n: u32) -> Option<&Slot> {
        let (segment, offset) = Slots::place(n);
        self.segments.get(segment)?.get().map(|s| &s[offset])
    }

    /// A free slot number: the free list's head, or a fresh one (`None` past `u32`).
    fn take(&self) -> Option<u32> {
        let mut head = self.head.load(Ordering::Acquire);
        loop {
            let top = head as u32;
            if top == 0 {
                let n = self.fresh.fetch_add(1, Ordering::Relaxed);
                return u32::try_from(n).ok().filter(|&n| n < u32::MAX);
            }
            let next = self.slot(top - 1).word.load(Ordering::Relaxed) as u32;
            let new = ((head >> 32).wrapping_add(1) << 32) | u64::from(next);
            match self
                .head
                .compare_exchange_weak(head, new, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => return Some(top - 1),
                Err(now) => head = now,
            }
        }
    }

    /// Puts slot `n` on the free list.
    fn give(&self, n: u32) {
        let slot = self.slot(n);
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            slot.word.store(u64::from(head as u32), Ordering::Relaxed);
            let new = ((head >> 32).wrapping_add(1) << 32) | u64::from(n + 1);
            match self
                .head
                .compare_exchange_weak(head, new, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }
}

/// Free slot numbers a thread keeps for one adaptor's slots (the last it used), so that
/// taking and giving back a slot is a thread-local push and pop.
struct Cache {
    owner: std::sync::Weak<Slots>,
    /// `owner`'s address, compared on every take and give.
    owner_address: usize,
    numbers: Vec<u32>,
}

/// At most this many numbers in a thread's cache; more go to the shared free list.
const CACHED: usize = 256;

impl Cache {
    /// Gives the numbers back to their slots' free list (when those still exist).
    fn flush(&mut self) {
        if let Some(slots) = self.owner.upgrade() {
            for n in self.numbers.drain(..) {
                slots.give(n);
            }
        }
        self.numbers.clear();
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        self.flush();
    }
}

thread_local! {
    static CACHE: std::cell::RefCell<Cache> = const {
        std::cell::RefCell::new(Cache {
            owner: std::sync::Weak::new(),
            owner_address: 0,
            numbers: Vec::new(),
        })
    };
}

/// A free slot number of `slots`: from this thread's cache, else the shared free list.
#[inline]
fn take(slots: &Arc<Slots>) -> Option<u32> {
    let cached = CACHE
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            match c.owner_address == Arc::as_ptr(slots) as usize {
                true => c.numbers.pop(),
                false => None,
            }
        })
        .ok()
        .flatten();
    cached.or_else(|| slots.take())
}

/// Puts slot `n` of `slots` in this thread's cache (made `slots`' if it held another
/// adaptor's numbers, which go back to theirs), or on the shared free list when full.
#[inline]
fn give(slots: &Arc<Slots>, n: u32) {
    let kept = CACHE
        .try_with(|c| {
            let Ok(mut c) = c.try_borrow_mut() else {
                return false;
            };
            if c.owner_address != Arc::as_ptr(slots) as usize {
                c.flush();
                c.owner = Arc::downgrade(slots);
                c.owner_address = Arc::as_ptr(slots) as usize;
            }
            if c.numbers.len() >= CACHED {
                return false;
            }
            c.numbers.push(n);
            true
        })
        .unwrap_or(false);
    if !kept {
        slots.give(n);
    }
}

/// The names of the threads that allocated through any tracking adaptor, by number.
fn thread_names() -> &'static Mutex<Vec<String>> {
    static NAMES: Mutex<Vec<String>> = Mutex::new(Vec::new());
    &NAMES
}

/// This thread's number in [`thread_names`] (registered at its first allocation; the
/// 65,535th thread and later all share the last number, named so).
fn thread_number() -> u64 {
    thread_local! {
        static NUMBER: std::cell::Cell<u64> = const { std::cell::Cell::new(u64::MAX) };
    }
    NUMBER.with(|n| {
        if n.get() == u64::MAX {
            let me = std::thread::current();
            let mut names = thread_names().lock().unwrap_or_else(|e| e.into_inner());
            let number = names.len().min(0xffff) as u64;
            if number < 0xffff {
                names.push(format!(
                    "{:?} {}",
                    me.id(),
                    me.name().unwrap_or("(unnamed)")
                ));
            } else if names.len() == 0xffff {
                names.push("one of the threads after the 65,535th".into());
            }
            n.set(number);
        }
        n.get()
    })
}

impl Tracking {
    /// Wraps `inner`, recording each live allocation's size.
    pub fn new(inner: Arc<dyn MemoryResource>) -> Tracking {
        Tracking::made(inner, false)
    }

    /// Wraps `inner`, recording each live allocation's size and the thread that made it.
    pub fn with_threads(inner: Arc<dyn MemoryResource>) -> Tracking {
        Tracking::made(inner, true)
    }

    fn made(inner: Arc<dyn MemoryResource>, threads: bool) -> Tracking {
        static TAGS: AtomicU64 = AtomicU64::new(1);
        // 2^31 adaptors, then the tags wrap (skipping 0): two adaptors alive at once
        // with one tag would take each other's blocks for their own.
        let tag = (TAGS.fetch_add(1, Ordering::Relaxed) % 0x7fff_ffff).max(1);
        Tracking {
            inner,
            slots: Arc::new(Slots::new()),
            threads,
            tag: tag << 32,
        }
    }

    /// The allocations alive now: (bytes, thread that made it; `"(thread not recorded)"`
    /// unless made [`Tracking::with_threads`]). A list taken while other threads
    /// allocate may miss or include those in flight.
    pub fn leaks(&self) -> Vec<(usize, String)> {
        let names = thread_names().lock().unwrap_or_else(|e| e.into_inner());
        let made = self
            .slots
            .fresh
            .load(Ordering::Acquire)
            .min(u64::from(u32::MAX)) as u32;
        (0..made)
            .filter_map(|n| self.slots.existing(n))
            .filter_map(|slot| {
                let live = slot.live.load(Ordering::Acquire);
                let bytes = (live & SIZE_MASK).checked_sub(1)? as usize;
                let name = match self.threads {
                    true => names.get((live >> SIZE_BITS) as usize).cloned(),
                    false => None,
                };
                Some((
                    bytes,
                    name.unwrap_or_else(|| "(thread not recorded)".into()),
                ))
            })
            .collect()
    }

    /// Gives the block a slot and marks it with the slot's number (in place: the block
    /// is not moved).
    fn record(&self, allocated: &mut Result<Block>) {
        let Ok(block) = allocated else {
            return;
        };
        let size = (block.bytes as u64).saturating_add(1);
        match take(&self.slots) {
            Some(n) if size <= SIZE_MASK => {
                let record = self.slots.slot(n);
                let nested = if block.tracking != 0 {
                    record.word.store(block.tracking, Ordering::Relaxed);
                    NESTED
                } else {
                    0
                };
                let thread = if self.threads { thread_number() } else { 0 };
                record
                    .live
                    .store(size | thread << SIZE_BITS, Ordering::Release);
                block.tracking = nested | self.tag | u64::from(n);
            }
            taken => {
                if let Some(n) = taken {
                    give(&self.slots, n);
                }
                let (location, bytes) = (block.location, block.bytes);
                let refused = Err(Error::OutOfMemory {
                    location,
                    requested: bytes,
                    by: "tracking adaptor".into(),
                    reason: format!(
                        "it records up to {} live blocks of under 256 TiB each",
                        u32::MAX - 1
                    ),
                });
                if let Ok(block) = std::mem::replace(allocated, refused) {
                    self.inner.deallocate(block);
                }
            }
        }
    }

    /// Frees `block`'s slot (a store: the slot is not read unless it keeps an inner
    /// adaptor's mark). A block this adaptor did not mark is passed on untouched (the
    /// inner resource refuses what is not its own).
    fn forget(&self, block: &mut Block) {
        let mark = block.tracking;
        if mark & TAG_BITS != self.tag {
            return;
        }
        let n = mark as u32;
        let Some(record) = self.slots.existing(n) else {
            return;
        };
        block.tracking = if mark & NESTED != 0 {
            record.word.load(Ordering::Relaxed)
        } else {
            0
        };
        record.live.store(0, Ordering::Release);
        give(&self.slots, n);
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
        let mut allocated = self.inner.allocate(bytes, align);
        self.record(&mut allocated);
        allocated
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        let mut allocated = self.inner.allocate_on(bytes, align, queue);
        self.record(&mut allocated);
        allocated
    }
    fn deallocate(&self, mut block: Block) {
        self.forget(&mut block);
        self.inner.deallocate(block);
    }
    fn deallocate_after(&self, mut block: Block, queue: Queue, event: Event) {
        self.forget(&mut block);
        self.inner.deallocate_after(block, queue, event);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn slot_numbers_map_to_segments_without_gaps() {
        let mut expected = (0, 0);
        for n in 0..(FIRST as u32 * 70) {
            assert_eq!(Slots::place(n), expected, "slot {n}");
            expected.1 += 1;
            if expected.1 == FIRST << expected.0 {
                expected = (expected.0 + 1, 0);
            }
        }
        let (segment, offset) = Slots::place(u32::MAX - 1);
        assert!(segment < SEGMENTS && offset < FIRST << segment);
    }

    #[test]
    fn freed_slots_are_reused_last_in_first_out_across_threads() {
        let slots = Slots::new();
        let taken: Vec<u32> = (0..100).map(|_| slots.take().unwrap()).collect();
        assert_eq!(taken, (0..100).collect::<Vec<_>>());
        slots.give(7);
        slots.give(42);
        assert_eq!((slots.take(), slots.take()), (Some(42), Some(7)));
        assert_eq!(slots.take(), Some(100));
        // Threads taking and giving at once never share a slot.
        let slots = Arc::new(Slots::new());
        let owners: Arc<Vec<AtomicU32>> = Arc::new((0..4096).map(|_| AtomicU32::new(0)).collect());
        std::thread::scope(|s| {
            for t in 1..=4u32 {
                let (slots, owners) = (Arc::clone(&slots), Arc::clone(&owners));
                s.spawn(move || {
                    for _ in 0..20_000 {
                        let n = slots.take().unwrap();
                        assert_eq!(
                            owners[n as usize].swap(t, Ordering::SeqCst),
                            0,
                            "slot {n} shared"
                        );
                        owners[n as usize].store(0, Ordering::SeqCst);
                        slots.give(n);
                    }
                });
            }
        });
        assert!(
            slots.fresh.load(Ordering::Relaxed) <= 4,
            "only as many slots as threads"
        );
    }
}
