//! The pool's bookkeeping (the TLSF layout): one record per range of a chunk, linked to
//! its neighbours in address order (for coalescing) and, when free, into the list of its
//! size class; a bitmap says which classes have ranges. Every operation is O(1).

use super::{Chunk, Pending};

pub(super) const NIL: u32 = u32::MAX;
/// Size classes per power of two.
pub(super) const SUB_BITS: u32 = 3;
pub(super) const SUB: usize = 1 << SUB_BITS;
pub(super) const CLASSES: usize = 64 * SUB;

/// One range of a chunk: free, handed out, or freed while work may still use it.
#[derive(Clone, Copy)]
pub(super) struct Range {
    pub(super) chunk: u32,
    pub(super) offset: usize,
    pub(super) len: usize,
    pub(super) free: bool,
    /// Handed out (and not yet given back).
    pub(super) used: bool,
    /// Neighbours in address order within the chunk.
    pub(super) prev: u32,
    pub(super) next: u32,
    /// Neighbours in its size class's free list (free ranges only).
    pub(super) class_prev: u32,
    pub(super) class_next: u32,
}

/// The size class of a range of `len` bytes (`len` > 0).
pub(super) fn class_of(len: usize) -> usize {
    let log = usize::BITS - 1 - len.leading_zeros();
    if log < SUB_BITS {
        return len;
    }
    let sub = (len >> (log - SUB_BITS)) & (SUB - 1);
    (log as usize) * SUB + sub
}

#[derive(Default)]
pub(super) struct State {
    pub(super) chunks: Vec<Option<Chunk>>,
    pub(super) ranges: Vec<Range>,
    /// Unused slots of `ranges`.
    pub(super) spare: Vec<u32>,
    pub(super) heads: Vec<u32>,
    pub(super) bitmap: [u64; CLASSES / 64],
    pub(super) pending: Vec<Pending>,
    /// Ranges handed out that earlier work may still use (taken while pending).
    pub(super) busy: Vec<Pending>,
    pub(super) live: usize,
    pub(super) held: usize,
}

impl State {
    pub(super) fn new() -> State {
        State {
            heads: vec![NIL; CLASSES],
            ..State::default()
        }
    }

    pub(super) fn record(&mut self, r: Range) -> u32 {
        match self.spare.pop() {
            Some(i) => {
                self.ranges[i as usize] = r;
                i
            }
            None => {
                self.ranges.push(r);
                (self.ranges.len() - 1) as u32
            }
        }
    }

    pub(super) fn link(&mut self, i: u32) {
        let class = class_of(self.ranges[i as usize].len);
        let head = self.heads[class];
        {
            let r = &mut self.ranges[i as usize];
            r.free = true;
            r.class_prev = NIL;
            r.class_next = head;
        }
        if head != NIL {
            self.ranges[head as usize].class_prev = i;
        }
        self.heads[class] = i;
        self.bitmap[class / 64] |= 1 << (class % 64);
    }

    pub(super) fn unlink(&mut self, i: u32) {
        let Range {
            len,
            class_prev,
            class_next,
            ..
        } = self.ranges[i as usize];
        let class = class_of(len);
        if class_prev != NIL {
            self.ranges[class_prev as usize].class_next = class_next;
        } else {
            self.heads[class] = class_next;
            if class_next == NIL {
                self.bitmap[class / 64] &= !(1 << (class % 64));
            }
        }
        if class_next != NIL {
            self.ranges[class_next as usize].class_prev = class_prev;
        }
        self.ranges[i as usize].free = false;
    }

    /// The first non-empty class at or above `class`.
    pub(super) fn first_class_from(&self, class: usize) -> Option<usize> {
        let mut word = class / 64;
        let mut bits = self.bitmap.get(word)? & (!0u64 << (class % 64));
        loop {
            if bits != 0 {
                return Some(word * 64 + bits.trailing_zeros() as usize);
            }
            word += 1;
            bits = *self.bitmap.get(word)?;
        }
    }

    /// The free range that best fits `need`: the smallest one that holds it among the
    /// first few of its own size class, else the head of the next class that has any
    /// (every range there holds it).
    pub(super) fn find(&self, need: usize) -> Option<u32> {
        let own = class_of(need);
        let mut best: Option<(usize, u32)> = None;
        let mut i = self.heads[own];
        for _ in 0..16 {
            if i == NIL {
                break;
            }
            let len = self.ranges[i as usize].len;
            if len >= need && best.is_none_or(|(b, _)| len < b) {
                best = Some((len, i));
                if len == need {
                    break;
                }
            }
            i = self.ranges[i as usize].class_next;
        }
        if let Some((_, i)) = best {
            return Some(i);
        }
        let class = self.first_class_from(own + 1)?;
        Some(self.heads[class])
    }

    /// Takes `need` bytes from the start of free range `i` (split off the rest).
    pub(super) fn take(&mut self, i: u32, need: usize) {
        self.unlink(i);
        if let Some(rest) = self.split(i, need) {
            self.link(rest);
        }
    }

    /// Cuts range `i` (in no free list) to `need` bytes; the rest, if any, becomes a new
    /// range after it (in no free list either), which is returned.
    pub(super) fn split(&mut self, i: u32, need: usize) -> Option<u32> {
        let r = self.ranges[i as usize];
        if r.len <= need {
            return None;
        }
        let rest = self.record(Range {
            offset: r.offset + need,
            len: r.len - need,
            free: false,
            used: false,
            prev: i,
            class_prev: NIL,
            class_next: NIL,
            ..r
        });
        if r.next != NIL {
            self.ranges[r.next as usize].prev = rest;
        }
        let me = &mut self.ranges[i as usize];
        me.next = rest;
        me.len = need;
        Some(rest)
    }

    /// Frees range `i`, merged with its free neighbours.
    pub(super) fn give(&mut self, i: u32) {
        let mut i = i;
        let prev = self.ranges[i as usize].prev;
        if prev != NIL && self.ranges[prev as usize].free {
            self.unlink(prev);
            self.absorb(prev, i);
            i = prev;
        }
        let next = self.ranges[i as usize].next;
        if next != NIL && self.ranges[next as usize].free {
            self.unlink(next);
            self.absorb(i, next);
        }
        self.link(i);
    }

    /// Appends range `b` (the next one in address order) to range `a`.
    pub(super) fn absorb(&mut self, a: u32, b: u32) {
        let Range { len, next, .. } = self.ranges[b as usize];
        self.ranges[a as usize].len += len;
        self.ranges[a as usize].next = next;
        if next != NIL {
            self.ranges[next as usize].prev = a;
        }
        self.spare.push(b);
    }
}
