//! Moving the bytes of a [`Memory`] between ranks, by one of three [`Wire`]s, every wait
//! bounded by a time limit.
//!
//! - [`Wire::Mapped`]: the memory is host-visible in place (host memory, a mappable
//!   device buffer): MPI reads or writes it through a host mapping, no copy.
//! - [`Wire::DeviceAware`]: the device address goes to MPI as it is (a CUDA- or
//!   ROCm-aware MPI build).
//! - [`Wire::Staged`]: through two reused host chunks: the device copy of chunk k+1
//!   runs while chunk k is on the network (sending), and the device copy of chunk k
//!   while chunk k+1 arrives (receiving). Where the device lends its own mapped staging
//!   buffers ([`StagingViews::stage`]: WebGPU off unified memory), MPI sends from and receives
//!   into those instead, so that no host copy is made.
//!
//! [`StagingViews::stage`]: crate::core::capability::StagingViews::stage
//!
//! When a wait runs out of time, the requests still running are cancelled and freed, and
//! the memory they use is never freed (it is kept in a process-wide list), so a late
//! MPI write lands in memory nobody else owns.

use std::any::Any;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::result::{RawComm, Request, Status};
use crate::core::device::{StageWay, StagedView};
use crate::core::element::DType;
use crate::core::error::{Error, Result};
use crate::core::memory::Memory;
use crate::core::native::MemoryKind;

mod collective;

pub use collective::{
    allgather_small, allreduce_sum, barrier, bcast, gatherv, post_small_recv, post_small_send,
    Small,
};

/// How a rank's memory meets MPI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wire {
    /// MPI takes the device address itself (a device-aware MPI build).
    DeviceAware,
    /// The memory is host-visible in place: MPI uses it through a host mapping, no copy.
    Mapped,
    /// Through reused host chunks, the device copies overlapping the network.
    Staged,
}

impl Wire {
    /// Its name, as routes print it: `device-aware`, `mapped` or `staged`.
    pub fn name(self) -> &'static str {
        match self {
            Wire::DeviceAware => "device-aware",
            Wire::Mapped => "mapped",
            Wire::Staged => "staged",
        }
    }
}

impl std::fmt::Display for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The device address of `memory`, where MPI could take one (CUDA and HIP memory, but
/// not the stream-ordered pool's: see [`device_address_or_why`]).
pub fn device_address(memory: &Memory) -> Option<u64> {
    device_address_or_why(memory).ok()
}

/// The device address of `memory` for MPI, or why it has none that MPI could take: not
/// CUDA or HIP memory, or the stream-ordered pool's (MPI libraries export device
/// memory to their peers through `cuIpcGetMemHandle` / `hipIpcGetMemHandle`, which
/// refuse pool memory).
pub fn device_address_or_why(memory: &Memory) -> std::result::Result<u64, &'static str> {
    const POOL: &str = "stream-ordered pool memory, which MPI cannot export to its peers \
                        (cuIpcGetMemHandle refuses it)";
    const NONE: &str = "no device address an MPI library could take";
    // Device-aware MPI libraries take the memory of runtimes with IPC memory handles
    // (CUDA, HIP), by its device pointer.
    if memory.device().ipc_handles().is_none() {
        return Err(NONE);
    }
    if memory.native().memory_kind() == MemoryKind::StreamOrdered {
        return Err(POOL);
    }
    Ok(memory.native().address())
}

/// When a wait gives up.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// How long a wait may take (`None`: forever).
    pub limit: Option<Duration>,
    /// The rank that waits (for messages).
    pub rank: i32,
}

impl Limit {
    fn deadline(&self) -> Option<Instant> {
        self.limit.map(|l| Instant::now() + l)
    }

    fn expired(&self, call: &'static str, what: &str) -> Error {
        let secs = self.limit.map_or(0.0, |l| l.as_secs_f64());
        Error::Mpi {
            rank: self.rank,
            call,
            message: format!("{what} did not finish within {secs:.1} s"),
            hint: "the other rank may have died, or not made the matching call; raise the limit with \
                   LOCUS_MPI_TIMEOUT_S (seconds, 0 = no limit) or Comm::set_timeout if it is only slow"
                .into(),
        }
    }
}

/// Memory that MPI may still use after a wait gave up: kept for the life of the process.
fn bury(keep: Vec<Box<dyn Any + Send>>) {
    static GRAVEYARD: Mutex<Vec<Box<dyn Any + Send>>> = Mutex::new(Vec::new());
    GRAVEYARD
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(keep);
}

/// Requests in flight and what they use. Dropped with requests still running (an error
/// or a time limit), it cancels them and buries what they use.
struct Flight {
    slots: Vec<Option<Request>>,
    keep: Vec<Box<dyn Any + Send>>,
    /// The lent device staging view each slot's request uses, if any.
    views: Vec<Option<Box<dyn StagedView>>>,
    limit: Limit,
}

impl Flight {
    fn new(slots: usize, limit: Limit) -> Flight {
        Flight {
            slots: (0..slots).map(|_| None).collect(),
            keep: Vec::new(),
            views: (0..slots).map(|_| None).collect(),
            limit,
        }
    }

    fn keep(&mut self, thing: impl Any + Send) {
        self.keep.push(Box::new(thing));
    }

    /// Waits for the request in `slot` (if any) within the limit.
    fn wait(&mut self, slot: usize, what: &str) -> Result<Option<Status>> {
        let Some(request) = self.slots[slot].as_mut() else {
            return Ok(None);
        };
        let status = poll(request, self.limit, what)?;
        self.slots[slot] = None;
        Ok(Some(status))
    }

    fn wait_all(&mut self, what: &str) -> Result<()> {
        for slot in 0..self.slots.len() {
            self.wait(slot, what)?;
        }
        Ok(())
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        let mut running = false;
        for request in self.slots.iter_mut().filter_map(Option::take) {
            request.abandon();
            running = true;
        }
        if running {
            let mut keep = std::mem::take(&mut self.keep);
            keep.extend(
                self.views
                    .iter_mut()
                    .filter_map(Option::take)
                    .map(|v| Box::new(v) as Box<dyn Any + Send>),
            );
            bury(keep);
        }
    }
}

/// Polls `request` until it finishes or `limit` runs out: spins first, then yields the
/// core (other ranks may share it).
fn poll(request: &mut Request, limit: Limit, what: &str) -> Result<Status> {
    let deadline = limit.deadline();
    let mut spins = 0u32;
    loop {
        if let Some(status) = request.test()? {
            return Ok(status);
        }
        spins = spins.saturating_add(1);
        if spins > 64 {
            std::thread::yield_now();
        }
        if spins.is_multiple_of(64) && deadline.is_some_and(|d| Instant::now() > d) {
            return Err(limit.expired("MPI_Test", what));
        }
    }
}

/// The pieces of `bytes` in `piece`-byte steps: (offset, length).
fn pieces(bytes: usize, piece: usize) -> impl Iterator<Item = (usize, usize)> {
    let piece = piece.max(1);
    (0..bytes.div_ceil(piece)).map(move |k| {
        let at = k * piece;
        (at, piece.min(bytes - at))
    })
}

/// A host or device address of `bytes` of `memory` for MPI, and what keeps it valid.
fn address(
    memory: &Arc<Memory>,
    bytes: usize,
    wire: Wire,
    write: bool,
) -> Result<(*mut u8, Box<dyn Any + Send>)> {
    match wire {
        Wire::DeviceAware => {
            let ptr = device_address_or_why(memory).map_err(|why| {
                Error::Invalid(format!(
                    "{}: its memory is {why}; use the staged wire",
                    memory.location()
                ))
            })?;
            // This runs on a thread of locus's own (the transfer's), where no device
            // is current: a device-aware MPI library asks the driver about the pointer
            // (cuPointerGetAttribute, IPC export) and fails without one.
            memory.device().make_current()?;
            Ok((ptr as usize as *mut u8, Box::new(Arc::clone(memory))))
        }
        Wire::Mapped | Wire::Staged => {
            let mut mapping = memory.map(0..bytes, write)?;
            let ptr = match write {
                true => mapping.as_mut_slice()?.as_mut_ptr(),
                false => mapping.as_ptr().cast_mut(),
            };
            Ok((ptr, Box::new(mapping)))
        }
    }
}

/// The host addresses of the two staging chunks' first `piece` bytes, their mappings
/// kept in `flight`.
fn map_chunks(chunks: [Arc<Memory>; 2], piece: usize, flight: &mut Flight) -> Result<Vec<*mut u8>> {
    let mut hosts = Vec::with_capacity(2);
    for chunk in chunks {
        let mut mapping = chunk.map(0..piece, true)?;
        hosts.push(mapping.as_mut_slice()?.as_mut_ptr());
        flight.keep(mapping);
    }
    Ok(hosts)
}

/// Sends `bytes` of `memory` (from offset 0) to `dest` with `tag`, in pieces of
/// `piece` bytes (the receiver posts the same pieces). `chunks` are the two host chunks
/// of at least `piece` bytes a staged send goes through.
#[allow(clippy::too_many_arguments)]
pub fn send(
    comm: &RawComm,
    memory: &Arc<Memory>,
    bytes: usize,
    wire: Wire,
    piece: usize,
    chunks: Option<[Arc<Memory>; 2]>,
    dest: i32,
    tag: i32,
    limit: Limit,
) -> Result<()> {
    let what = format!("sending {bytes} bytes to rank {dest}");
    match (wire, chunks) {
        (Wire::Staged, _) if lends(memory, bytes, piece) => {
            send_lent(comm, memory, bytes, piece, dest, tag, limit, &what)
        }
        (Wire::Staged, Some(chunks)) => {
            let mut flight = Flight::new(2, limit);
            let hosts = map_chunks(chunks, piece, &mut flight)?;
            for (k, (at, len)) in pieces(bytes, piece).enumerate() {
                let slot = k % 2;
                flight.wait(slot, &what)?;
                // SAFETY: the chunk's mapping is kept in `flight` (valid, at least `piece`
                // bytes, and `len <= piece`), and no request uses this slot any more.
                let host = unsafe { std::slice::from_raw_parts_mut(hosts[slot], len) };
                memory.read(at, host)?;
                // SAFETY: the chunk stays valid and unwritten until the request finishes:
                // the next write to this slot waits for it, and `flight` buries the chunk
                // if it never does.
                flight.slots[slot] = Some(unsafe { comm.isend(hosts[slot], len, dest, tag)? });
            }
            flight.wait_all(&what)
        }
        _ => {
            let (ptr, keep) = address(memory, bytes, wire, false)?;
            let all: Vec<_> = pieces(bytes, piece).collect();
            let mut flight = Flight::new(all.len(), limit);
            flight.keep.push(keep);
            for (slot, (at, len)) in all.into_iter().enumerate() {
                // SAFETY: `ptr` addresses `bytes` bytes kept valid by `flight` (buried if a
                // request outlives it); the caller does not write the memory meanwhile.
                flight.slots[slot] =
                    Some(unsafe { comm.isend(ptr.wrapping_add(at), len, dest, tag)? });
            }
            flight.wait_all(&what)
        }
    }
}

/// Receives `bytes` into `memory` (from offset 0) from `source` with `tag`, in pieces
/// of `piece` bytes, calling `ready` once the first pieces are posted (the clear-to-send
/// the sender waits for).
#[allow(clippy::too_many_arguments)]
pub fn recv(
    comm: &RawComm,
    memory: &Arc<Memory>,
    bytes: usize,
    wire: Wire,
    piece: usize,
    chunks: Option<[Arc<Memory>; 2]>,
    source: i32,
    tag: i32,
    limit: Limit,
    ready: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let what = format!("receiving {bytes} bytes from rank {source}");
    let all: Vec<_> = pieces(bytes, piece).collect();
    match (wire, chunks) {
        (Wire::Staged, _) if lends(memory, bytes, piece) => {
            recv_lent(comm, memory, &all, source, tag, limit, ready, &what)
        }
        (Wire::Staged, Some(chunks)) => {
            let mut flight = Flight::new(2, limit);
            let hosts = map_chunks(chunks, piece, &mut flight)?;
            for (k, &(_, len)) in all.iter().enumerate().take(2) {
                // SAFETY: the chunk is kept valid by `flight` and used by no other request.
                flight.slots[k] = Some(unsafe { comm.irecv(hosts[k], len, source, tag)? });
            }
            ready()?;
            for (k, &(at, len)) in all.iter().enumerate() {
                let slot = k % 2;
                let got = flight.wait(slot, &what)?.map_or(0, |s| s.bytes);
                short(got, len, source, limit.rank)?;
                // SAFETY: the receive into this chunk finished, and nothing else uses it.
                let host = unsafe { std::slice::from_raw_parts(hosts[slot], len) };
                memory.write(at, host)?;
                if let Some(&(_, next)) = all.get(k + 2) {
                    // SAFETY: as above: the chunk is free again and kept valid by `flight`.
                    flight.slots[slot] =
                        Some(unsafe { comm.irecv(hosts[slot], next, source, tag)? });
                }
            }
            Ok(())
        }
        _ => {
            let (ptr, keep) = address(memory, bytes, wire, true)?;
            let mut flight = Flight::new(all.len(), limit);
            flight.keep.push(keep);
            for (slot, &(at, len)) in all.iter().enumerate() {
                // SAFETY: `ptr` addresses `bytes` writable bytes kept valid by `flight`; the
                // caller holds the memory exclusively meanwhile.
                flight.slots[slot] =
                    Some(unsafe { comm.irecv(ptr.wrapping_add(at), len, source, tag)? });
            }
            ready()?;
            for (slot, &(_, len)) in all.iter().enumerate() {
                let got = flight.wait(slot, &what)?.map_or(0, |s| s.bytes);
                short(got, len, source, limit.rank)?;
            }
            Ok(())
        }
    }
}

/// True when a staged message of `bytes` in `piece`-byte pieces goes through the
/// device's own staging views ([`StagingViews::stage`](crate::core::capability::StagingViews::stage):
/// WebGPU off unified memory), not host chunks: the device lends them for this memory,
/// and every piece's offset and length is a multiple of 4.
pub fn lends(memory: &Memory, bytes: usize, piece: usize) -> bool {
    bytes > 0
        && bytes.is_multiple_of(4)
        && piece.is_multiple_of(4)
        && memory.device().lends_staging(memory.native())
}

/// [`send`] through the device's lent staging views: the device copies piece k+1 into
/// one while MPI sends piece k from the other, and no host copy is made.
#[allow(clippy::too_many_arguments)]
fn send_lent(
    comm: &RawComm,
    memory: &Memory,
    bytes: usize,
    piece: usize,
    dest: i32,
    tag: i32,
    limit: Limit,
    what: &str,
) -> Result<()> {
    let mut flight = Flight::new(2, limit);
    for (k, (at, len)) in pieces(bytes, piece).enumerate() {
        let slot = k % 2;
        flight.wait(slot, what)?;
        if let Some(done) = flight.views[slot].take() {
            done.finish()?;
        }
        let view = lent(memory, at, len, StageWay::Out)?;
        // SAFETY: the view's mapping holds `len` readable bytes until it is finished,
        // which waits for this request (or `flight` buries the view if it never ends).
        flight.slots[slot] = Some(unsafe { comm.isend(view.host(), len, dest, tag)? });
        flight.views[slot] = Some(view);
    }
    flight.wait_all(what)?;
    flight
        .views
        .iter_mut()
        .filter_map(Option::take)
        .try_for_each(|v| v.finish())
}

/// [`recv`] through the device's lent staging views: MPI writes piece k+1 into one while
/// the device copies piece k out of the other, and no host copy is made.
#[allow(clippy::too_many_arguments)]
fn recv_lent(
    comm: &RawComm,
    memory: &Memory,
    all: &[(usize, usize)],
    source: i32,
    tag: i32,
    limit: Limit,
    ready: impl FnOnce() -> Result<()>,
    what: &str,
) -> Result<()> {
    let mut flight = Flight::new(2, limit);
    let post = |flight: &mut Flight, k: usize| -> Result<()> {
        let (at, len) = all[k];
        let view = lent(memory, at, len, StageWay::In)?;
        // SAFETY: the view's mapping holds `len` writable bytes until it is finished,
        // which happens only after this request (or `flight` buries the view).
        flight.slots[k % 2] = Some(unsafe { comm.irecv(view.host(), len, source, tag)? });
        flight.views[k % 2] = Some(view);
        Ok(())
    };
    for k in 0..all.len().min(2) {
        post(&mut flight, k)?;
    }
    ready()?;
    for (k, &(_, len)) in all.iter().enumerate() {
        let slot = k % 2;
        let got = flight.wait(slot, what)?.map_or(0, |s| s.bytes);
        short(got, len, source, limit.rank)?;
        if let Some(done) = flight.views[slot].take() {
            done.finish()?;
        }
        if k + 2 < all.len() {
            post(&mut flight, k + 2)?;
        }
    }
    // The device's copies out of the views are queued: the data is in place once they end.
    memory.device().synchronize()
}

/// A lent staging view of `len` bytes at `at` (a piece [`lends`] said yes to).
fn lent(memory: &Memory, at: usize, len: usize, way: StageWay) -> Result<Box<dyn StagedView>> {
    memory
        .device()
        .staging_views()
        .and_then(|views| views.stage(memory.native(), at, len, way))
        .unwrap_or_else(|| {
            Err(Error::Invalid(format!(
                "{}: the device said it lends staging views of this memory, then lent none for {len} bytes at {at}",
                memory.location()
            )))
        })
}

fn short(got: usize, want: usize, source: i32, rank: i32) -> Result<()> {
    if got == want {
        return Ok(());
    }
    Err(Error::Mpi {
        rank,
        call: "MPI_Irecv",
        message: format!("rank {source} sent a piece of {got} bytes where {want} were agreed"),
        hint:
            "the two ranks disagree on the message: a locus message and one of the program's own \
               raw MPI messages share a communicator and tag?"
                .into(),
    })
}
