//! [`RouteKind`]: how data gets from one location to another (a leaf: the trace and the
//! counters name route kinds without the copy paths that take them).

use std::fmt;

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
