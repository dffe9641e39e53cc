//! The transfer matrix: a route for every ordered pair of locations, with a one-line
//! reason, and the copy engine that follows it.
//!
//! Routes, cheapest first:
//! - [`RouteKind::InPlace`]: the consumer can use the memory where it is (no copy);
//! - [`RouteKind::Direct`]: one call of one backend (host <-> device, or within a device);
//! - [`RouteKind::Peer`]: two devices of one technology copy to each other directly;
//! - [`RouteKind::Mapped`]: one side is host-visible, so the other side's backend reads or
//!   writes straight into its mapping: one copy;
//! - [`RouteKind::Staged`]: through host memory, in chunks of reused buffers, with the
//!   device-to-host leg of chunk `i+1` overlapping the host-to-device leg of chunk `i`.
//!
//! The planner asks the devices ([`Device::can_peer`], [`Device::host_access`]); a pair
//! that no backend serves better always falls back to `Staged`, so no pair is ever "not
//! implemented".

mod staged;
mod stats;

use std::fmt;
use std::sync::Arc;

pub use stats::{TransferStats, TransferTotals};

use crate::backends::{Device, HostAccess, Memory};
use crate::error::{Error, Result};
use crate::location::Location;
use crate::registry::Registry;

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
    /// Why, in one line.
    pub reason: String,
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

/// Plans a copy between two devices, given how the host reaches each side.
fn plan(
    src: &Arc<dyn Device>,
    src_host: HostAccess,
    dst: &Arc<dyn Device>,
    dst_host: HostAccess,
) -> Route {
    let (s, d) = (src.location(), dst.location());
    let route = |kind, reason: String| Route {
        src: s,
        dst: d,
        kind,
        reason,
    };
    if s == d {
        return route(
            RouteKind::Direct,
            format!("one {} copy within the device", s.technology()),
        );
    }
    if s.is_host() {
        return route(
            RouteKind::Direct,
            format!("one {} host-to-device write", d.technology()),
        );
    }
    if d.is_host() {
        return route(
            RouteKind::Direct,
            format!("one {} device-to-host read", s.technology()),
        );
    }
    if s.technology() == d.technology() && src.can_peer(dst.as_ref()) {
        return route(RouteKind::Peer, format!("{} peer copy", s.technology()));
    }
    let visible = |loc: Location, access: HostAccess| match access {
        HostAccess::Pointer => Some(format!("{loc} memory has a host address")),
        HostAccess::Mapped => Some(format!("{loc} is host-unified")),
        HostAccess::None => None,
    };
    if let Some(why) = visible(s, src_host) {
        return route(
            RouteKind::Mapped,
            format!("{why}: {d} writes from its mapping"),
        );
    }
    if let Some(why) = visible(d, dst_host) {
        return route(
            RouteKind::Mapped,
            format!("{why}: {s} reads into its mapping"),
        );
    }
    route(
        RouteKind::Staged,
        format!(
            "neither side is host-visible: staged through host memory in {} MiB chunks, legs overlapping",
            staged::CHUNK >> 20
        ),
    )
}

/// The route a copy from memory at `src` to new memory at `dst` takes (location level).
pub fn copy_route(registry: &Registry, src: Location, dst: Location) -> Result<Route> {
    let (a, b) = (registry.device(src)?, registry.device(dst)?);
    Ok(plan(a, a.host_access_default(), b, b.host_access_default()))
}

/// The route data at `src` takes to be consumed at `dst`: `InPlace` when `dst` can use
/// it where it is, else the copy route.
pub fn access_route(registry: &Registry, src: Location, dst: Location) -> Result<Route> {
    let (in_place, reason) = crate::access::location_accessibility(registry, src, dst)?;
    if in_place {
        return Ok(Route {
            src,
            dst,
            kind: RouteKind::InPlace,
            reason,
        });
    }
    copy_route(registry, src, dst)
}

/// The route between two allocations.
pub fn route_between(src: &Memory, dst: &Memory) -> Route {
    plan(
        src.device(),
        src.host_access(),
        dst.device(),
        dst.host_access(),
    )
}

/// Every ordered pair of available locations with its access route, as text.
pub fn route_table(registry: &Registry) -> String {
    let locations = registry.locations();
    let mut out = String::new();
    for &src in &locations {
        for &dst in &locations {
            if let Ok(route) = access_route(registry, src, dst) {
                out.push_str(&format!("{route}\n"));
            }
        }
    }
    out
}

/// Copies `len` bytes, bounds-checked on both sides before anything is written.
pub(crate) fn copy(
    src: &Memory,
    src_offset: usize,
    dst: &Memory,
    dst_offset: usize,
    len: usize,
    local: Option<&TransferStats>,
) -> Result<Route> {
    src.check("copy source", src_offset, len)?;
    dst.check("copy destination", dst_offset, len)?;
    let route = route_between(src, dst);
    if len == 0 {
        return Ok(route);
    }
    let same_allocation = std::ptr::eq(src, dst);
    let overlapping =
        same_allocation && src_offset < dst_offset + len && dst_offset < src_offset + len;
    if overlapping {
        // Backends' device copies reject overlap (clEnqueueCopyBuffer); go through a
        // host copy of the range instead.
        let mut tmp = vec![0u8; len];
        src.read(src_offset, &mut tmp)?;
        dst.write(dst_offset, &tmp)?;
    } else {
        execute(&route, src, src_offset, dst, dst_offset, len)?;
    }
    stats::global().record(route.kind, len);
    if let Some(local) = local {
        local.record(route.kind, len);
    }
    Ok(route)
}

fn execute(
    route: &Route,
    src: &Memory,
    src_offset: usize,
    dst: &Memory,
    dst_offset: usize,
    len: usize,
) -> Result<()> {
    match route.kind {
        RouteKind::Direct if route.src == route.dst => {
            src.device()
                .copy_within(src.native(), src_offset, dst.native(), dst_offset, len)
        }
        RouteKind::Peer => src
            .device()
            .peer_copy(
                src.native(),
                src_offset,
                dst.device().as_ref(),
                dst.native(),
                dst_offset,
                len,
            )
            .unwrap_or_else(|| staged::copy(src, src_offset, dst, dst_offset, len)),
        RouteKind::Direct | RouteKind::Mapped => {
            if src.host_access() != HostAccess::None {
                src.with_host_slice(src_offset, len, false, |bytes| {
                    dst.device().write(dst.native(), dst_offset, bytes)
                })
            } else if dst.host_access() != HostAccess::None {
                dst.with_host_slice(dst_offset, len, true, |bytes| {
                    src.device().read(src.native(), src_offset, bytes)
                })
            } else {
                Err(Error::Invalid(format!(
                    "internal: route {route} has no host-visible side"
                )))
            }
        }
        RouteKind::Staged => staged::copy(src, src_offset, dst, dst_offset, len),
        RouteKind::InPlace => Ok(()),
    }
}

/// The process-wide transfer counters (every copy the library made).
pub fn global_stats() -> &'static TransferStats {
    stats::global()
}
