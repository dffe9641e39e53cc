//! The buffer's memory handed out whole to code that moves it outside the buffer (the MPI
//! layer's sends and receives): the current data for reading, the home allocation to
//! overwrite, or the current one with the work on one region to wait for; and the event of that work kept
//! on the replica so that everything after it is ordered after it, as a buffer's own
//! moves are (see `pending`).

use super::*;
use crate::core::region::Region;
use crate::runtime::event::Event;

impl<T: Pod> Buffer<T> {
    /// The allocation holding the current data, every move on it finished: a current
    /// replica the host reaches in place if there is one (the home one first), else the
    /// home one if current, else any current one.
    pub(crate) fn hand_out_current(&self) -> Result<Arc<Memory>> {
        let replicas = self.settled()?;
        let i = self.current_for_hand_out(&replicas)?;
        Ok(Arc::clone(&replicas[i].memory))
    }

    /// The allocation [`Buffer::hand_out_current`] picks, without waiting: the events of
    /// the work in flight that writes bytes of `region` there, for a reader of that region
    /// to wait for (work on other regions goes on: a halo arriving in one region does not
    /// hold up the send of another).
    pub(crate) fn hand_out_region(&self, region: &Region) -> Result<(Arc<Memory>, Vec<Event>)> {
        let replicas = self.lock();
        let i = self.current_for_hand_out(&replicas)?;
        let after = replicas[i]
            .pending
            .iter()
            .filter(|p| p.writes && p.touches(region))
            .map(|p| p.event.clone())
            .collect();
        Ok((Arc::clone(&replicas[i].memory), after))
    }

    fn current_for_hand_out(&self, replicas: &[Replica]) -> Result<usize> {
        let home = self.home;
        let rank = |r: &Replica| {
            let host = r.memory.host_access() != HostAccess::None;
            match (host, r.location() == home) {
                (true, true) => 0,
                (true, false) => 1,
                (false, true) => 2,
                (false, false) => 3,
            }
        };
        (0..replicas.len())
            .filter(|&i| replicas[i].valid)
            .min_by_key(|&i| rank(&replicas[i]))
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "a buffer of {} elements at {home} holds no current data (a move into it failed)",
                    self.len
                ))
            })
    }

    /// The home allocation, made the only current copy, every move on the buffer
    /// finished: for work that overwrites the whole data (nothing is copied there first).
    pub(crate) fn hand_out_for_overwrite(&mut self) -> Result<Arc<Memory>> {
        let home = self.home;
        let mut replicas = self.settled()?;
        let i = replicas
            .iter()
            .position(|r| r.location() == home)
            .ok_or_else(|| {
                Error::Invalid(format!("the buffer's home replica at {home} is gone"))
            })?;
        only_current(&mut replicas, i);
        Ok(Arc::clone(&replicas[i].memory))
    }

    /// The replica a write of `region` lands in (the home one if current, else a current
    /// one), made the only current copy, without waiting: the events of the work in
    /// flight on it that touches bytes of `region`, for the writer to wait for (an MPI
    /// region receive; work on other regions goes on).
    pub(crate) fn hand_out_for_region_write(
        &mut self,
        region: &Region,
    ) -> Result<(Arc<Memory>, Vec<Event>)> {
        let mut replicas = self.lock();
        let i = self.write_target(&replicas)?;
        only_current(&mut replicas, i);
        let after = replicas[i]
            .pending
            .iter()
            .filter(|p| p.touches(region))
            .map(|p| p.event.clone())
            .collect();
        Ok((Arc::clone(&replicas[i].memory), after))
    }

    /// Keeps `event` of work on `region` of the replica in `memory` (one
    /// [`Buffer::hand_out_region`] or [`Buffer::hand_out_for_region_write`] gave): work
    /// on the whole buffer, or on a region that shares bytes with it, waits for it; if it
    /// `writes` and fails, the replica is stale.
    pub(crate) fn keep_pending_region(
        &self,
        memory: &Arc<Memory>,
        event: Event,
        writes: bool,
        region: Region,
    ) {
        let mut replicas = self.lock();
        if let Some(r) = replicas.iter_mut().find(|r| Arc::ptr_eq(&r.memory, memory)) {
            r.pending.push(pending::Pending {
                event,
                writes,
                region: Some(region),
            });
        }
    }

    /// Keeps `event` on the replica in `memory` (one [`Buffer::hand_out_current`] or
    /// [`Buffer::hand_out_for_overwrite`] gave): what touches it next waits for it, and if it
    /// `writes` and fails, the replica is stale (nothing half-arrived is ever read).
    pub(crate) fn keep_pending(&self, memory: &Arc<Memory>, event: Event, writes: bool) {
        let mut replicas = self.lock();
        if let Some(r) = replicas.iter_mut().find(|r| Arc::ptr_eq(&r.memory, memory)) {
            r.pending.push(pending::Pending {
                event,
                writes,
                region: None,
            });
        }
    }

    /// Marks the replica in `memory` stale after work that wrote it failed with `why`
    /// (its data did not all arrive): the buffer falls back to the newest retired copy.
    pub(crate) fn mark_lost(&self, memory: &Arc<Memory>, why: &Error) {
        let (event, trigger) = Event::user();
        trigger.fail_with(why.clone());
        self.keep_pending(memory, event, true);
    }
}
