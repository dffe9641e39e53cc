//! Ranges given back while work may still use them (stream order, RMM's
//! `stream_ordered_memory_resource`): reused at once on their own queue, on another
//! queue with that queue's work ordered after the work's event (no host wait), and
//! waited for on the host only when nothing else fits.

use super::*;

impl State {
    /// A pending range that holds `need` (the smallest) of `queue` (`same`) or of any
    /// other queue, with the event of the work still using it; its remainder stays
    /// pending with the same event.
    pub(super) fn take_pending(
        &mut self,
        queue: Queue,
        same: bool,
        need: usize,
    ) -> Option<(u32, Event)> {
        let k = self
            .pending
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                (p.queue == queue) == same && self.ranges[p.range as usize].len >= need
            })
            .min_by_key(|(_, p)| self.ranges[p.range as usize].len)
            .map(|(k, _)| k)?;
        let p = self.pending.swap_remove(k);
        if let Some(rest) = self.split(p.range, need) {
            self.pending.push(Pending {
                range: rest,
                queue: p.queue,
                event: p.event.clone(),
            });
        }
        Some((p.range, p.event))
    }

    /// Notes that range `i`, handed out on `queue`, may still be used by the work of
    /// `event` (it was pending): given back, it is pending again, never free. The event
    /// is not asked here: asking it may let go of memory that comes back to this pool,
    /// whose lock the caller holds.
    pub(super) fn hand_out_busy(&mut self, i: u32, queue: Queue, event: Event) {
        self.busy.push(Pending {
            range: i,
            queue,
            event,
        });
    }

    /// The earlier work still using range `i` (handed out busy), if any: taken out.
    pub(super) fn take_busy(&mut self, i: u32) -> Option<Pending> {
        let k = self.busy.iter().position(|b| b.range == i)?;
        Some(self.busy.swap_remove(k))
    }
}

impl Pool {
    /// Gives back every pending range whose work is done (`wait`: waits for all).
    /// The events are asked without the pool's lock held (waiting, or memory their
    /// completion lets go, must not stall or re-enter the pool), so the lock is given up
    /// meanwhile and a new guard returned.
    pub(super) fn reclaim<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        wait: bool,
    ) -> MutexGuard<'a, State> {
        if state.pending.is_empty() {
            return state;
        }
        let pending = std::mem::take(&mut state.pending);
        drop(state);
        let (done, still): (Vec<Pending>, Vec<Pending>) = pending
            .into_iter()
            .partition(|p| p.event.is_complete() || (wait && p.event.wait().is_ok()));
        let ranges: Vec<u32> = done.iter().map(|p| p.range).collect();
        drop(done);
        let mut state = self.lock();
        for range in ranges {
            state.give(range);
        }
        state.pending.extend(still);
        state
    }
}

/// Waits for the pending work, as RMM's pool synchronises before it frees.
impl Drop for Pool {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        for p in std::mem::take(&mut state.pending) {
            if p.event.wait().is_ok() {
                state.give(p.range);
            }
        }
        if state.live > 0 {
            // Blocks still out keep their chunks: leak them rather than free memory in use.
            eprintln!(
                "locus: pool at {} dropped with {} blocks still allocated",
                self.upstream.location(),
                state.live
            );
            return;
        }
        for chunk in state.chunks.drain(..).flatten() {
            self.upstream.deallocate(chunk.block);
        }
    }
}
