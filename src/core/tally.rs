//! [`Tally`]: counters that the thread which uses them first updates with plain loads
//! and stores, and every other thread with atomic adds.
//!
//! An atomic read-modify-write costs a noticeable fraction of a small memcpy
//! (`docs/design-measurements.md`), and the counters sit on paths that run per
//! allocation or per copy. Most programs count from one thread; that thread (the owner) keeps a set of
//! counts only it writes, so a load and a store suffice. Other threads add to a shared
//! set. A reading sums both: exact whenever no update is in flight, and an update is
//! never lost (each set has one writer, or only atomic adds).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A number for the calling thread: never 0, never given to another thread (a
/// thread-local read after the first call).
pub(crate) fn current_thread() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static NUMBER: Cell<u64> = const { Cell::new(0) };
    }
    NUMBER
        .try_with(|n| match n.get() {
            0 => {
                let number = NEXT.fetch_add(1, Relaxed);
                n.set(number);
                number
            }
            number => number,
        })
        // A thread past its thread-locals (in a destructor) is nobody's owner.
        .unwrap_or(u64::MAX)
}

/// `N` counters, owner-biased (see the module's text).
pub(crate) struct Tally<const N: usize> {
    /// The [`current_thread`] number of the owner (0: none yet).
    owner: AtomicU64,
    owned: Line<N>,
    shared: Line<N>,
}

/// One set of counts on cache lines of its own (the owner's stores do not evict the
/// set other threads add to, and the other way round).
#[repr(align(64))]
struct Line<const N: usize>([AtomicU64; N]);

impl<const N: usize> Default for Tally<N> {
    fn default() -> Self {
        Tally {
            owner: AtomicU64::new(0),
            owned: Line(std::array::from_fn(|_| AtomicU64::new(0))),
            shared: Line(std::array::from_fn(|_| AtomicU64::new(0))),
        }
    }
}

/// Which set of a [`Tally`] the calling thread writes: taken once per call that
/// updates several counters.
#[derive(Clone, Copy)]
pub(crate) struct Writer {
    owns: bool,
}

impl<const N: usize> Tally<N> {
    /// The calling thread's set (the thread is made the owner if there is none yet).
    #[inline(always)]
    pub(crate) fn writer(&self) -> Writer {
        let me = current_thread();
        let owns = match self.owner.load(Relaxed) {
            0 => self.owner.compare_exchange(0, me, Relaxed, Relaxed).is_ok(),
            owner => owner == me,
        };
        Writer { owns }
    }

    /// Adds `n` to counter `i`; returns the caller's own set's new value of it.
    #[inline(always)]
    pub(crate) fn add(&self, writer: Writer, i: usize, n: u64) -> u64 {
        match writer.owns {
            true => {
                let counter = &self.owned.0[i];
                let value = counter.load(Relaxed).wrapping_add(n);
                counter.store(value, Relaxed);
                value
            }
            false => self.shared.0[i].fetch_add(n, Relaxed).wrapping_add(n),
        }
    }

    /// Raises counter `i` of the caller's set to `value` if it is below (a peak).
    #[inline(always)]
    pub(crate) fn raise(&self, writer: Writer, i: usize, value: u64) {
        let counter = match writer.owns {
            true => &self.owned.0[i],
            false => &self.shared.0[i],
        };
        if value > counter.load(Relaxed) {
            match writer.owns {
                true => counter.store(value, Relaxed),
                false => {
                    counter.fetch_max(value, Relaxed);
                }
            }
        }
    }

    /// Counter `i`: both sets summed.
    #[inline(always)]
    pub(crate) fn sum(&self, i: usize) -> u64 {
        self.owned.0[i]
            .load(Relaxed)
            .wrapping_add(self.shared.0[i].load(Relaxed))
    }

    /// Counter `i`: the larger of both sets (for peaks kept with [`Tally::raise`]).
    pub(crate) fn max(&self, i: usize) -> u64 {
        self.owned.0[i]
            .load(Relaxed)
            .max(self.shared.0[i].load(Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_and_other_threads_add_up_and_peaks_take_the_larger() {
        let tally = Tally::<2>::default();
        let owner = tally.writer();
        assert!(owner.owns);
        tally.add(owner, 0, 5);
        tally.raise(owner, 1, 7);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let other = tally.writer();
                    assert!(!other.owns);
                    for _ in 0..1000 {
                        tally.add(other, 0, 1);
                    }
                    tally.raise(other, 1, 9);
                });
            }
        });
        assert_eq!(tally.add(owner, 0, 1), 6, "the owner's own set");
        assert_eq!((tally.sum(0), tally.max(1)), (4006, 9));
        assert!(tally.writer().owns, "ownership stays");
    }
}
