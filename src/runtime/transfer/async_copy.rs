//! Asynchronous copies: [`Memory::copy_to_async`] starts a copy on the device's own
//! queue when its backend can ([`QueuedCopies::copy_async`](crate::core::capability::QueuedCopies::copy_async)),
//! and on a worker thread otherwise; [`Memory::copy_to_async_on`] orders it on a [`Queue`].

use std::sync::Arc;

use crate::core::device::HostAccess;
use crate::core::error::Result;
use crate::core::memory::Memory;
use crate::core::route::Endpoint;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;
use crate::runtime::registry::registry;
use crate::runtime::worker;

/// Whether a runtime's own queued copy should carry this copy: always within one device
/// or with the host's own memory; with memory at another host address (OpenMP's initial
/// device, SYCL USM of a CPU device) only where the planner chose a runtime's own call for
/// the synchronous copy too: some runtimes write from a host pointer several times slower
/// than a memcpy between mappings (PoCL; numbers in `docs/design-measurements.md`).
fn native_wanted(src: &Memory, dst: &Memory, len: usize) -> bool {
    let elsewhere_on_host =
        |m: &Memory| !m.location().is_host() && m.host_access() == HostAccess::Pointer;
    let with_the_host = src.location().is_host() || dst.location().is_host();
    if Arc::ptr_eq(src.device(), dst.device())
        || with_the_host
        || !(elsewhere_on_host(src) || elsewhere_on_host(dst))
    {
        return true;
    }
    let plan = registry()
        .matrix()
        .plan(Endpoint::of(src), Endpoint::of(dst), len);
    plan.1.is_runtime_call()
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
        self.check("copy source", src_offset, len)?;
        dst.check("copy destination", dst_offset, len)?;
        crate::core::shutdown::check_runtime_alive(self.location(), "copy_to_async (source)")?;
        crate::core::shutdown::check_runtime_alive(dst.location(), "copy_to_async (destination)")?;
        // Nothing to copy: done once `after` is (a worker waits for it when it runs).
        if len == 0 && after.iter().all(Event::is_complete) {
            for e in after {
                e.wait()?;
            }
            return Ok(Event::done());
        }
        if let Some(event) = self.copy_native_async(src_offset, dst, dst_offset, len, after)? {
            return Ok(event);
        }
        let (src, dst) = (Arc::clone(self), Arc::clone(dst));
        let deps: Vec<Event> = after.to_vec();
        let (event, done) = Event::user();
        // Nothing to wait for: the pool; else a thread of its own (see `worker`).
        let ready = deps.iter().all(Event::is_complete);
        let job = move || {
            let copy = || -> Result<()> {
                for d in &deps {
                    d.wait()?;
                }
                src.copy_to(src_offset, &dst, dst_offset, len).map(|_| ())
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(copy));
            // The memory is let go before the event says done (a waiter may then
            // check that nothing holds it).
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
    /// [`Memory::copy_to_async`]) and returns its event; `None`, starting nothing, where
    /// none does. Bounds are the caller's to check.
    pub(crate) fn copy_native_async(
        self: &Arc<Self>,
        src_offset: usize,
        dst: &Arc<Memory>,
        dst_offset: usize,
        len: usize,
        after: &[Event],
    ) -> Result<Option<Event>> {
        // The source's device first, then the destination's (host -> SYCL).
        let other = (!Arc::ptr_eq(self.device(), dst.device())).then(|| dst.device());
        for device in std::iter::once(self.device())
            .chain(other)
            .filter(|_| len > 0 && native_wanted(self, dst, len))
        {
            let Some(queue) = device.queued_copies() else {
                continue;
            };
            if let Some(work) = queue.copy_async(self, src_offset, dst, dst_offset, len, &after)? {
                // Counted here: the worker path counts in `copy_to`.
                super::stats::global().record(super::route_between(self, dst, len).kind, len);
                return Ok(Some(Event::native(
                    work,
                    vec![Arc::clone(self), Arc::clone(dst)],
                )));
            }
        }
        Ok(None)
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
