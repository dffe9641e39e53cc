//! The trace: one stream of the memory work locus does (allocations and frees, copies
//! and moves with their route, kernel launches, waits), handed to whoever listens.
//!
//! Listeners are [`TraceSink`]s ([`add_sink`]); the events also go to the `tracing`
//! ecosystem (target `locus`, level `DEBUG`) when a subscriber wants them. With nobody
//! listening an event costs one relaxed atomic load and `tracing`'s own level check,
//! and nothing is built.
//!
//! A sink runs on the thread that did the work, with no lock of locus's held. Work a
//! sink itself asks of locus (a callback that allocates) is done but not traced, so a
//! sink never sees its own echo; a sink that panics is removed, with one warning.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

use super::location::Location;
use super::native::MemoryKind;
use super::route_kind::RouteKind;

/// Where a piece of work ran: on the thread that asked for it, or on a device's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Track {
    /// The thread the event is delivered on (a caller's, or a locus worker's).
    Thread,
    /// A device's own queue (an asynchronous copy the runtime ran).
    Queue(Location),
}

/// What happened. Times are the host's clock ([`Instant`]); a queued copy's end is when
/// locus saw it done.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum TraceEvent<'a> {
    /// Memory was allocated, adopted or handed out by a resource.
    Allocated {
        /// Which allocation (matched by a [`TraceEvent::Freed`] with the same id).
        id: u64,
        /// Where it lives.
        location: Location,
        /// Its length.
        bytes: usize,
        /// Its memory kind.
        kind: MemoryKind,
        /// Who provides it: `device`, `adopted`, or the resource's description.
        source: &'a str,
    },
    /// Memory was freed, given back to its resource, or let go of (adopted memory).
    Freed {
        /// The id its [`TraceEvent::Allocated`] had.
        id: u64,
        /// Where it lived.
        location: Location,
        /// Its length.
        bytes: usize,
        /// Who provided it, as its allocation said.
        source: &'a str,
    },
    /// A copy began (its end is the [`TraceEvent::Copied`] with the same `span`): for
    /// listeners that open a range around the work (NVTX, ROCTX, a profiler's callback).
    CopyBegan {
        /// Which copy (its `Copied` event has the same span).
        span: u64,
        /// The source's location.
        src: Location,
        /// The destination's location.
        dst: Location,
        /// How many bytes.
        bytes: usize,
        /// The route's kind.
        route: RouteKind,
        /// The path the transfer matrix took.
        path: &'a str,
    },
    /// Bytes were copied from one location to another (or the copy failed: `ok`).
    Copied {
        /// Which copy (the span its [`TraceEvent::CopyBegan`] had).
        span: u64,
        /// Whether it succeeded.
        ok: bool,
        /// The source's location.
        src: Location,
        /// The destination's location.
        dst: Location,
        /// How many bytes.
        bytes: usize,
        /// The route's kind.
        route: RouteKind,
        /// The path the transfer matrix took (as `locus info` names paths).
        path: &'a str,
        /// Where it ran.
        track: Track,
        /// When it started (a queued copy: when it was submitted).
        start: Instant,
        /// When it ended.
        end: Instant,
    },
    /// A kernel ran.
    Launched {
        /// Where.
        location: Location,
        /// The kernel's name.
        kernel: &'a str,
        /// When it was launched.
        start: Instant,
        /// When it ended (or, for a launch that returns at once, when it returned).
        end: Instant,
    },
    /// A thread waited for work (an event's wait).
    Waited {
        /// When the wait began.
        start: Instant,
        /// When it ended.
        end: Instant,
    },
}

/// A listener to the trace.
pub trait TraceSink: Send + Sync {
    /// Takes one event, on the thread that did the work.
    fn event(&self, event: &TraceEvent<'_>);
}

type Sinks = Vec<(u64, Arc<dyn TraceSink>)>;

fn sinks() -> &'static RwLock<Arc<Sinks>> {
    static SINKS: OnceLock<RwLock<Arc<Sinks>>> = OnceLock::new();
    SINKS.get_or_init(Default::default)
}

/// True while at least one sink is added.
static LISTENING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// True while this thread runs a sink (work a sink asks for is not traced).
    static IN_SINK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// True while this thread makes a traced copy: the reads and writes it is made of
    /// are its legs, not copies of their own.
    static IN_COPY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Clears [`IN_COPY`] when the copy ends, however it ends.
struct CopyGuard;

impl Drop for CopyGuard {
    fn drop(&mut self) {
        IN_COPY.with(|c| c.set(false));
    }
}

/// What a traced copy is: from where to where, how much, on which route and path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CopyTrace<'a> {
    pub src: Location,
    pub dst: Location,
    pub bytes: usize,
    pub route: RouteKind,
    pub path: &'a str,
}

impl CopyTrace<'static> {
    /// A host read (`to_host`) or write of `bytes` of memory at `location`.
    pub(crate) fn host_io(location: Location, to_host: bool, bytes: usize) -> Self {
        let (src, dst, path) = if to_host {
            (location, Location::Host, "read")
        } else {
            (Location::Host, location, "write")
        };
        CopyTrace {
            src,
            dst,
            bytes,
            route: RouteKind::Direct,
            path,
        }
    }
}

impl CopyTrace<'_> {
    /// The event that says this copy began, as `span`.
    pub(crate) fn began(&self, span: u64) -> TraceEvent<'_> {
        TraceEvent::CopyBegan {
            span,
            src: self.src,
            dst: self.dst,
            bytes: self.bytes,
            route: self.route,
            path: self.path,
        }
    }

    /// The event for this copy (`span`), run on `track` from `start` to now.
    pub(crate) fn event(
        &self,
        span: u64,
        ok: bool,
        track: Track,
        start: Instant,
    ) -> TraceEvent<'_> {
        self.event_between(span, ok, track, start, Instant::now())
    }

    /// The event for this copy (`span`), run on `track` from `start` to `end`.
    pub(crate) fn event_between(
        &self,
        span: u64,
        ok: bool,
        track: Track,
        start: Instant,
        end: Instant,
    ) -> TraceEvent<'_> {
        TraceEvent::Copied {
            span,
            ok,
            src: self.src,
            dst: self.dst,
            bytes: self.bytes,
            route: self.route,
            path: self.path,
            track,
            start,
            end,
        }
    }
}

/// Runs `copy` on this thread and traces it when it succeeds (when anybody listens); the
/// copies it is made of on this thread are not traced again.
pub(crate) fn traced_copy<R, E>(
    what: impl FnOnce() -> CopyTrace<'static>,
    copy: impl FnOnce() -> Result<R, E>,
) -> Result<R, E> {
    if !listening() || IN_COPY.with(|c| c.get()) {
        return copy();
    }
    IN_COPY.with(|c| c.set(true));
    let guard = CopyGuard;
    let what = what();
    let span = next_span();
    emit(what.began(span));
    let start = Instant::now();
    let out = copy();
    drop(guard);
    emit(what.event(span, out.is_ok(), Track::Thread, start));
    out
}

/// A fresh id for a copy's span, from 1.
pub(crate) fn next_span() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Traces a kernel launch at `location` that began at `start` (`None`: nobody listened
/// then) and returned now.
pub(crate) fn launched(location: Location, kernel: &str, start: Option<Instant>) {
    if let Some(start) = start {
        emit(TraceEvent::Launched {
            location,
            kernel,
            start,
            end: Instant::now(),
        });
    }
}

/// Now, when anybody listens (the start of something to trace).
#[inline]
pub(crate) fn start() -> Option<Instant> {
    listening().then(Instant::now)
}

/// Removes its sink when dropped (or by [`SinkHandle::remove`]).
#[must_use = "the sink is removed when the handle is dropped"]
#[derive(Debug)]
pub struct SinkHandle {
    id: u64,
}

impl SinkHandle {
    /// Removes the sink now.
    pub fn remove(self) {}
}

impl Drop for SinkHandle {
    fn drop(&mut self) {
        remove_sink(self.id);
    }
}

/// Adds `sink`; it gets every event from now until the handle is dropped.
pub fn add_sink(sink: Arc<dyn TraceSink>) -> SinkHandle {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut guard = sinks().write().unwrap_or_else(|e| e.into_inner());
    let mut list: Sinks = guard.as_ref().clone();
    list.push((id, sink));
    *guard = Arc::new(list);
    LISTENING.store(true, Ordering::Release);
    SinkHandle { id }
}

fn remove_sink(id: u64) {
    let mut guard = sinks().write().unwrap_or_else(|e| e.into_inner());
    let list: Sinks = guard.iter().filter(|(i, _)| *i != id).cloned().collect();
    LISTENING.store(!list.is_empty(), Ordering::Release);
    *guard = Arc::new(list);
}

/// Whether anybody listens: a sink, or a `tracing` subscriber that wants locus's
/// events. Callers build an event only when this is true.
#[inline]
pub fn listening() -> bool {
    LISTENING.load(Ordering::Relaxed) || tracing::enabled!(target: "locus", tracing::Level::DEBUG)
}

/// The instant the trace counts from (the first use of the trace in the process).
pub fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// A fresh id for an allocation, from 1 (0 means "not traced").
pub(crate) fn next_allocation_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Hands `event` to every sink and to `tracing`. Does nothing inside a sink.
pub fn emit(event: TraceEvent<'_>) {
    if IN_SINK.with(|s| s.get()) {
        return;
    }
    forward_to_tracing(&event);
    if !LISTENING.load(Ordering::Acquire) {
        return;
    }
    let list = Arc::clone(&sinks().read().unwrap_or_else(|e| e.into_inner()));
    IN_SINK.with(|s| s.set(true));
    for (id, sink) in list.iter() {
        let delivered =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.event(&event)));
        if delivered.is_err() {
            eprintln!(
                "locus: warning: a trace sink panicked and was removed; the program goes on, and that sink gets no more events"
            );
            remove_sink(*id);
        }
    }
    IN_SINK.with(|s| s.set(false));
}

/// Microseconds from the trace's [`epoch`] to `at` (0 for an instant before it).
pub(crate) fn micros_since_epoch(at: Instant) -> f64 {
    at.saturating_duration_since(epoch()).as_secs_f64() * 1e6
}

/// Microseconds from `start` to `end` (0 when `end` is not later).
pub(crate) fn micros_between(start: Instant, end: Instant) -> f64 {
    end.saturating_duration_since(start).as_secs_f64() * 1e6
}

fn forward_to_tracing(event: &TraceEvent<'_>) {
    if !tracing::enabled!(target: "locus", tracing::Level::DEBUG) {
        return;
    }
    match *event {
        TraceEvent::Allocated {
            id,
            location,
            bytes,
            kind,
            source,
        } => {
            tracing::debug!(target: "locus", id, %location, bytes, kind = ?kind, source, "allocated")
        }
        TraceEvent::Freed {
            id,
            location,
            bytes,
            source,
        } => tracing::debug!(target: "locus", id, %location, bytes, source, "freed"),
        TraceEvent::CopyBegan {
            span,
            src,
            dst,
            bytes,
            route,
            path,
        } => {
            tracing::trace!(target: "locus", span, %src, %dst, bytes, route = route.name(), path, "copy began")
        }
        TraceEvent::Copied {
            span,
            ok,
            src,
            dst,
            bytes,
            route,
            path,
            track,
            start,
            end,
        } => tracing::debug!(
            target: "locus",
            span,
            ok,
            %src,
            %dst,
            bytes,
            route = route.name(),
            path,
            queued = matches!(track, Track::Queue(_)),
            start_us = micros_since_epoch(start),
            duration_us = micros_between(start, end),
            "copied"
        ),
        TraceEvent::Launched {
            location,
            kernel,
            start,
            end,
        } => tracing::debug!(
            target: "locus",
            %location,
            kernel,
            start_us = micros_since_epoch(start),
            duration_us = micros_between(start, end),
            "launched"
        ),
        TraceEvent::Waited { start, end } => tracing::debug!(
            target: "locus",
            start_us = micros_since_epoch(start),
            duration_us = micros_between(start, end),
            "waited"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Counts the waits of the thread that made it (tests run side by side).
    struct Count(Mutex<usize>, std::thread::ThreadId);
    impl TraceSink for Count {
        fn event(&self, e: &TraceEvent<'_>) {
            if std::thread::current().id() != self.1 || !matches!(e, TraceEvent::Waited { .. }) {
                return;
            }
            *self.0.lock().unwrap() += 1;
            // Work asked for inside a sink is not traced: no recursion.
            emit(TraceEvent::Waited {
                start: Instant::now(),
                end: Instant::now(),
            });
        }
    }

    struct Panics;
    impl TraceSink for Panics {
        fn event(&self, _: &TraceEvent<'_>) {
            panic!("a sink's own bug");
        }
    }

    fn wait_event() -> TraceEvent<'static> {
        TraceEvent::Waited {
            start: Instant::now(),
            end: Instant::now(),
        }
    }

    #[test]
    fn a_sink_gets_events_until_its_handle_drops_and_a_panicking_one_is_removed() {
        let count = Arc::new(Count(Mutex::new(0), std::thread::current().id()));
        let handle = add_sink(count.clone());
        let panics = add_sink(Arc::new(Panics));
        emit(wait_event());
        emit(wait_event());
        assert_eq!(*count.0.lock().unwrap(), 2, "one each, no echo of its own");
        assert!(
            !sinks().read().unwrap().iter().any(|(i, _)| *i == panics.id),
            "the panicking sink is gone"
        );
        drop(handle);
        emit(wait_event());
        assert_eq!(*count.0.lock().unwrap(), 2);
    }
}
