//! [`Mpi`] (MPI initialized for locus, finalized when the last user is gone) and
//! [`Comm`] (a communicator with locus's own message space, its time limit and its
//! route choice).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::same_node::SameNode;
use crate::backends::mpi::result::{self, RawComm};
use crate::backends::mpi::wire::{self, Limit, Wire};
use crate::core::config;
use crate::core::device::HostAccess;
use crate::core::error::{Error, Result};
use crate::core::location::{Location, Technology};
use crate::core::memory::Memory;
use crate::core::native::MemoryKind;

/// MPI, initialized with `MPI_THREAD_MULTIPLE` (non-blocking operations run on threads of
/// their own). Finalized when this and every [`Comm`] made from it are dropped, if locus
/// initialized it; a program (or mpi4py, or rsmpi) that initialized MPI itself keeps
/// that job.
///
/// ```no_run
/// # fn main() -> locus::Result<()> {
/// use locus::mpi::Mpi;
/// let mpi = Mpi::init()?;
/// let world = mpi.world()?;
/// println!("rank {} of {} ({})", world.rank(), world.size(), mpi.library());
/// # Ok(()) }
/// ```
pub struct Mpi {
    session: Arc<Session>,
}

/// Keeps MPI initialized while anything of locus's uses it.
struct Session {
    /// rsmpi's universe when locus initialized MPI (dropping it finalizes).
    _universe: Option<::mpi::environment::Universe>,
}

impl Mpi {
    /// Initializes MPI (or joins the program's initialization) with
    /// `MPI_THREAD_MULTIPLE`; an MPI that offers less is an error that says so.
    pub fn init() -> Result<Mpi> {
        use ::mpi::environment::{is_initialized, threading_support, Threading};
        let universe = match is_initialized() {
            true => None,
            false => {
                let (universe, _) = ::mpi::initialize_with_threading(Threading::Multiple).ok_or_else(|| {
                    Error::Mpi {
                        rank: -1,
                        call: "MPI_Init_thread",
                        message: "MPI could not be initialized (it was finalized already?)".into(),
                        hint: "initialize MPI once per process; keep the Mpi value alive until the end".into(),
                    }
                })?;
                Some(universe)
            }
        };
        let level = threading_support();
        if level != Threading::Multiple {
            return Err(Error::Mpi {
                rank: -1,
                call: "MPI_Init_thread",
                message: format!(
                    "{} offers thread level {level:?}, and locus needs MPI_THREAD_MULTIPLE (its \
                     non-blocking operations run on threads of their own)",
                    result::library_version()
                ),
                hint: "use an MPI library built with thread support (Debian's Open MPI and MPICH are), \
                       or initialize MPI with MPI_THREAD_MULTIPLE yourself (mpi4py does by default)"
                    .into(),
            });
        }
        Ok(Mpi {
            session: Arc::new(Session {
                _universe: universe,
            }),
        })
    }

    /// All the ranks (`MPI_COMM_WORLD`, duplicated so locus's messages never meet the
    /// program's own).
    pub fn world(&self) -> Result<Comm> {
        Comm::new(Arc::clone(&self.session), RawComm::world()?)
    }

    /// The ranks of an rsmpi communicator the program made (duplicated as [`Mpi::world`]).
    pub fn comm_from<C: ::mpi::topology::Communicator>(&self, communicator: &C) -> Result<Comm> {
        Comm::new(
            Arc::clone(&self.session),
            RawComm::duplicate_raw(communicator.as_raw())?,
        )
    }

    /// The MPI library's own name and version (`MPI_Get_library_version`, first line).
    pub fn library(&self) -> String {
        result::library_version()
    }
}

/// How [`Comm`] picks the wire for a buffer's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Device-aware where the MPI library takes the technology's device pointers,
    /// mapped where the memory is host-visible in place, staged otherwise.
    #[default]
    Auto,
    /// Always staged through host chunks (to measure or test the staged engine on a
    /// machine whose memory is all host-visible).
    Staged,
}

/// The route a buffer's data takes between this rank and the network, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireRoute {
    /// Where the memory is.
    pub location: Location,
    /// The wire.
    pub wire: Wire,
    /// Why, in words.
    pub reason: String,
}

impl std::fmt::Display for WireRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.location, self.wire, self.reason)
    }
}

/// Whether the MPI library takes CUDA / ROCm device pointers.
#[derive(Debug, Clone)]
struct DeviceAware {
    /// Each technology with a device-support query: the query and its answer (`None`:
    /// the library has no such query).
    asked: Vec<(Technology, &'static std::ffi::CStr, Option<bool>)>,
    /// `LOCUS_MPI_DEVICE_AWARE`: 1 or 0 forces the answer for every technology.
    forced: Option<bool>,
}

impl DeviceAware {
    fn probe() -> DeviceAware {
        let forced = config::or_warn(config::flag("LOCUS_MPI_DEVICE_AWARE"));
        let asked = Technology::ALL
            .into_iter()
            .filter_map(|t| result::support_query_of(t).map(|q| (t, q, result::query_support(q))))
            .collect();
        DeviceAware { asked, forced }
    }

    /// The answer for `technology`, and where it came from.
    fn answer(&self, technology: Technology) -> (bool, String) {
        let Some(&(_, query, asked)) = self.asked.iter().find(|(t, ..)| *t == technology) else {
            return (false, format!("MPI takes no {technology} device pointers"));
        };
        let query = query.to_string_lossy();
        match (self.forced, asked) {
            (Some(f), _) => (f, format!("LOCUS_MPI_DEVICE_AWARE={}", f as u8)),
            (None, Some(a)) => (a, format!("{query}() = {}", a as u8)),
            (None, None) => (false, format!("the MPI library has no {query}")),
        }
    }
}

/// A communicator for locus buffers: point-to-point messages ([`Comm::send`],
/// [`Comm::recv`], [`Comm::isend`], [`Comm::irecv`]) and collectives
/// ([`Comm::broadcast`], [`Comm::gather`], [`Comm::all_gather`], [`Comm::all_reduce_sum`])
/// between buffers at any location on each rank. Cheap to clone.
///
/// Every wait is bounded: `LOCUS_MPI_TIMEOUT_S` seconds (300 unless set; 0 = no limit)
/// or [`Comm::set_timeout`]; past it the call fails with [`Error::Mpi`] instead of
/// hanging on a rank that died.
#[derive(Clone)]
pub struct Comm {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    /// Headers, under the program's tags.
    pub(super) head: RawComm,
    /// Answers, under the sender's sequence numbers.
    pub(super) answer: RawComm,
    /// Data pieces, under the sender's sequence numbers.
    pub(super) data: RawComm,
    /// Collectives and agreements.
    pub(super) coll: RawComm,
    seq: AtomicU32,
    timeout: Mutex<Option<Duration>>,
    policy: Mutex<Policy>,
    /// Bytes of each staging chunk.
    pub(super) chunk: usize,
    /// Staging chunks kept for reuse, by the location they stage for.
    chunks: Mutex<Vec<(Location, Arc<Memory>)>>,
    device_aware: DeviceAware,
    /// The ranks on this node, and the shared memory of messages between them.
    pub(super) same_node: SameNode,
    _session: Arc<Session>,
}

/// The largest tag every MPI library accepts (`MPI_TAG_UB` is at least this).
pub(super) const TAG_LIMIT: u32 = 32767;

/// Bytes of a staging chunk unless `LOCUS_MPI_CHUNK` says otherwise (4 MiB: large
/// enough that a piece's own cost is small, small enough that two overlap well).
const DEFAULT_CHUNK: usize = 4 << 20;

/// The largest piece one MPI call moves.
pub(super) const WHOLE: usize = 1 << 30;

fn env_timeout() -> Option<Duration> {
    let secs = config::or_warn(config::seconds("LOCUS_MPI_TIMEOUT_S")).unwrap_or(300.0);
    (secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

fn env_policy() -> Policy {
    match config::or_warn(config::choice("LOCUS_MPI_ROUTE", &["staged", "auto"])) {
        Some("staged") => Policy::Staged,
        _ => Policy::Auto,
    }
}

impl Comm {
    fn new(session: Arc<Session>, base: RawComm) -> Result<Comm> {
        let chunk = config::or_warn(config::size("LOCUS_MPI_CHUNK"))
            .and_then(|c| usize::try_from(c).ok())
            .filter(|&c| c >= 4096)
            .map_or(DEFAULT_CHUNK, |c| c.min(WHOLE));
        let coll = base.duplicate()?;
        let limit = Limit {
            limit: env_timeout(),
            rank: base.rank(),
        };
        let same_node = SameNode::probe(&coll, limit)?;
        Ok(Comm {
            inner: Arc::new(Inner {
                answer: base.duplicate()?,
                data: base.duplicate()?,
                coll,
                head: base,
                seq: AtomicU32::new(0),
                timeout: Mutex::new(env_timeout()),
                policy: Mutex::new(env_policy()),
                chunk,
                chunks: Mutex::new(Vec::new()),
                device_aware: DeviceAware::probe(),
                same_node,
                _session: session,
            }),
        })
    }

    /// This rank.
    pub fn rank(&self) -> i32 {
        self.inner.head.rank()
    }

    /// How many ranks.
    pub fn size(&self) -> i32 {
        self.inner.head.size()
    }

    /// Bounds every wait of this communicator (and its clones) by `limit` (`None`: wait
    /// forever, as plain MPI does).
    pub fn set_timeout(&self, limit: Option<Duration>) {
        *self.inner.timeout.lock().unwrap_or_else(|e| e.into_inner()) = limit;
    }

    /// Chooses how wires are picked (`LOCUS_MPI_ROUTE=staged` sets [`Policy::Staged`]).
    pub fn set_policy(&self, policy: Policy) {
        *self.inner.policy.lock().unwrap_or_else(|e| e.into_inner()) = policy;
    }

    /// Whether messages between this rank and `peer` may go through shared memory:
    /// `peer` runs on this node, this rank opened its shared memory, and the path is on
    /// (`LOCUS_MPI_SAME_NODE`, [`Comm::set_same_node_ipc`]). A message takes it when it
    /// is 64 KiB or more and it saves copies: the sender's memory was made shared
    /// ([`Memory::new_shared`]: the receiver's copy is the only one) or is staged through
    /// host chunks (two copies instead of three, the window registered for DMA);
    /// host-visible memory goes through MPI's transport, whose single-copy path is as
    /// short, and so do a device's own lent staging buffers (WebGPU).
    pub fn same_node(&self, peer: i32) -> bool {
        self.inner.same_node.with(peer)
    }

    /// How many messages this rank sent or received through the same-node path.
    pub fn same_node_messages(&self) -> u64 {
        self.inner
            .same_node
            .messages
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Turns the same-node path on or off for this rank's messages (on unless
    /// `LOCUS_MPI_SAME_NODE=mpi`): off, messages between ranks of one node go through
    /// MPI's own transport, as between nodes. A message takes the path only when both
    /// ranks have it on.
    pub fn set_same_node_ipc(&self, on: bool) {
        self.inner.same_node.set_enabled(on);
    }

    /// The route `memory` takes to and from the network from this rank.
    pub fn route_of(&self, memory: &Memory) -> WireRoute {
        self.inner.route_of(memory)
    }

    /// Waits until every rank has called it (`MPI_Ibarrier`, within the time limit).
    pub fn barrier(&self) -> Result<()> {
        wire::barrier(&self.inner.coll, self.inner.limit())
    }

    /// Makes every rank's outcome every rank's: `Ok` everywhere when every rank's
    /// `local` is `Ok`, otherwise an error on every rank naming the ranks that failed and
    /// why (a location missing on one rank stops all of them, none waits for it).
    /// Collective: every rank calls it.
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        let failures = self
            .inner
            .agree_on(local.as_ref().err().map(|e| e.to_string()))?;
        match (local, failures.is_empty()) {
            (Ok(value), true) => Ok(value),
            _ => Err(Error::Mpi {
                rank: self.rank(),
                call: "agree",
                message: failures.join("; "),
                hint: "every rank stops here: fix the failing rank's setup (its location, its sizes) and run again".into(),
            }),
        }
    }
}

/// Bytes of one rank's record in an agreement.
const RECORD: usize = 256;

impl Inner {
    pub(super) fn limit(&self) -> Limit {
        Limit {
            limit: *self.timeout.lock().unwrap_or_else(|e| e.into_inner()),
            rank: self.head.rank(),
        }
    }

    /// The next sequence number (the tag of one message's answer and data).
    pub(super) fn next_seq(&self) -> u32 {
        self.seq.fetch_add(1, Ordering::Relaxed) % (TAG_LIMIT + 1)
    }

    pub(super) fn route_of(&self, memory: &Memory) -> WireRoute {
        let location = memory.location();
        let policy = *self.policy.lock().unwrap_or_else(|e| e.into_inner());
        let route = |wire, reason: String| WireRoute {
            location,
            wire,
            reason,
        };
        // What a staged message goes through (asked only when staged).
        let through = || {
            match memory.device().lends_staging(memory.native()) {
            true => format!(
                "two {} staging buffers of the {} device lent in place (one device copy a side, no host copy)",
                size(self.chunk),
                location.technology()
            ),
            false => format!("two {} host chunks", size(self.chunk)),
        }
        };
        if policy == Policy::Staged {
            return route(
                Wire::Staged,
                format!(
                    "staging asked for (LOCUS_MPI_ROUTE=staged or Comm::set_policy), through {}",
                    through()
                ),
            );
        }
        let access = memory.host_access();
        if access == HostAccess::Pointer {
            return route(
                Wire::Mapped,
                format!("{location} memory is a host address: MPI uses it in place"),
            );
        }
        let (aware, why) = self.device_aware.answer(location.technology());
        let address = wire::device_address_or_why(memory);
        if aware && address.is_ok() {
            return route(
                Wire::DeviceAware,
                format!("MPI takes {location} device pointers ({why})"),
            );
        }
        if access == HostAccess::Mapped {
            return route(
                Wire::Mapped,
                format!("{location} memory is host-visible in place (mapped): no copy"),
            );
        }
        let why = match (aware, address) {
            // Device-aware, but this allocation has no address MPI can take.
            (true, Err(none)) => format!("this allocation is {none} ({why})"),
            _ => why,
        };
        route(
            Wire::Staged,
            format!(
                "{location} memory is not host-visible and {why}: staged through {}, the device copy of one overlapping the network transfer of the other",
                through()
            ),
        )
    }

    /// Two staging chunks for `location` (pinned host memory of its device where it
    /// offers it), reused across messages.
    pub(super) fn take_chunks(&self, location: Location) -> Result<[Arc<Memory>; 2]> {
        let mut kept = self.chunks.lock().unwrap_or_else(|e| e.into_inner());
        let mut found = Vec::new();
        kept.retain(|(at, chunk)| {
            if *at == location && found.len() < 2 {
                found.push(Arc::clone(chunk));
                false
            } else {
                true
            }
        });
        drop(kept);
        while found.len() < 2 {
            found.push(Arc::new(self.new_chunk(location)?));
        }
        let second = found
            .pop()
            .ok_or_else(|| Error::Invalid("internal: no chunk".into()))?;
        let first = found
            .pop()
            .ok_or_else(|| Error::Invalid("internal: no chunk".into()))?;
        Ok([first, second])
    }

    /// Gives staging chunks back for reuse.
    pub(super) fn return_chunks(&self, location: Location, chunks: [Arc<Memory>; 2]) {
        let mut kept = self.chunks.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() < 16 {
            kept.extend(chunks.into_iter().map(|c| (location, c)));
        }
    }

    fn new_chunk(&self, location: Location) -> Result<Memory> {
        let device = crate::runtime::registry::registry().device(location)?;
        if device.memory_kinds().contains(&MemoryKind::PinnedHost) {
            if let Ok(m) = Memory::on_kind(device, MemoryKind::PinnedHost, self.chunk) {
                return Ok(m);
            }
        }
        let host = crate::runtime::registry::registry().device(Location::Host)?;
        Memory::on(host, self.chunk)
    }

    /// Every rank's failure (`None`: fine), gathered; the failures as "rank r: why".
    fn agree_on(&self, mine: Option<String>) -> Result<Vec<String>> {
        let mut record = vec![0u8; RECORD];
        if let Some(why) = &mine {
            record[0] = 1;
            let text = why.as_bytes();
            let n = text.len().min(RECORD - 1);
            record[1..1 + n].copy_from_slice(&text[..n]);
        }
        let all =
            wire::allgather_small(&self.coll, record, self.limit(), "agreeing between ranks")?;
        Ok(all
            .chunks(RECORD)
            .enumerate()
            .filter(|(_, r)| r[0] == 1)
            .map(|(rank, r)| {
                let text = &r[1..];
                let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
                format!("rank {rank}: {}", String::from_utf8_lossy(&text[..end]))
            })
            .collect())
    }
}

/// `bytes` in KiB / MiB words.
fn size(bytes: usize) -> String {
    crate::runtime::transfer::cost::format_size(bytes as u64)
}
