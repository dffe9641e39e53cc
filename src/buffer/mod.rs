//! [`Buffer<T>`]: a typed array whose producer says where it is made and whose consumers
//! say where they will use it. Replicas are cached and tracked: a second read at the
//! same place costs nothing, a write makes the writer's copy the only valid one, and
//! nothing moves until someone reads elsewhere.

mod construct;
pub(crate) mod convert;
pub(crate) mod convert_kernels;
mod guard;
#[cfg(feature = "mpi")]
mod hand_out;
mod pending;
mod regions;
mod replicas;
mod scalar;
mod section;
mod vector;
mod view;

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use bytemuck::Pod;

pub use guard::{ReadGuard, WriteGuard};
pub use pending::Transfer;
pub use scalar::Scalar;
pub use section::{Section, Triplet};
pub use view::{BufferView, BufferViewMut};

use replicas::*;

use crate::core::copy_span::CopySpan;
use crate::core::device::HostAccess;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::Native;
use crate::core::route::{Route, RouteKind};
use crate::runtime::event::Event;
use crate::runtime::transfer::matrix::Plan;
use crate::runtime::transfer::stats::{self, TransferStats, TransferTotals};
use crate::runtime::transfer::{copy_on_plan, plan_for, start_copy};

/// A typed, location-aware array with coherent replicas.
///
/// Asynchronous by default, as HAMR's buffer is ([`Transfer::Async`]): a move it makes
/// returns at once, and whatever uses the data afterwards is ordered after the move
/// (host views wait; a guard's [`ReadGuard::events`] are what your own kernel waits
/// for). [`Buffer::with_transfer`] picks [`Transfer::Sync`] or [`Transfer::SyncHost`].
///
/// ```
/// use locus::{Buffer, Location};
/// // Made on the host; read back anywhere.
/// let b = Buffer::from_slice(Location::Host, &[1.0f32, 2.0, 3.0])?;
/// let view = b.access(Location::Host)?;
/// assert_eq!(view.as_slice()?, &[1.0, 2.0, 3.0]);
/// # Ok::<(), locus::Error>(())
/// ```
pub struct Buffer<T: Pod> {
    len: usize,
    /// Elements the home replica's allocation holds (at least `len`).
    capacity: usize,
    home: Location,
    replicas: Mutex<Vec<Replica>>,
    mode: Transfer,
    /// The queue its moves go on in order (HAMR's stream), or none: each move after the
    /// ones it depends on only.
    queue: Option<crate::runtime::queue::Queue>,
    /// On an adopted queue: the marker of the user's work last taken (see `lock`).
    marker: Mutex<Option<Event>>,
    kind: crate::core::native::MemoryKind,
    stats: TransferStats,
    _marker: PhantomData<T>,
}

impl<T: Pod> Buffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the producer made it (its home; changed by [`Buffer::move_to`]).
    pub fn location(&self) -> Location {
        self.home
    }

    /// What this buffer's own transfers moved, per route kind.
    pub fn stats(&self) -> TransferTotals {
        self.stats.totals()
    }

    /// Every replica: its location and whether it holds the current data.
    pub fn replicas(&self) -> Vec<(Location, bool)> {
        self.lock()
            .iter()
            .map(|r| (r.location(), r.valid))
            .collect()
    }

    /// The allocation holding a copy at `location`, valid or not (for inspection: tests
    /// use it to prove that an access was served from the buffer's own memory).
    /// Waits for the moves in flight on it first (a failed one is reported by the next
    /// operation that waits, e.g. [`Buffer::synchronize`]).
    pub fn memory_at(&self, location: Location) -> Option<Arc<Memory>> {
        let mut replicas = self.lock();
        let r = replicas.iter_mut().find(|r| r.location() == location)?;
        for p in &r.pending {
            let _ = p.event.wait();
        }
        Some(Arc::clone(&r.memory))
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Replica>> {
        // A panic while the lock was held cannot leave the list half-updated in a way
        // that loses data (entries are only flipped or pushed), so recover the guard.
        let mut replicas = self.replicas.lock().unwrap_or_else(|e| e.into_inner());
        // Moves that failed since the last look leave their targets stale.
        replicas.iter_mut().for_each(Replica::prune);
        recover(&mut replicas);
        // On a queue adopted from a user: whatever comes next follows the user's work
        // there so far (their kernel may write this buffer in place). A new marker covers
        // everything an earlier one did (the user's queue runs it after all work before
        // it): the earlier is dropped, so that a long kernel of theirs piles none up.
        if let Some(marker) = self.queue.and_then(|q| q.foreign_marker()) {
            let mut last = self.marker.lock().unwrap_or_else(|e| e.into_inner());
            for r in replicas.iter_mut() {
                if let Some(old) = last.as_ref() {
                    r.pending.retain(|p| p.event != *old);
                }
                r.pending.push(pending::Pending::reading(marker.clone()));
            }
            *last = Some(marker);
        }
        replicas
    }

    /// Makes current data usable at `location` and returns the replica index serving
    /// it and how it was served. `exact` forces the replica to live at `location`.
    fn serve(
        &self,
        replicas: &mut Vec<Replica>,
        location: Location,
        exact: bool,
    ) -> Result<(usize, Route)> {
        crate::runtime::registry::registry().device(location)?;
        let bytes = bytes_of::<T>(self.len)?;
        let in_place = |reason: &str| Route {
            src: location,
            dst: location,
            kind: RouteKind::InPlace,
            reason: reason.into(),
        };
        let usable = match exact {
            true => current_at(replicas, location),
            false => current_usable_at(replicas, location),
        };
        if let Some(i) = usable {
            stats::count_local(RouteKind::InPlace, bytes, &self.stats);
            if replicas[i].location() == location {
                return Ok((i, in_place("valid replica already there")));
            }
            let reason =
                crate::runtime::access::memory_accessibility(&replicas[i].memory, location).1;
            let mut route = in_place(&reason);
            route.src = replicas[i].location();
            return Ok((i, route));
        }
        let target = match replicas
            .iter()
            .position(|r| r.location() == location && r.memory.len() >= bytes)
        {
            Some(i) => i,
            None => {
                replicas.push(Replica::new(Self::allocate(location, self.len)?, false));
                replicas.len() - 1
            }
        };
        let (source, plan) = self.cheapest_source_for(replicas, &replicas[target].memory, bytes)?;
        let (from, to) = two_mut(replicas, source, target);
        let span = CopySpan::whole(bytes);
        let route = Self::move_bytes(
            self.mode,
            self.queue,
            from,
            to,
            span,
            &self.stats,
            Some(plan),
        )?;
        replicas[target].make_current();
        Ok((target, route))
    }

    /// Declares a read at `location`: served in place when the current data is
    /// accessible from there, otherwise from a cached replica made (once) at
    /// `location`. The guard borrows the buffer shared: no write can happen meanwhile.
    pub fn access(&self, location: Location) -> Result<ReadGuard<'_, T>> {
        self.read_guard(location, false)
    }

    /// Declares a write at `location` (read-modify-write: the current data is there
    /// first). The serving copy becomes the only valid one; nothing is written back
    /// until someone reads elsewhere.
    pub fn access_mut(&mut self, location: Location) -> Result<WriteGuard<'_, T>> {
        let (memory, route, events) = self.serve_for_write_at(location, false)?;
        WriteGuard::new(memory, location, route, self.len, events)
    }

    /// [`Buffer::access`] served by memory at `location` itself (a replica made and
    /// filled there when the current data lives elsewhere, even where `location` could
    /// use it in place): for code that needs `location`'s own handle, such as a host
    /// pointer where the data is an OpenCL buffer the host maps.
    pub fn access_at(&self, location: Location) -> Result<ReadGuard<'_, T>> {
        self.read_guard(location, true)
    }

    /// A read guard at `location`, served by memory there itself when `exact`.
    fn read_guard(&self, location: Location, exact: bool) -> Result<ReadGuard<'_, T>> {
        let mut replicas = self.lock();
        let (i, route) = self.serve(&mut replicas, location, exact)?;
        let events = self.guard_events(&mut replicas[i], location)?;
        ReadGuard::new(
            Arc::clone(&replicas[i].memory),
            location,
            route,
            self.len,
            events,
        )
    }

    /// [`Buffer::access_mut`] served by memory at `location` itself (see
    /// [`Buffer::access_at`]).
    pub fn access_mut_at(&mut self, location: Location) -> Result<WriteGuard<'_, T>> {
        let (memory, route, events) = self.serve_for_write_at(location, true)?;
        WriteGuard::new(memory, location, route, self.len, events)
    }

    /// Declares a write at `location` as [`Buffer::access_mut`] does (the current data
    /// is there first, that copy becomes the only valid one), without handing out a
    /// guard: for code that writes through a handle it already holds (the Python
    /// bindings' open write handles).
    pub fn declare_write(&mut self, location: Location) -> Result<Route> {
        let (_, route, events) = self.serve_for_write_at(location, false)?;
        for e in events {
            e.wait()?;
        }
        Ok(route)
    }

    /// Makes the copy in `memory` (the allocation a write access served) the only current
    /// one again: for code that keeps writing through a handle after other reads of the
    /// buffer made copies elsewhere (the Python bindings' open write handles, re-declared
    /// before each operation and once more after they close). Returns false, changing
    /// nothing, when `memory` no longer holds a copy of this buffer.
    pub fn declare_written(&mut self, memory: &Arc<Memory>) -> bool {
        let mut replicas = self.lock();
        match replicas.iter().position(|r| Arc::ptr_eq(&r.memory, memory)) {
            Some(i) => {
                only_current(&mut replicas, i);
                true
            }
            None => false,
        }
    }

    fn serve_for_write_at(
        &mut self,
        location: Location,
        exact: bool,
    ) -> Result<(Arc<Memory>, Route, Vec<Event>)> {
        let mut replicas = self.lock();
        let (i, route) = self.serve(&mut replicas, location, exact)?;
        only_current(&mut replicas, i);
        let events = self.guard_events(&mut replicas[i], location)?;
        Ok((Arc::clone(&replicas[i].memory), route, events))
    }

    /// Serves current data at `location` (as [`Buffer::access`]) and returns the serving
    /// allocation, for kernel launches, with the moves the kernel must wait for.
    pub(crate) fn serve_read(&self, location: Location) -> Result<(Arc<Memory>, Vec<Event>)> {
        let mut replicas = self.lock();
        let (i, _) = self.serve(&mut replicas, location, false)?;
        let events = replicas[i].events();
        Ok((Arc::clone(&replicas[i].memory), events))
    }

    /// Serves `location` for writing and makes the serving copy the only valid one. With
    /// `keep` false (an `out` argument) nothing is uploaded: the serving memory is an
    /// existing copy usable there, or a new allocation, and its old contents are kept
    /// only where the writer does not overwrite them.
    pub(crate) fn serve_write(
        &mut self,
        location: Location,
        keep: bool,
    ) -> Result<(Arc<Memory>, Vec<Event>)> {
        let mut replicas = self.lock();
        let i = if keep {
            self.serve(&mut replicas, location, false)?.0
        } else {
            // Written only (out): an existing copy usable there, or a new allocation;
            // nothing is uploaded.
            crate::runtime::registry::registry().device(location)?;
            let bytes = bytes_of::<T>(self.len)?;
            let fits = |r: &Replica| r.memory.len() >= bytes;
            let found = replicas
                .iter()
                .position(|r| r.location() == location && fits(r))
                .or_else(|| {
                    replicas
                        .iter()
                        .position(|r| r.memory.is_accessible_from(location) && fits(r))
                });
            match found {
                Some(i) => i,
                None => {
                    replicas.push(Replica::new(Self::allocate(location, self.len)?, false));
                    replicas.len() - 1
                }
            }
        };
        only_current(&mut replicas, i);
        // Every move touching the replica (reads of it included) goes before the writer.
        let events = replicas[i].events();
        Ok((Arc::clone(&replicas[i].memory), events))
    }

    /// Serves the copy at `location` as it is, moving nothing (OpenHMPP's `noupdate`:
    /// the caller asserts that copy is current). Current data usable there is served as
    /// [`Buffer::access`] would; otherwise the copy at `location`, even a stale one, is
    /// served unchecked. With `write` that copy becomes the only current one. No copy
    /// at `location` is an error: there is nothing to use as it is.
    pub(crate) fn serve_as_is(
        &self,
        location: Location,
        write: bool,
    ) -> Result<(Arc<Memory>, Vec<Event>)> {
        crate::runtime::registry::registry().device(location)?;
        let bytes = bytes_of::<T>(self.len)?;
        let mut replicas = self.lock();
        let i = current_usable_at(&replicas, location)
            .or_else(|| {
                replicas
                    .iter()
                    .position(|r| r.location() == location && r.memory.len() >= bytes)
            })
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "noupdate: the buffer has no copy at {location} to use as it is; load it there first (advanced_load), or drop noupdate"
                ))
            })?;
        stats::count_local(RouteKind::InPlace, bytes, &self.stats);
        if write {
            only_current(&mut replicas, i);
        }
        let events = replicas[i].events();
        Ok((Arc::clone(&replicas[i].memory), events))
    }

    /// Makes the current data valid at `location` ahead of use there (OpenHMPP's
    /// `advancedload`); later reads there cost nothing. In [`Transfer::Async`] mode the
    /// move is started and this returns; whatever uses the data there waits for it.
    pub fn prefetch(&self, location: Location) -> Result<Route> {
        let mut replicas = self.lock();
        self.serve(&mut replicas, location, false)
            .map(|(_, route)| route)
    }

    /// The elements, copied to a new host `Vec`.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = crate::core::host_memory::zeroed_vec(self.len, "Buffer::to_vec")?;
        self.get(0, &mut out)?;
        Ok(out)
    }

    /// The valid replica the host reads most cheaply (one it reaches in place, if any).
    fn host_source(replicas: &[Replica]) -> Result<usize> {
        replicas
            .iter()
            .enumerate()
            .filter(|(_, r)| r.valid)
            .min_by_key(|(_, r)| r.memory.host_access() == HostAccess::None)
            .map(|(i, _)| i)
            .ok_or_else(|| Error::Invalid("internal: buffer has no valid replica".into()))
    }

    /// The valid replica a write lands in: the home one if valid, else any valid one.
    fn write_target(&self, replicas: &[Replica]) -> Result<usize> {
        replicas
            .iter()
            .position(|r| r.valid && r.location() == self.home)
            .or_else(|| replicas.iter().position(|r| r.valid))
            .ok_or_else(|| Error::Invalid("internal: buffer has no valid replica".into()))
    }

    /// Counts a host read or write of `bytes` at `memory`, for this buffer and the
    /// process: in place when the memory is the host's, a direct copy otherwise.
    fn count_host_io(&self, memory: &Memory, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let kind = if memory.location().is_host() {
            RouteKind::InPlace
        } else {
            RouteKind::Direct
        };
        stats::count(kind, bytes, Some(&self.stats));
    }

    /// The valid replica a move of `bytes` into `target` is cheapest from, and the plan
    /// the move then takes (planned once: the copy engine is handed it).
    fn cheapest_source_for(
        &self,
        replicas: &[Replica],
        target: &Memory,
        bytes: usize,
    ) -> Result<(usize, Plan)> {
        replicas
            .iter()
            .enumerate()
            .filter(|(_, r)| r.valid)
            .map(|(i, r)| (i, plan_for(&r.memory, target, bytes)))
            .min_by_key(|(_, plan)| plan.0.kind)
            .ok_or_else(|| Error::Invalid("internal: buffer has no valid replica".into()))
    }

    /// Relocates the buffer: the data ends up in memory at `location`, which becomes the
    /// home; every other replica is freed.
    pub fn move_to(&mut self, location: Location) -> Result<()> {
        let mut replicas = self.lock();
        let (i, _) = self.serve(&mut replicas, location, true)?;
        let keep = replicas.swap_remove(i);
        let capacity = elements_in::<T>(&keep.memory);
        *replicas = vec![keep];
        drop(replicas);
        self.home = location;
        self.capacity = capacity;
        self.kind = crate::core::native::MemoryKind::Default;
        Ok(())
    }

    /// A new buffer at `location` holding a copy of these elements.
    pub fn to_location(&self, location: Location) -> Result<Buffer<T>> {
        let memory = Self::allocate(location, self.len)?;
        let bytes = bytes_of::<T>(self.len)?;
        {
            let replicas = self.settled()?;
            let (source, plan) = self.cheapest_source_for(&replicas, &memory, bytes)?;
            let span = CopySpan::whole(bytes);
            copy_on_plan(
                &replicas[source].memory,
                &memory,
                span,
                &plan,
                Some(&self.stats),
            )?;
        }
        let mut copy = Self::with_memory(memory, self.len).with_transfer(self.mode);
        copy.queue = self.queue;
        Ok(copy)
    }

    /// Copies `src[src_range]` into `self[dst_start..]`, wherever each lives, on the
    /// route the transfer matrix picks. Bounds-checked: out of range is an error and
    /// nothing is written.
    pub fn copy_from(
        &mut self,
        dst_start: usize,
        src: &Buffer<T>,
        src_range: Range<usize>,
    ) -> Result<Route> {
        let count = src.check_source(&src_range)?;
        self.check_range(dst_start, count, "copy destination")?;
        let size = std::mem::size_of::<T>();
        let mut src_replicas = src.lock();
        let mut replicas = self.lock();
        let target = self.write_target(&replicas)?;
        let bytes = count * size;
        let (source, plan) =
            src.cheapest_source_for(&src_replicas, &replicas[target].memory, bytes)?;
        let span = CopySpan {
            src_offset: src_range.start * size,
            dst_offset: dst_start * size,
            len: bytes,
        };
        let route = Self::move_bytes(
            self.mode,
            self.queue,
            &mut src_replicas[source],
            &mut replicas[target],
            span,
            &self.stats,
            Some(plan),
        )?;
        only_current(&mut replicas, target);
        Ok(route)
    }

    /// Copies `self[src_range]` into `dst[dst_start..]` (see [`Buffer::copy_from`]).
    pub fn copy_to(
        &self,
        src_range: Range<usize>,
        dst: &mut Buffer<T>,
        dst_start: usize,
    ) -> Result<Route> {
        dst.copy_from(dst_start, self, src_range)
    }
}

impl<T: Pod> Drop for Buffer<T> {
    /// Never blocks: each replica's memory goes back to its resource (or its device) in
    /// stream order, once the moves in flight on it are done (RMM's `device_uvector`,
    /// HAMR's asynchronous buffers). A replica with none goes at once. A failed move has
    /// no one left to tell.
    fn drop(&mut self) {
        let replicas = std::mem::take(self.replicas.get_mut().unwrap_or_else(|e| e.into_inner()));
        for replica in replicas {
            let mut running = replica
                .pending
                .into_iter()
                .map(|p| p.event)
                .filter(|e| !e.is_complete());
            let Some(first) = running.next() else {
                continue;
            };
            let rest: Vec<Event> = running.collect();
            let memory = replica.memory;
            crate::runtime::event::when_done(first, move || {
                for e in rest {
                    let _ = e.wait();
                }
                drop(memory);
            });
        }
    }
}

impl<T: Pod> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("len", &self.len)
            .field("capacity", &self.capacity)
            .field("home", &self.home)
            .field("replicas", &self.replicas())
            .finish()
    }
}

#[cfg(test)]
#[path = "plan_once_tests.rs"]
mod plan_once_tests;
