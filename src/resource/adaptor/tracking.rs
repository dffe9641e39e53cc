//! [`Tracking`]: records every live allocation and reports leaks (RMM's
//! `tracking_resource_adaptor`).
//!
//! The allocation path takes no lock and looks nothing up: each live block gets a
//! 16-byte slot (its size and the thread that made it) from the thread's own cache of
//! free slot numbers (no atomic read-modify-write; the cache trades numbers with the
//! adaptor's shared free list [`BATCH`] at a time, under a lock), and carries the
//! slot's number and the adaptor's tag in its `tracking` field while it is out, so
//! that giving it back only stores to the slot (reads nothing from it: the slot of a
//! block freed long after it was made is rarely in cache). Slots live in segments that
//! double in size and are never moved, so a slot's address is stable.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::core::block::Block;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::resource::MemoryResource;
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

/// One live block's record: 16 bytes, four to a cache line (aligned to 16, so that no
/// slot straddles two lines).
#[derive(Default)]
#[repr(align(16))]
struct Slot {
    /// While the block is out: its size + 1 in the low 48 bits and the allocating
    /// thread's number in [`thread_names`] in the high 16; 0 when the slot is free.
    live: AtomicU64,
    /// While the block is out, the `tracking` field an inner tracking adaptor had set
    /// (one adaptor over another).
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
    /// Free slot numbers no thread's cache holds, the last given on top (a flat list:
    /// a batch goes in or out with one copy, no walk through the slots).
    free: Mutex<Vec<u32>>,
}

impl Slots {
    fn new() -> Slots {
        Slots {
            segments: std::array::from_fn(|_| OnceLock::new()),
            fresh: AtomicU64::new(0),
            free: Mutex::new(Vec::new()),
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

    /// Moves up to `count` free slot numbers into `into`: the last given, or fresh ones
    /// when none is free (none past `u32`).
    fn take(&self, count: usize, into: &mut Vec<u32>) {
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            let from = free.len().saturating_sub(count);
            if from < free.len() {
                into.extend(free.drain(from..));
                return;
            }
        }
        let n = self.fresh.fetch_add(count as u64, Ordering::Relaxed);
        let end = n.saturating_add(count as u64).min(u64::from(u32::MAX));
        into.extend((n..end).map(|n| n as u32));
    }

    /// Puts the slots `numbers` on the free list.
    fn give(&self, numbers: &[u32]) {
        if !numbers.is_empty() {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            free.extend_from_slice(numbers);
        }
    }
}

/// Free slot numbers a thread keeps for one adaptor's slots (the last it used), so that
/// taking and giving back a slot is a thread-local pop and push; the shared free list
/// is touched once per [`BATCH`] numbers.
struct Cache {
    owner: std::sync::Weak<Slots>,
    /// `owner`'s address, compared on every take and give.
    owner_address: usize,
    numbers: Vec<u32>,
}

/// Numbers moved between a thread's cache and the shared free list at once.
const BATCH: usize = 64;
/// At most this many numbers in a thread's cache; past it, the [`BATCH`] kept longest
/// go back to the shared free list.
const CACHED: usize = 4 * BATCH;

impl Cache {
    /// Makes this the cache of `slots`, giving back the numbers of the adaptor it served
    /// (when that one still exists).
    #[cold]
    fn serve(&mut self, slots: &Arc<Slots>) {
        self.flush();
        self.owner = Arc::downgrade(slots);
        self.owner_address = Arc::as_ptr(slots) as usize;
    }

    /// Gives the numbers back to their slots' free list (when those still exist).
    fn flush(&mut self) {
        if let Some(slots) = self.owner.upgrade() {
            slots.give(&self.numbers);
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

/// A free slot number of `slots` (`None` past `u32`): from this thread's cache, filled
/// from the shared free list a batch at a time.
#[inline]
fn take(slots: &Arc<Slots>) -> Option<u32> {
    let cached = CACHE.try_with(|c| {
        let mut c = c.try_borrow_mut().ok()?;
        if c.owner_address != Arc::as_ptr(slots) as usize {
            c.serve(slots);
        }
        if c.numbers.is_empty() {
            slots.take(BATCH, &mut c.numbers);
        }
        c.numbers.pop()
    });
    match cached {
        Ok(Some(n)) => Some(n),
        // No cache on this thread (it is ending, or this is a reentrant call).
        _ => {
            let mut one = Vec::with_capacity(1);
            slots.take(1, &mut one);
            one.pop()
        }
    }
}

/// Puts slot `n` of `slots` in this thread's cache (made `slots`' if it held another
/// adaptor's numbers, which go back to theirs); a full cache gives a batch back.
#[inline]
fn give(slots: &Arc<Slots>, n: u32) {
    let kept = CACHE
        .try_with(|c| {
            let Ok(mut c) = c.try_borrow_mut() else {
                return false;
            };
            if c.owner_address != Arc::as_ptr(slots) as usize {
                c.serve(slots);
            }
            if c.numbers.len() >= CACHED {
                slots.give(&c.numbers[..BATCH]);
                c.numbers.drain(..BATCH);
            }
            c.numbers.push(n);
            true
        })
        .unwrap_or(false);
    if !kept {
        slots.give(&[n]);
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
    /// The resource this one takes its memory from (RMM's `get_upstream_resource`).
    pub fn upstream(&self) -> &Arc<dyn MemoryResource> {
        &self.inner
    }

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

    /// Gives `block` a slot: the mark to carry in its `tracking` field while it is out
    /// (`None`: no slot for it, the block must go back).
    #[inline(always)]
    fn record(&self, block: &Block) -> Option<u64> {
        let size = (block.bytes as u64).saturating_add(1);
        let n = take(&self.slots)?;
        if size > SIZE_MASK {
            give(&self.slots, n);
            return None;
        }
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
        Some(nested | self.tag | u64::from(n))
    }

    /// Marks the block `allocated` holds with a slot of its own, in place (the result
    /// is not moved: a copy of it here, read whole right after the narrow store of the
    /// mark, stalled the copy on store forwarding, which cost more than all the rest of
    /// the bookkeeping), or gives the block back when it can have none.
    #[inline(always)]
    fn recorded(&self, allocated: &mut Result<Block>) {
        if let Ok(block) = allocated {
            match self.record(block) {
                Some(tracking) => block.tracking = tracking,
                None => self.refuse(allocated),
            }
        }
    }

    /// Gives back the block `allocated` holds, which could not have a slot, and makes
    /// the result the error saying why.
    #[cold]
    #[inline(never)]
    fn refuse(&self, allocated: &mut Result<Block>) {
        let Ok(block) = allocated else {
            return;
        };
        let refused = Err(Error::OutOfMemory {
            location: block.location,
            requested: block.bytes,
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

    /// Frees `block`'s slot (a store: the slot is not read unless it keeps an inner
    /// adaptor's mark) and returns the `tracking` field the block goes on with. A block
    /// this adaptor did not mark is passed on untouched (the inner resource refuses
    /// what is not its own).
    #[inline]
    fn forget(&self, block: &Block) -> u64 {
        let mark = block.tracking;
        if mark & TAG_BITS != self.tag {
            return mark;
        }
        let n = mark as u32;
        let Some(record) = self.slots.existing(n) else {
            return mark;
        };
        let inner = if mark & NESTED != 0 {
            record.word.load(Ordering::Relaxed)
        } else {
            0
        };
        record.live.store(0, Ordering::Release);
        give(&self.slots, n);
        inner
    }
}

impl MemoryResource for Tracking {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn device(&self) -> Option<std::sync::Arc<dyn crate::core::device::Device>> {
        self.inner.device()
    }
    fn describe(&self) -> String {
        format!("tracking({})", self.inner.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let mut allocated = self.inner.allocate(bytes, align);
        self.recorded(&mut allocated);
        allocated
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        let mut allocated = self.inner.allocate_on(bytes, align, queue);
        self.recorded(&mut allocated);
        allocated
    }
    fn deallocate(&self, block: Block) {
        let tracking = self.forget(&block);
        self.inner.deallocate(Block { tracking, ..block });
    }
    fn deallocate_after(&self, block: Block, queue: Queue, event: Event) {
        let tracking = self.forget(&block);
        self.inner
            .deallocate_after(Block { tracking, ..block }, queue, event);
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

    /// One number from the shared list.
    fn one(slots: &Slots) -> u32 {
        let mut n = Vec::new();
        slots.take(1, &mut n);
        n[0]
    }

    #[test]
    fn freed_slots_are_reused_last_in_first_out_across_threads() {
        let slots = Slots::new();
        let taken: Vec<u32> = (0..100).map(|_| one(&slots)).collect();
        assert_eq!(taken, (0..100).collect::<Vec<_>>());
        slots.give(&[7]);
        slots.give(&[42]);
        assert_eq!((one(&slots), one(&slots)), (42, 7));
        assert_eq!(one(&slots), 100);
        // Batches: the last given come back first (in the order given, so that a cache
        // popping from its end reuses the last freed first), a short list is taken
        // whole, fresh numbers when it is empty.
        slots.give(&[3, 9, 5]);
        slots.give(&[60]);
        let mut batch = Vec::new();
        slots.take(2, &mut batch);
        assert_eq!(batch, [5, 60]);
        slots.take(5, &mut batch);
        assert_eq!(batch, [5, 60, 3, 9]);
        slots.take(3, &mut batch);
        assert_eq!(batch, [5, 60, 3, 9, 101, 102, 103]);
        // Threads taking and giving at once, one by one and in batches, never share a
        // slot.
        let slots = Arc::new(Slots::new());
        let owners: Arc<Vec<AtomicU32>> = Arc::new((0..4096).map(|_| AtomicU32::new(0)).collect());
        std::thread::scope(|s| {
            for t in 1..=4u32 {
                let (slots, owners) = (Arc::clone(&slots), Arc::clone(&owners));
                s.spawn(move || {
                    let mut mine = Vec::new();
                    for round in 0..20_000 {
                        slots.take(1 + round % 5, &mut mine);
                        for &n in &mine {
                            let was = owners[n as usize].swap(t, Ordering::SeqCst);
                            assert_eq!(was, 0, "slot {n} shared");
                        }
                        for &n in &mine {
                            owners[n as usize].store(0, Ordering::SeqCst);
                        }
                        slots.give(&mine);
                        mine.clear();
                    }
                });
            }
        });
        assert!(
            slots.fresh.load(Ordering::Relaxed) <= 4 * 5,
            "only as many slots as threads hold at once"
        );
    }

    #[test]
    fn a_thread_cache_gives_batches_back_and_serves_one_adaptor_at_a_time() {
        let (a, b) = (Arc::new(Slots::new()), Arc::new(Slots::new()));
        // Fresh numbers come a batch at a time; freed ones are reused last in, first out.
        let taken: Vec<u32> = (0..3).map(|_| take(&a).unwrap()).collect();
        assert_eq!(a.fresh.load(Ordering::Relaxed), BATCH as u64);
        give(&a, taken[1]);
        assert_eq!(take(&a), Some(taken[1]));
        // Past CACHED numbers, the BATCH kept longest go to the shared list.
        let many: Vec<u32> = (0..CACHED).map(|_| take(&a).unwrap()).collect();
        let cached = || CACHE.with(|c| c.borrow().numbers.clone());
        let before = cached();
        for &n in &many {
            give(&a, n);
        }
        let now = cached();
        let mut shared = Vec::new();
        a.take(BATCH, &mut shared);
        let mut expected = before.clone();
        expected.extend(&many);
        assert_eq!(now.len(), before.len() + CACHED - BATCH);
        assert_eq!(shared, expected[..BATCH], "the oldest batch, in order");
        assert_eq!(now, expected[BATCH..]);
        a.give(&shared);
        // Serving another adaptor gives every cached number back to its own list: every
        // number ever taken from `a` is on its list again but the three still held.
        assert_eq!(take(&b), Some(BATCH as u32 - 1));
        let mut rest = Vec::new();
        a.take(usize::MAX, &mut rest);
        rest.extend(&taken);
        rest.sort_unstable();
        let fresh = a.fresh.load(Ordering::Relaxed) as u32;
        assert_eq!(rest, (0..fresh).collect::<Vec<_>>());
    }
}
