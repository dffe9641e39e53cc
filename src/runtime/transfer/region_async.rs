//! Region copies started after events ([`Memory::copy_region_to_async`]): checked at
//! once, run on a worker thread.

use std::sync::Arc;

use super::region_copy::{check_regions, copy_region};
use super::region_route::RegionVia;
use crate::core::error::Result;
use crate::core::memory::Memory;
use crate::core::region::Region;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;
use crate::runtime::worker;

impl Memory {
    /// Starts [`Memory::copy_region_to`] after `after` and returns its event at once.
    /// Both regions are checked now: a bad region is an error and starts nothing. The
    /// copy runs on a worker thread, on the planner's route, after a host wait on
    /// `after`; both memories stay alive until it is done, whatever the caller drops.
    pub fn copy_region_to_async(
        self: &Arc<Self>,
        src_region: &Region,
        dst: &Arc<Memory>,
        dst_region: &Region,
        after: &[Event],
    ) -> Result<Event> {
        check_regions(self, src_region, dst, dst_region)?;
        let (src, dst) = (Arc::clone(self), Arc::clone(dst));
        let (sr, dr) = (*src_region, *dst_region);
        let deps: Vec<Event> = after.to_vec();
        let ready = deps.iter().all(Event::is_complete);
        let (event, done) = Event::user();
        let job = move || {
            let copy = || -> Result<()> {
                deps.iter().try_for_each(Event::wait)?;
                copy_region(&src, &sr, &dst, &dr, RegionVia::Planner).map(drop)
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(copy));
            // The memory is let go before the event says done.
            drop((src, dst, deps));
            match outcome {
                Ok(Ok(())) => done.complete(),
                Ok(Err(e)) => done.fail_with(e),
                Err(_) => done.fail("the asynchronous region copy's worker panicked"),
            }
        };
        if ready {
            worker::run(job)?;
        } else {
            worker::run_waiting(job)?;
        }
        Ok(event)
    }

    /// [`Memory::copy_region_to_async`] on `queue`: it starts after everything submitted
    /// on that queue before (and after `after`), and later work on the queue runs after
    /// it.
    pub fn copy_region_to_async_on(
        self: &Arc<Self>,
        queue: Queue,
        src_region: &Region,
        dst: &Arc<Memory>,
        dst_region: &Region,
        after: &[Event],
    ) -> Result<Event> {
        queue.submit(after, |deps| {
            self.copy_region_to_async(src_region, dst, dst_region, deps)
        })
    }
}
