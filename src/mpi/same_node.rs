//! Ranks on one node (issue 45, item 4): a message of at least [`MIN_BYTES`] between two
//! ranks that map each other's shared memory goes through host memory both map
//! ([`Memory::new_shared`]) instead of MPI's transport: the sender's memory itself when it
//! was made shared (the receiver's copy out of it is the only copy), else a window of the
//! sender's that the data is copied into (one copy out of the sender's memory at its
//! location, one into the receiver's at its own: no staging chunks, no MPI copies).
//!
//! Which peers qualify is tested, not assumed: when the communicator is made every rank
//! makes a small shared object and publishes its handle, and each opens those of the
//! ranks on its host; only the ones it opened count (containers on one host may not share
//! `/dev/shm`). The sender offers the path in its header; the receiver accepts it or
//! answers with its own piece size, and the message takes the usual wires.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::backends::host::ipc::IpcHandle;
use crate::backends::mpi::result::RawComm;
use crate::backends::mpi::wire::{self, Limit};
use crate::core::config;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::registration::HostRegistration;
use crate::runtime::register_host_memory;

/// The piece size a header carries to offer the same-node path, and an answer to
/// accept it (no real piece is 0 bytes).
pub(super) const OFFER: u64 = 0;

/// Messages below this go through MPI (its latency is lower for small ones).
pub(super) const MIN_BYTES: usize = 64 << 10;

/// Bytes of one rank's record in the probe, and the most a handle's text takes.
const RECORD: usize = 256;

/// Windows of other ranks kept open here for their next messages.
const OPENED_KEPT: usize = 64;

/// Shared memory kept for many messages, registered in place with the runtimes whose
/// copies need page-locked memory for DMA (CUDA, HIP: none elsewhere), so that a GPU
/// copies into and out of it at the speed of its own pinned memory.
struct Pinned {
    /// Dropped (unregistered) before the memory is unmapped.
    _registrations: Vec<HostRegistration>,
    memory: Arc<Memory>,
}

impl Pinned {
    fn new(memory: Memory) -> Result<Pinned> {
        let ptr = memory.native().address() as *mut u8;
        // SAFETY: the mapping of `memory` (host memory at `ptr`, `len` bytes) stays until
        // the memory is dropped, after the registrations (field order); copies in flight
        // are waited for by the calls that make them.
        let registrations = unsafe { register_host_memory(ptr, memory.len()) }?;
        Ok(Pinned {
            _registrations: registrations,
            memory: Arc::new(memory),
        })
    }
}

/// The same-node path offered for one message: the handle of the sender's own shared
/// pages, or `None` (a window of the sender's carries the bytes).
pub(super) struct Offer {
    shared: Option<IpcHandle>,
}

/// This rank's view of the ranks on its node.
pub(super) struct SameNode {
    /// Per rank: whether this rank opened its probe (itself: false).
    reachable: Vec<bool>,
    /// `LOCUS_MPI_SAME_NODE=ipc` (the default) or [`Comm::set_same_node_ipc`].
    ///
    /// [`Comm::set_same_node_ipc`]: super::Comm::set_same_node_ipc
    enabled: AtomicBool,
    /// Windows this rank made, free for its next messages.
    windows: Mutex<Vec<Pinned>>,
    /// Other ranks' shared memory opened here, by handle text, newest last.
    opened: Mutex<VecDeque<(String, Pinned)>>,
    /// Messages this rank sent or received on the path.
    pub(super) messages: AtomicU64,
}

impl SameNode {
    /// Finds the ranks of `comm` this rank shares memory with (collective).
    pub(super) fn probe(comm: &RawComm, limit: Limit) -> Result<SameNode> {
        let enabled = !matches!(
            config::or_warn(config::choice("LOCUS_MPI_SAME_NODE", &["ipc", "mpi"])),
            Some("mpi")
        );
        let me = comm.rank() as usize;
        // A rank that cannot make shared memory publishes nothing (and is reached by MPI).
        let probe = Memory::new_shared(Location::Host, 64).ok();
        let mut record = vec![0u8; RECORD];
        if let Some(text) = probe.as_ref().and_then(|p| p.ipc_handle().ok()) {
            let text = text.to_string();
            if text.len() < RECORD {
                record[..text.len()].copy_from_slice(text.as_bytes());
            }
        }
        let all = wire::allgather_small(comm, record, limit, "finding the ranks on this node")?;
        let reachable = all
            .chunks(RECORD)
            .enumerate()
            .map(|(rank, r)| {
                let text = String::from_utf8_lossy(r);
                let text = text.trim_end_matches('\0');
                // Opening checks the node (and that the maker lives) itself.
                rank != me && IpcHandle::parse(text).is_ok_and(|h| Memory::open_ipc(&h).is_ok())
            })
            .collect();
        // Every rank has opened what it could before any probe goes.
        wire::barrier(comm, limit)?;
        drop(probe);
        Ok(SameNode {
            reachable,
            enabled: AtomicBool::new(enabled),
            windows: Mutex::new(Vec::new()),
            opened: Mutex::new(VecDeque::new()),
            messages: AtomicU64::new(0),
        })
    }

    /// Whether messages to and from `peer` may take the same-node path.
    pub(super) fn with(&self, peer: i32) -> bool {
        self.enabled.load(Ordering::Relaxed)
            && usize::try_from(peer)
                .ok()
                .and_then(|p| self.reachable.get(p))
                .copied()
                .unwrap_or(false)
    }

    /// The offer of the same-node path for a message of `bytes` of `memory` to `peer`,
    /// where it saves copies: the memory is shared host pages already (the receiver's
    /// copy is the only one: their handle is the offer's), or `staged` through host
    /// chunks (two copies instead of three). Host-visible memory goes through MPI's
    /// transport, whose single-copy path is as short. The cheap checks come first: most
    /// messages are not offered, and pay nothing more.
    pub(super) fn offer(
        &self,
        peer: i32,
        memory: &Memory,
        bytes: usize,
        staged: bool,
    ) -> Option<Offer> {
        if bytes < MIN_BYTES || !self.with(peer) {
            return None;
        }
        let shared = memory.ipc_handle().ok().filter(IpcHandle::is_host_pages);
        (shared.is_some() || staged).then_some(Offer { shared })
    }

    pub(super) fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }

    /// Sends `bytes` of `memory` to `dest` (which accepted `offer`): the handle of the
    /// memory holding them goes on `data` under `tag` (the memory's own shared pages, or
    /// a window of this rank's), then a note per `piece` bytes made ready there (the
    /// sender copies the next piece into its window while the receiver copies this one
    /// out); the receiver's acknowledgement on `answer` says its copies are done.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send(
        &self,
        (data, answer): (&RawComm, &RawComm),
        memory: &Memory,
        offer: Offer,
        (bytes, piece): (usize, usize),
        dest: i32,
        tag: i32,
        limit: Limit,
    ) -> Result<()> {
        let (window, handle) = match offer.shared {
            Some(handle) => (None, handle),
            None => {
                let window = self.take_window(bytes)?;
                let handle = window.memory.ipc_handle()?;
                (Some(window), handle)
            }
        };
        let ack = wire::post_small_recv(answer, 1, dest, tag, limit)?;
        let send = |bytes: Vec<u8>| -> Result<()> {
            wire::post_small_send(data, bytes, dest, tag, limit)?
                .finish()
                .map(drop)
        };
        send(handle.to_string().into_bytes())?;
        let mut at = 0;
        while at < bytes {
            let len = piece.min(bytes - at);
            if let Some(window) = &window {
                memory.copy_to(at, &window.memory, at, len)?;
            }
            send([(at as u64).to_le_bytes(), (len as u64).to_le_bytes()].concat())?;
            at += len;
        }
        let done = ack.finish()?;
        if done.first() != Some(&1) {
            return Err(Error::Mpi {
                rank: limit.rank,
                call: "send",
                message: format!(
                    "rank {dest} could not copy {bytes} bytes out of this rank's shared memory \
                     ({handle}); its error says why"
                ),
                hint: "set LOCUS_MPI_SAME_NODE=mpi to send through MPI's own transport".into(),
            });
        }
        if let Some(window) = window {
            self.windows
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(window);
        }
        self.messages.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Receives `bytes` into `memory` from `source` (whose offer this rank accepted):
    /// opens the memory its handle names, copies each piece out of it as the sender says
    /// it is ready, and acknowledges.
    pub(super) fn recv(
        &self,
        (data, answer): (&RawComm, &RawComm),
        memory: &Memory,
        bytes: usize,
        source: i32,
        tag: i32,
        limit: Limit,
    ) -> Result<()> {
        let next = || wire::post_small_recv(data, RECORD, source, tag, limit)?.finish();
        let text = next()?;
        let shared = String::from_utf8(text)
            .map_err(|_| Error::Invalid(format!("rank {source} sent a handle that is not text")))
            .and_then(|text| self.open(&text))
            .and_then(|shared| match shared.len() >= bytes {
                true => Ok(shared),
                false => Err(Error::Invalid(format!(
                    "rank {source}'s shared memory holds {} bytes, short of the {bytes} sent",
                    shared.len()
                ))),
            });
        // Every note is received, whatever happens to the copies, so that none is left
        // to meet a later message.
        let (shared, mut failure) = match shared {
            Ok(shared) => (Some(shared), None),
            Err(e) => (None, Some(e)),
        };
        let mut at = 0;
        while at < bytes {
            let note = next()?;
            let word = |i: usize| {
                note.get(i * 8..i * 8 + 8)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, |b: [u8; 8]| u64::from_le_bytes(b) as usize)
            };
            let (from, len) = (word(0), word(1));
            if len == 0 || from != at || from + len > bytes {
                return Err(Error::Invalid(format!(
                    "rank {source} sent a garbled note of a shared-memory message"
                )));
            }
            if let (Some(shared), None) = (&shared, &failure) {
                failure = shared.copy_to(at, memory, at, len).err();
            }
            at += len;
        }
        let ack = vec![u8::from(failure.is_none())];
        wire::post_small_send(answer, ack, source, tag, limit)?.finish()?;
        self.messages.fetch_add(1, Ordering::Relaxed);
        failure.map_or(Ok(()), Err)
    }

    /// A window of this rank's of at least `bytes` (whole MiB), reused where one is free.
    fn take_window(&self, bytes: usize) -> Result<Pinned> {
        let mut free = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = free.iter().position(|w| w.memory.len() >= bytes) {
            return Ok(free.swap_remove(i));
        }
        drop(free);
        let size = bytes.div_ceil(1 << 20).saturating_mul(1 << 20);
        Pinned::new(Memory::new_shared(Location::Host, size)?)
    }

    /// Another rank's shared memory, opened once and kept for its next messages.
    fn open(&self, text: &str) -> Result<Arc<Memory>> {
        let mut opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, m)) = opened.iter().find(|(t, _)| t == text) {
            return Ok(Arc::clone(&m.memory));
        }
        // Host memory wherever the sender uses it: opened as the host's here.
        let mut handle = IpcHandle::parse(text)?;
        handle.location = Location::Host;
        let pinned = Pinned::new(Memory::open_ipc(&handle)?)?;
        let memory = Arc::clone(&pinned.memory);
        if opened.len() >= OPENED_KEPT {
            // The oldest one no copy is using now (its registrations end with it).
            if let Some(i) = opened
                .iter()
                .position(|(_, p)| Arc::strong_count(&p.memory) == 1)
            {
                opened.remove(i);
            }
        }
        opened.push_back((text.to_string(), pinned));
        Ok(memory)
    }
}
