//! A buffer's replicas: one copy of the data per location, valid or stale, and the rules
//! that keep exactly the right ones current.

use std::sync::Arc;

use super::pending::Pending;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::runtime::event::Event;

/// One copy of the data at one location, valid or stale.
pub(super) struct Replica {
    pub(super) memory: Arc<Memory>,
    pub(super) valid: bool,
    /// Moves in flight that read or write this replica (see `pending`).
    pub(super) pending: Vec<Pending>,
    /// When this replica stopped being current while its data was still good (a write
    /// elsewhere made another replica the only current one): the newest such replica is
    /// current again if every current one is lost to a failed move (see `recover`).
    pub(super) retired: Option<u64>,
    /// A move into this replica that failed, kept until `settle` reports it (CUDA's
    /// sticky asynchronous error, per replica).
    pub(super) failed: Option<Event>,
}

impl Replica {
    pub(super) fn new(memory: Memory, valid: bool) -> Replica {
        Replica {
            memory: Arc::new(memory),
            valid,
            pending: Vec::new(),
            retired: None,
            failed: None,
        }
    }

    /// Marks this replica current (its data was just made or moved there).
    pub(super) fn make_current(&mut self) {
        self.valid = true;
        self.retired = None;
    }

    pub(super) fn location(&self) -> Location {
        self.memory.location()
    }
}

/// Makes `replicas[keep]` the only current copy (after a write there).
pub(super) fn only_current(replicas: &mut [Replica], keep: usize) {
    static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let now = GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    for (j, r) in replicas.iter_mut().enumerate() {
        if j == keep {
            r.make_current();
        } else if r.valid {
            r.valid = false;
            r.retired = Some(now);
        }
    }
}

/// Makes the newest retired replica current again when no replica is current (every
/// current one was the target of a move that failed): its data is the last that
/// arrived, so nothing is lost and nothing is read that did not arrive.
pub(super) fn recover(replicas: &mut [Replica]) {
    if replicas.iter().any(|r| r.valid) {
        return;
    }
    if let Some(r) = replicas
        .iter_mut()
        .filter(|r| r.retired.is_some())
        .max_by_key(|r| r.retired)
    {
        r.make_current();
    }
}

/// The current replica at `location`, if any.
pub(super) fn current_at(replicas: &[Replica], location: Location) -> Option<usize> {
    replicas
        .iter()
        .position(|r| r.valid && r.location() == location)
}

/// The current replica code at `location` uses in place: one there, else one it
/// reaches where it is.
pub(super) fn current_usable_at(replicas: &[Replica], location: Location) -> Option<usize> {
    current_at(replicas, location).or_else(|| {
        replicas
            .iter()
            .position(|r| r.valid && r.memory.is_accessible_from(location))
    })
}

/// Drops the replicas away from `home` that cannot hold `bytes` (they could not be
/// current for a buffer of that size).
pub(super) fn drop_smaller_than(replicas: &mut Vec<Replica>, home: Location, bytes: usize) {
    replicas.retain(|r| r.location() == home || r.memory.len() >= bytes);
}

/// Two distinct elements of a slice, mutably.
pub(super) fn two_mut<R>(items: &mut [R], a: usize, b: usize) -> (&mut R, &mut R) {
    if a < b {
        let (left, right) = items.split_at_mut(b);
        (&mut left[a], &mut right[0])
    } else {
        let (left, right) = items.split_at_mut(a);
        (&mut right[0], &mut left[b])
    }
}

pub(super) fn bytes_of<T>(len: usize) -> Result<usize> {
    len.checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| Error::Invalid(format!("{len} elements overflow the address space")))
}

/// Elements of `T` an allocation holds (every count, for a zero-sized `T`).
pub(super) fn elements_in<T>(memory: &Memory) -> usize {
    memory
        .len()
        .checked_div(std::mem::size_of::<T>())
        .unwrap_or(usize::MAX)
}
