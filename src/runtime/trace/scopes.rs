//! Statistics scopes, as RMM's `push_counters` / `pop_counters` (and Python's
//! `rmm.statistics.push_statistics` / `pop_statistics`): a stack of counters of the
//! process's allocations and copies; each allocation, free and copy counts in the top
//! scope, and a scope popped is added to the one under it.

use std::sync::{Arc, Mutex, OnceLock};

use crate::core::route::RouteKind;
use crate::core::trace::{self, SinkHandle, TraceEvent, TraceSink};

/// What one scope counted.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScopeStatistics {
    /// Bytes allocated minus bytes freed in the scope (negative when it freed memory
    /// allocated before it, as in RMM).
    pub current_bytes: i64,
    /// The most `current_bytes` was.
    pub peak_bytes: i64,
    /// Bytes allocated in the scope.
    pub total_bytes: u64,
    /// Allocations minus frees in the scope.
    pub current_count: i64,
    /// The most `current_count` was.
    pub peak_count: i64,
    /// Allocations in the scope.
    pub total_count: u64,
    /// Copies per route kind (indexed like [`RouteKind::ALL`]).
    pub copies: [u64; 5],
    /// Bytes copied per route kind.
    pub copied_bytes: [u64; 5],
    /// Seconds spent copying per route kind (the copies' own durations, summed).
    pub copy_seconds: [f64; 5],
}

impl ScopeStatistics {
    /// RMM's `add_counters_from_tracked_sub_block`: a popped scope added to its parent.
    fn absorb(&mut self, inner: &ScopeStatistics) {
        self.peak_bytes = self.peak_bytes.max(self.current_bytes + inner.peak_bytes);
        self.current_bytes += inner.current_bytes;
        self.total_bytes += inner.total_bytes;
        self.peak_count = self.peak_count.max(self.current_count + inner.peak_count);
        self.current_count += inner.current_count;
        self.total_count += inner.total_count;
        for i in 0..5 {
            self.copies[i] += inner.copies[i];
            self.copied_bytes[i] += inner.copied_bytes[i];
            self.copy_seconds[i] += inner.copy_seconds[i];
        }
    }

    /// Copies over `kind`.
    pub fn copies_of(&self, kind: RouteKind) -> u64 {
        self.copies[kind as usize]
    }

    /// Bytes copied over `kind`.
    pub fn bytes_of(&self, kind: RouteKind) -> u64 {
        self.copied_bytes[kind as usize]
    }
}

/// The stack, and the sink that counts into it while it is not empty.
struct Stack {
    scopes: Vec<ScopeStatistics>,
    sink: Option<SinkHandle>,
}

fn stack() -> &'static Arc<Mutex<Stack>> {
    static STACK: OnceLock<Arc<Mutex<Stack>>> = OnceLock::new();
    STACK.get_or_init(|| {
        Arc::new(Mutex::new(Stack {
            scopes: Vec::new(),
            sink: None,
        }))
    })
}

struct Counter;

impl TraceSink for Counter {
    fn event(&self, event: &TraceEvent<'_>) {
        let mut stack = stack().lock().unwrap_or_else(|e| e.into_inner());
        let Some(top) = stack.scopes.last_mut() else {
            return;
        };
        match *event {
            TraceEvent::Allocated { bytes, .. } => {
                top.current_bytes += bytes as i64;
                top.total_bytes += bytes as u64;
                top.peak_bytes = top.peak_bytes.max(top.current_bytes);
                top.current_count += 1;
                top.total_count += 1;
                top.peak_count = top.peak_count.max(top.current_count);
            }
            TraceEvent::Freed { bytes, .. } => {
                top.current_bytes -= bytes as i64;
                top.current_count -= 1;
            }
            TraceEvent::Copied {
                ok: true,
                bytes,
                route,
                start,
                end,
                ..
            } => {
                let k = route as usize;
                top.copies[k] += 1;
                top.copied_bytes[k] += bytes as u64;
                top.copy_seconds[k] += end.saturating_duration_since(start).as_secs_f64();
            }
            _ => {}
        }
    }
}

/// Starts a new scope on top of the stack (RMM's `push_counters`); counting starts with
/// the first. Returns what the scope under it counted so far, if there is one.
pub fn push_statistics() -> Option<ScopeStatistics> {
    let mut s = stack().lock().unwrap_or_else(|e| e.into_inner());
    let under = s.scopes.last().copied();
    s.scopes.push(ScopeStatistics::default());
    if s.sink.is_none() {
        s.sink = Some(trace::add_sink(Arc::new(Counter)));
    }
    under
}

/// Ends the top scope and returns what it counted, added to the scope under it (RMM's
/// `pop_counters`); `None` when no scope is open. Counting stops with the last.
pub fn pop_statistics() -> Option<ScopeStatistics> {
    let (popped, sink) = {
        let mut s = stack().lock().unwrap_or_else(|e| e.into_inner());
        let popped = s.scopes.pop()?;
        if let Some(under) = s.scopes.last_mut() {
            under.absorb(&popped);
        }
        let sink = if s.scopes.is_empty() {
            s.sink.take()
        } else {
            None
        };
        (popped, sink)
    };
    // Removed outside the stack's lock (an event in flight may be waiting for it).
    drop(sink);
    Some(popped)
}

/// What the top scope counted so far; `None` when no scope is open.
pub fn statistics() -> Option<ScopeStatistics> {
    stack()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .scopes
        .last()
        .copied()
}

/// A scope that pops itself when dropped.
///
/// ```
/// use locus::{trace::StatisticsScope, Location, Memory};
///
/// let scope = StatisticsScope::new();
/// let a = Memory::new(Location::Host, 4096)?;
/// let b = Memory::new(Location::Host, 4096)?;
/// a.copy_to(0, &b, 0, 4096)?;
/// drop(a);
/// let counted = scope.statistics();
/// assert_eq!(counted.total_count, 2);
/// assert_eq!(counted.current_bytes, 4096);
/// assert_eq!(counted.copies.iter().sum::<u64>(), 1);
/// # Ok::<(), locus::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "the scope ends when it is dropped"]
pub struct StatisticsScope {
    _private: (),
}

impl StatisticsScope {
    /// Opens a scope ([`push_statistics`]).
    pub fn new() -> StatisticsScope {
        push_statistics();
        StatisticsScope { _private: () }
    }

    /// What it counted so far (this scope is the top one while no inner one is open).
    pub fn statistics(&self) -> ScopeStatistics {
        statistics().unwrap_or_default()
    }

    /// Ends the scope and returns what it counted.
    pub fn finish(self) -> ScopeStatistics {
        let counted = pop_statistics().unwrap_or_default();
        std::mem::forget(self);
        counted
    }
}

impl Default for StatisticsScope {
    fn default() -> Self {
        StatisticsScope::new()
    }
}

impl Drop for StatisticsScope {
    fn drop(&mut self) {
        pop_statistics();
    }
}
