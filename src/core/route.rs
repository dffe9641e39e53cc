//! Routes and copy paths: how data gets from one location to another ([`RouteKind`],
//! [`Route`] with its one-line reason), and the [`CopyPath`] trait a backend implements
//! to add its own way of copying to the transfer matrix.

use std::fmt;
use std::sync::Arc;

use super::device::{Device, HostAccess};
use super::error::Result;
use super::location::Location;
use super::memory::Memory;

/// How data gets from one location to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RouteKind {
    /// Used where it is: no copy.
    InPlace,
    /// One call of one backend.
    Direct,
    /// A peer copy between two devices of one technology.
    Peer,
    /// One copy through the mapping of the host-visible side.
    Mapped,
    /// Through host memory in overlapping chunks.
    Staged,
}

impl RouteKind {
    /// Every kind, cheapest first.
    pub const ALL: [RouteKind; 5] = [
        RouteKind::InPlace,
        RouteKind::Direct,
        RouteKind::Peer,
        RouteKind::Mapped,
        RouteKind::Staged,
    ];

    /// Lower-case name (`in-place`, `direct`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            RouteKind::InPlace => "in-place",
            RouteKind::Direct => "direct",
            RouteKind::Peer => "peer",
            RouteKind::Mapped => "mapped",
            RouteKind::Staged => "staged",
        }
    }
}

impl fmt::Display for RouteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A route with the reason it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Where the data is.
    pub src: Location,
    /// Where it is wanted.
    pub dst: Location,
    /// How it gets there.
    pub kind: RouteKind,
    /// Why, in one line. Shared (`Arc<str>`): every copy returns its route, and a
    /// cached plan's route is handed out without copying the text.
    pub reason: std::sync::Arc<str>,
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {}: {} ({})",
            self.src, self.dst, self.kind, self.reason
        )
    }
}

/// One side of a planned copy: the device and how the host reaches its memory.
#[derive(Clone, Copy)]
pub struct Endpoint<'a> {
    /// The device.
    pub device: &'a Arc<dyn Device>,
    /// How host code reaches the memory in place.
    pub host: HostAccess,
}

impl Endpoint<'_> {
    /// The endpoint an allocation makes: its device and how the host reaches it.
    pub fn of(memory: &Memory) -> Endpoint<'_> {
        Endpoint {
            device: memory.device(),
            host: memory.host_access(),
        }
    }

    /// Why the host reaches this side in place, when it does (routes quote it).
    pub fn visible_because(&self) -> Option<String> {
        match self.host {
            HostAccess::None => None,
            _ => Some(self.device.host_access_reason()),
        }
    }
}

/// A way to copy bytes between two allocations.
pub trait CopyPath: Send + Sync {
    /// A short name for `locus info` ("omp_target_memcpy between devices").
    fn name(&self) -> &'static str;
    /// The route this path would take from `src` to `dst`, or `None` if it does not
    /// apply to these two.
    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route>;
    /// Copies `len` bytes (ranges already bounds-checked, not overlapping).
    fn copy(
        &self,
        src: &Memory,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
    ) -> Result<()>;
}
