//! Transfer counters: how many copies and bytes went over each route kind.

use std::sync::OnceLock;

use crate::core::route::RouteKind;
use crate::core::tally::Tally;

/// Counts copies and bytes per route kind. Thread safe and cheap to update: the first
/// thread to count in it does so with plain loads and stores (no atomic
/// read-modify-write on a 4 KiB copy's path), others with atomic adds; readings sum
/// both.
///
/// The counters live on the heap: their cache lines are 64-byte aligned, and a type
/// that embeds them inline (a [`Buffer`](crate::Buffer)) would inherit that alignment,
/// which memory from allocators that promise less (Python's, for an object holding a
/// buffer) does not give.
#[derive(Default)]
pub struct TransferStats {
    /// Calls per route kind at `kind`, bytes at `5 + kind`.
    counts: Box<Tally<10>>,
}

impl std::fmt::Debug for TransferStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TransferStats")
            .field(&self.totals())
            .finish()
    }
}

/// A snapshot of [`TransferStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransferTotals {
    /// Copies per route kind, indexed like [`RouteKind::ALL`].
    pub calls: [u64; 5],
    /// Bytes per route kind, indexed like [`RouteKind::ALL`].
    pub bytes: [u64; 5],
}

impl TransferTotals {
    /// Copies over `kind`.
    pub fn calls_of(&self, kind: RouteKind) -> u64 {
        self.calls[kind as usize]
    }

    /// Bytes over `kind`.
    pub fn bytes_of(&self, kind: RouteKind) -> u64 {
        self.bytes[kind as usize]
    }

    /// Copies that moved data (every kind but in-place).
    pub fn copies(&self) -> u64 {
        self.calls.iter().sum::<u64>() - self.calls_of(RouteKind::InPlace)
    }

    /// Bytes moved (every kind but in-place).
    pub fn bytes_moved(&self) -> u64 {
        self.bytes.iter().sum::<u64>() - self.bytes_of(RouteKind::InPlace)
    }
}

impl std::fmt::Display for TransferTotals {
    /// `moved 12 B in 1 copy (direct 1 x 12 B); 2 accesses served in place`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let legs: Vec<String> = RouteKind::ALL
            .iter()
            .filter(|k| **k != RouteKind::InPlace && self.calls_of(**k) > 0)
            .map(|k| format!("{k} {} x {} B", self.calls_of(*k), self.bytes_of(*k)))
            .collect();
        if legs.is_empty() {
            f.write_str("moved nothing")?;
        } else {
            let copies = self.copies();
            write!(
                f,
                "moved {} B in {copies} cop{} ({})",
                self.bytes_moved(),
                if copies == 1 { "y" } else { "ies" },
                legs.join(", ")
            )?;
        }
        let in_place = self.calls_of(RouteKind::InPlace);
        if in_place > 0 {
            write!(
                f,
                "; {in_place} access{} served in place",
                if in_place == 1 { "" } else { "es" }
            )?;
        }
        Ok(())
    }
}

impl TransferStats {
    /// Counts one use of `kind` for `bytes` (in-place uses count a call and the bytes
    /// served, though nothing moved).
    #[inline]
    pub fn record(&self, kind: RouteKind, bytes: usize) {
        let writer = self.counts.writer();
        self.counts.add(writer, kind as usize, 1);
        self.counts.add(writer, 5 + kind as usize, bytes as u64);
    }

    /// The counts so far.
    pub fn totals(&self) -> TransferTotals {
        let mut t = TransferTotals::default();
        for i in 0..5 {
            t.calls[i] = self.counts.sum(i);
            t.bytes[i] = self.counts.sum(5 + i);
        }
        t
    }
}

pub(super) fn global() -> &'static TransferStats {
    static GLOBAL: OnceLock<TransferStats> = OnceLock::new();
    GLOBAL.get_or_init(TransferStats::default)
}

/// Counts `bytes` on a route of `kind` in `local` only: a buffer's replica used where it
/// is (no copy made), or a queued copy counted for its caller when it starts (the
/// process's count is made where the copy is).
pub(crate) fn count_local(kind: RouteKind, bytes: usize, local: &TransferStats) {
    local.record(kind, bytes);
}

/// Counts a move of `bytes` on a route of `kind` in the process's counters and in
/// `local` (a buffer's own, a benchmark's): where every count is made.
pub(crate) fn count(kind: RouteKind, bytes: usize, local: Option<&TransferStats>) {
    global().record(kind, bytes);
    if let Some(local) = local {
        local.record(kind, bytes);
    }
}
