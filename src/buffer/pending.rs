//! Transfer modes (HAMR's `buffer_transfer`) and the moves still in flight.
//!
//! In [`Transfer::Async`] mode (HAMR's default) a move a buffer makes (a replica made
//! for an access, [`Buffer::copy_from`], [`Buffer::prefetch`], [`Buffer::move_to`])
//! is started and the call returns; the move's event is kept on every replica it reads
//! or writes. Whatever touches such a replica next is ordered after it: the next move
//! takes the events as dependencies (no host wait), a guard hands them out with its
//! native handle ([`ReadGuard::events`](super::ReadGuard::events): the consumer's own
//! work waits on them, HAMR's "the user's stream waits") and waits for them before it
//! hands out a host slice, and every other operation (reads into host memory, vector
//! operations, conversions, kernel launches) waits for them first. Nothing is ever
//! read before it has arrived.

use super::*;
use crate::core::region::Region;
use crate::runtime::event::Event;

/// How a buffer's moves complete (HAMR's `buffer_transfer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transfer {
    /// Every move is started and the call returns; events order what follows (HAMR's
    /// `async`, the default).
    #[default]
    Async,
    /// Moves into host memory complete before the call returns; others do not (HAMR's
    /// `sync_host`).
    SyncHost,
    /// Every move completes before the call returns (HAMR's `sync`).
    Sync,
}

/// A move in flight that touches a replica, whether it writes it, and where: the whole
/// replica, or one region of it (an MPI region message).
pub(super) struct Pending {
    pub(super) event: Event,
    pub(super) writes: bool,
    /// Set by the MPI layer's region messages alone.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(super) region: Option<Region>,
}

impl Pending {
    /// Work that reads the replica (or only orders after it).
    pub(super) fn reading(event: Event) -> Pending {
        Pending {
            event,
            writes: false,
            region: None,
        }
    }

    /// True when it touches a byte of `region` (work on the whole replica touches all).
    #[cfg(feature = "mpi")]
    pub(super) fn touches(&self, region: &Region) -> bool {
        self.region
            .as_ref()
            .is_none_or(|mine| crate::core::region::regions_overlap(mine, region))
    }
}

impl Replica {
    /// Waits for every move touching this replica. A failed move that wrote it leaves it
    /// stale; the first failure is the answer.
    pub(super) fn settle(&mut self) -> Result<()> {
        let mut stale = false;
        let first = std::mem::take(&mut self.pending)
            .into_iter()
            .map(|p| p.event.wait().inspect_err(|_| stale |= p.writes))
            .fold(Ok(()), Result::and);
        self.lose_if(stale);
        first
    }

    /// Marks the replica stale when `lost`: its data did not arrive.
    fn lose_if(&mut self, lost: bool) {
        if lost {
            self.valid = false;
            self.retired = None;
        }
    }

    /// Drops the moves that have finished. One that failed while writing this replica
    /// leaves it stale, even when nobody waited for its failure: a replica is never
    /// served from a move that did not arrive.
    pub(super) fn prune(&mut self) {
        let mut failed = None;
        self.pending.retain(|p| {
            let done = p.event.is_complete();
            if done && p.writes && p.event.wait().is_err() {
                failed.get_or_insert_with(|| p.event.clone());
            }
            !done
        });
        self.lose_if(failed.is_some());
        if self.failed.is_none() {
            self.failed = failed;
        }
    }

    /// The events of moves still running on this replica (finished ones are dropped,
    /// see [`Replica::prune`]).
    pub(super) fn events(&mut self) -> Vec<Event> {
        self.prune();
        self.pending.iter().map(|p| p.event.clone()).collect()
    }
}

/// Waits for every move on every replica (all of them, even after a failure). The first
/// failure is the answer, a failed move found finished earlier (and not yet reported by
/// a wait) included.
pub(super) fn settle_all(replicas: &mut [Replica]) -> Result<()> {
    let earlier = replicas
        .iter_mut()
        .filter_map(|r| r.failed.take())
        .map(|e| e.wait())
        .fold(Ok(()), Result::and);
    replicas
        .iter_mut()
        .map(Replica::settle)
        .fold(earlier, Result::and)
}

impl<T: Pod> Buffer<T> {
    /// The transfer mode.
    pub fn transfer(&self) -> Transfer {
        self.mode
    }

    /// Sets the transfer mode (HAMR's `set_transfer_asynchronous` and kin). Moves in
    /// flight continue; [`Buffer::synchronize`] waits for them.
    pub fn set_transfer(&mut self, mode: Transfer) {
        self.mode = mode;
    }

    /// The buffer in transfer mode `mode`.
    pub fn with_transfer(mut self, mode: Transfer) -> Self {
        self.mode = mode;
        self
    }

    /// Puts the buffer's moves on `queue` (HAMR's `buffer(alloc, stream, ...)` and
    /// `set_stream`): each starts after everything submitted there before (other
    /// buffers' moves, [`Memory::copy_to_async_on`] copies) and later work on the queue
    /// comes after it. Without a queue (the default) a move waits only for what it
    /// touches.
    pub fn with_queue(mut self, queue: crate::runtime::queue::Queue) -> Self {
        self.queue = Some(queue);
        self
    }

    /// Sets or clears the queue (see [`Buffer::with_queue`]).
    pub fn set_queue(&mut self, queue: Option<crate::runtime::queue::Queue>) {
        self.queue = queue;
    }

    /// The queue its moves go on, if any.
    pub fn queue(&self) -> Option<crate::runtime::queue::Queue> {
        self.queue
    }

    /// Waits for every move in flight (HAMR's `synchronize`), and with a queue
    /// ([`Buffer::with_queue`]) for everything submitted on it (HAMR's
    /// `cudaStreamSynchronize`; an adopted queue's native work too). A failed move is the
    /// error (one still running, or one that failed since the last `synchronize`, even
    /// if a guard's `wait` reported it already), and the replica it was writing is no
    /// longer current: the data is served from the last replica it did arrive at.
    pub fn synchronize(&self) -> Result<()> {
        self.settled().map(drop)?;
        self.queue.map_or(Ok(()), |q| q.wait())
    }

    /// Orders every later use of this buffer after `event` (the consumer's own work
    /// that reads or writes it, started on the user's queue): moves wait for it without
    /// blocking, host access waits for it.
    pub fn order_after(&self, event: &Event) {
        for r in self.lock().iter_mut() {
            r.pending.push(Pending::reading(event.clone()));
        }
    }

    /// The events of the moves still in flight on any replica.
    pub fn pending(&self) -> Vec<Event> {
        self.lock().iter_mut().flat_map(Replica::events).collect()
    }

    /// The events a guard at `location` on `replica` hands out: none in `Sync` mode (and
    /// in `SyncHost` mode at the host), where the access waits for them itself.
    pub(super) fn guard_events(
        &self,
        replica: &mut Replica,
        location: Location,
    ) -> Result<Vec<Event>> {
        if self.mode == Transfer::Sync || (self.mode == Transfer::SyncHost && location.is_host()) {
            replica.settle()?;
        }
        Ok(replica.events())
    }

    /// The replicas with every move on them finished: what operations that work on
    /// the memory directly start with.
    pub(super) fn settled(&self) -> Result<MutexGuard<'_, Vec<Replica>>> {
        let mut replicas = self.lock();
        settle_all(&mut replicas)?;
        Ok(replicas)
    }

    /// Copies `span` from `source` into `target` in this buffer's mode, after the moves
    /// in flight on both, counted in `stats` by the copy engine, on `plan` where the
    /// caller chose the source by it (else the engine plans it). Asynchronous: the event
    /// stays on both sides.
    pub(super) fn move_bytes(
        mode: Transfer,
        queue: Option<crate::runtime::queue::Queue>,
        source: &mut Replica,
        target: &mut Replica,
        span: CopySpan,
        stats: &TransferStats,
        plan: Option<Plan>,
    ) -> Result<Route> {
        let (from, to) = (Arc::clone(&source.memory), Arc::clone(&target.memory));
        if mode == Transfer::Sync || span.len == 0 {
            source.settle()?;
            target.settle()?;
            return match plan {
                Some(plan) => copy_on_plan(&from, &to, span, &plan, Some(stats)),
                None => from.copy_to_with(
                    span.src_offset,
                    &to,
                    span.dst_offset,
                    span.len,
                    crate::runtime::transfer::CopyOptions::counted(stats),
                ),
            };
        }
        let mut after = source.events();
        after.extend(target.events());
        let plan = plan.unwrap_or_else(|| plan_for(&from, &to, span.len));
        let route = plan.0.clone();
        let event = match queue {
            Some(q) => q.submit(&after, |deps| {
                start_copy(&from, &to, span, deps, Some(plan), Some(stats))
            })?,
            None => start_copy(&from, &to, span, &after, Some(plan), Some(stats))?,
        };
        Self::leave_pending(mode, source, target, event)?;
        Ok(route)
    }

    /// Copies `region` of `source` into the same region of `target` in this buffer's
    /// mode, after the moves in flight on both (one region copy: a section's move),
    /// counted in `stats`. Asynchronous: the event stays on both sides.
    pub(super) fn move_region(
        mode: Transfer,
        queue: Option<crate::runtime::queue::Queue>,
        source: &mut Replica,
        target: &mut Replica,
        region: &crate::core::region::Region,
        stats: &TransferStats,
    ) -> Result<()> {
        let (from, to) = (Arc::clone(&source.memory), Arc::clone(&target.memory));
        let bytes = region.bytes().unwrap_or(0);
        if mode == Transfer::Sync {
            source.settle()?;
            target.settle()?;
            from.copy_region_to(region, &to, region)?;
            crate::runtime::transfer::stats::count_local(RouteKind::Direct, bytes, stats);
            return Ok(());
        }
        let mut after = source.events();
        after.extend(target.events());
        let event = match queue {
            Some(q) => q.submit(&after, |deps| {
                from.copy_region_to_async(region, &to, region, deps)
            })?,
            None => from.copy_region_to_async(region, &to, region, &after)?,
        };
        crate::runtime::transfer::stats::count_local(RouteKind::Direct, bytes, stats);
        Self::leave_pending(mode, source, target, event)
    }

    /// Leaves a started move's `event` on both replicas (read from `source`, written to
    /// `target`), or waits for it where the mode completes a move into host memory
    /// before returning (`SyncHost`).
    fn leave_pending(
        mode: Transfer,
        source: &mut Replica,
        target: &mut Replica,
        event: Event,
    ) -> Result<()> {
        if mode == Transfer::SyncHost && target.location().is_host() {
            event.wait()?;
        } else {
            source.pending.push(Pending::reading(event.clone()));
            target.pending.push(Pending {
                event,
                writes: true,
                region: None,
            });
        }
        Ok(())
    }
}
