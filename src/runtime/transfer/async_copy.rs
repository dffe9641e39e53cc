//! Asynchronous copies: [`Memory::copy_to_async`] starts a copy on the device's own
//! queue when its backend can ([`QueuedCopies::copy_async`](crate::core::capability::QueuedCopies::copy_async)),
//! and on a worker thread otherwise; [`Memory::copy_to_async_on`] orders it on a [`Queue`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::copy::copy_on_plan;
use super::matrix::Plan;
use super::stats::TransferStats;
use crate::core::copy_span::CopySpan;
use crate::core::device::HostAccess;
use crate::core::error::Result;
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::route::Endpoint;
use crate::core::trace::{self, CopyTrace, Track};
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;
use crate::runtime::registry::registry;
use crate::runtime::worker;

/// Whether a runtime's own queued copy should carry this copy: always within one device
/// or with the host's own memory; with memory at another host address (OpenMP's initial
/// device, SYCL USM of a CPU device) only where the planner chose a runtime's own call for
/// the synchronous copy too (`plan`): some runtimes write from a host pointer several
/// times slower than a memcpy between mappings (PoCL; numbers in
/// `docs/design-measurements.md`).
fn native_wanted(src: &Memory, dst: &Memory, plan: &Plan) -> bool {
    let elsewhere_on_host =
        |m: &Memory| !m.location().is_host() && m.host_access() == HostAccess::Pointer;
    let with_the_host = src.location().is_host() || dst.location().is_host();
    Arc::ptr_eq(src.device(), dst.device())
        || with_the_host
        || !(elsewhere_on_host(src) || elsewhere_on_host(dst))
        || plan.1.is_runtime_call()
}

/// The plan for a copy of `len` bytes between the two, as the synchronous copy makes it.
pub(crate) fn plan_for(src: &Memory, dst: &Memory, len: usize) -> Plan {
    registry()
        .matrix()
        .plan_recent(Endpoint::of(src), Endpoint::of(dst), len)
}

/// Starts a copy of `span` after `after` (bounds checked at once) on `plan` (made here
/// when the caller has none), counted in the process's counters and in `local`: on a
/// runtime's own queue where one carries it, else on a worker thread. The one place an
/// asynchronous copy is planned and counted.
pub(crate) fn start_copy(
    src: &Arc<Memory>,
    dst: &Arc<Memory>,
    span: CopySpan,
    after: &[Event],
    plan: Option<Plan>,
    local: Option<&TransferStats>,
) -> Result<Event> {
    let CopySpan {
        src_offset,
        dst_offset,
        len,
    } = span;
    src.check("copy source", src_offset, len)?;
    dst.check("copy destination", dst_offset, len)?;
    crate::core::shutdown::check_runtime_alive(src.location(), "copy_to_async (source)")?;
    crate::core::shutdown::check_runtime_alive(dst.location(), "copy_to_async (destination)")?;
    // Nothing to copy: done once `after` is (a worker waits for it when it runs).
    if len == 0 && after.iter().all(Event::is_complete) {
        for e in after {
            e.wait()?;
        }
        return Ok(Event::done());
    }
    let plan = plan.unwrap_or_else(|| plan_for(src, dst, len));
    let kind = plan.0.kind;
    let event = match start_native(src, dst, span, after, &plan)? {
        Some(event) => event,
        None => start_on_worker(src, dst, span, after, plan)?,
    };
    // Counted for the caller once started; the process's count is made where the copy
    // is (`start_native`, or the worker's `copy_on_plan` once the copy is made).
    if let Some(local) = local.filter(|_| len > 0) {
        super::stats::count_local(kind, len, local);
    }
    Ok(event)
}

/// Starts the copy of `span` on `plan` on a worker thread, after `after`: from the pool
/// when nothing is left to wait for, else on a thread of its own (see `worker`).
fn start_on_worker(
    src: &Arc<Memory>,
    dst: &Arc<Memory>,
    span: CopySpan,
    after: &[Event],
    plan: Plan,
) -> Result<Event> {
    let (src, dst) = (Arc::clone(src), Arc::clone(dst));
    let deps: Vec<Event> = after.to_vec();
    let (event, done) = Event::user();
    let ready = deps.iter().all(Event::is_complete);
    let job = move || {
        let copy = || -> Result<()> {
            for d in &deps {
                d.wait()?;
            }
            copy_on_plan(&src, &dst, span, &plan, None).map(|_| ())
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(copy));
        // The memory is let go before the event says done (a waiter may then check
        // that nothing holds it).
        drop((src, dst, deps));
        match outcome {
            Ok(Ok(())) => done.complete(),
            Ok(Err(e)) => done.fail_with(e),
            Err(_) => done.fail("the asynchronous copy's worker panicked"),
        }
    };
    if ready {
        worker::run(job)?;
    } else {
        worker::run_waiting(job)?;
    }
    Ok(event)
}

/// Starts the copy on a runtime's own queue where one carries it (the rules of
/// [`Memory::copy_to_async`]) and returns its event, counted in the process's counters;
/// `None`, starting nothing, where none does. Bounds are the caller's to check.
pub(crate) fn start_native(
    src: &Arc<Memory>,
    dst: &Arc<Memory>,
    span: CopySpan,
    after: &[Event],
    plan: &Plan,
) -> Result<Option<Event>> {
    if span.len == 0 || !native_wanted(src, dst, plan) {
        return Ok(None);
    }
    // The source's device first, then the destination's (host -> SYCL).
    let other = (!Arc::ptr_eq(src.device(), dst.device())).then(|| dst.device());
    for device in std::iter::once(src.device()).chain(other) {
        let Some(queue) = device.queued_copies() else {
            continue;
        };
        let submitted = trace::start();
        let started = queue.copy_async(src, dst, span, &after)?;
        if let Some(work) = started {
            super::stats::count(plan.0.kind, span.len, None);
            let event = Event::native(work, vec![Arc::clone(src), Arc::clone(dst)]);
            if let Some(submitted) = submitted {
                trace_queued(
                    &event,
                    src,
                    dst,
                    span.len,
                    plan,
                    device.location(),
                    submitted,
                );
            }
            return Ok(Some(event));
        }
    }
    Ok(None)
}

/// Traces a copy queued on `queue` at `submitted`: begun now, ended once locus sees it
/// done.
fn trace_queued(
    event: &Event,
    src: &Memory,
    dst: &Memory,
    bytes: usize,
    plan: &Plan,
    queue: Location,
    submitted: Instant,
) {
    let what = CopyTrace {
        src: src.location(),
        dst: dst.location(),
        bytes,
        route: plan.0.kind,
        path: plan.1.name(),
    };
    let span = trace::next_span();
    trace::emit(what.began(span));
    let held = event.clone();
    event.on_complete(move |outcome| {
        // The device's own times where its runtime gives them, placed from the
        // submission (the device's clock has a zero of its own); else the host's.
        let (start, end) = match held.device_times() {
            Some(t) if t.started_ns >= t.queued_ns && t.ended_ns >= t.started_ns => (
                submitted + Duration::from_nanos(t.started_ns - t.queued_ns),
                submitted + Duration::from_nanos(t.ended_ns - t.queued_ns),
            ),
            _ => (submitted, Instant::now()),
        };
        let ok = outcome.is_ok();
        trace::emit(what.event_between(span, ok, Track::Queue(queue), start, end));
    });
}

impl Memory {
    /// Starts `copy_to` asynchronously after `after` and returns its event (the
    /// synchronous form is [`Memory::copy_to`]). Bounds are checked at once: an
    /// out-of-range copy is an error and starts nothing.
    ///
    /// Native where the technology has a queue for it:
    /// - within one OpenCL device, or between it and memory at a host address: the
    ///   host's, OpenMP initial-device memory, SYCL USM of a CPU device
    ///   (`clEnqueueCopyBuffer`, non-blocking `clEnqueueWriteBuffer` /
    ///   `clEnqueueReadBuffer`; OpenCL events of its context in `after` as the wait list);
    /// - SYCL USM to or from the same device, host memory or OpenMP initial-device
    ///   memory (`queue.memcpy`, SYCL events as dependencies);
    /// - within one WebGPU device (`copy_buffer_to_buffer` in one submission, after that
    ///   device's earlier submissions), and uploads of up to 1 MiB to it
    ///   (`Queue::write_buffer`);
    /// - within one CUDA or HIP device (`cuMemcpyDtoDAsync` / `hipMemcpyAsync` on its
    ///   stream, with an event).
    ///
    /// A dependency the technology cannot take natively that is still running sends the
    /// copy to a worker thread, which waits for it: this call never blocks on other
    /// work, and the device's own queue is not held up by it. Every other copy runs on a
    /// worker thread after a host wait on `after`. Dropping the returned event (every
    /// clone) does not block: the work finishes on its own and the memory it uses stays
    /// alive until then.
    pub fn copy_to_async(
        self: &Arc<Self>,
        src_offset: usize,
        dst: &Arc<Memory>,
        dst_offset: usize,
        len: usize,
        after: &[Event],
    ) -> Result<Event> {
        let span = CopySpan {
            src_offset,
            dst_offset,
            len,
        };
        start_copy(self, dst, span, after, None, None)
    }

    /// [`Memory::copy_to_async`] on `queue`: it starts after everything submitted on
    /// that queue before (and after `after`), and later work on the queue runs after it.
    pub fn copy_to_async_on(
        self: &Arc<Self>,
        queue: Queue,
        src_offset: usize,
        dst: &Arc<Memory>,
        dst_offset: usize,
        len: usize,
        after: &[Event],
    ) -> Result<Event> {
        queue.submit(after, |deps| {
            self.copy_to_async(src_offset, dst, dst_offset, len, deps)
        })
    }
}
