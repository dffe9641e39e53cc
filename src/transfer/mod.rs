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
//! The planner is a registry of [`CopyPath`]s keyed by (source technology, destination
//! technology) that backends fill at discovery ([`TransferMatrix`]); after those come
//! the generic paths (same device, host side, staged), so a pair that no backend serves
//! better always falls back to `Staged` and no pair is ever "not implemented".

mod paths;
mod staged;
mod stats;

use std::fmt;
use std::sync::Arc;

pub use paths::{CopyPath, Endpoint, TransferMatrix};
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

fn endpoint(device: &Arc<dyn Device>, host: HostAccess) -> Endpoint<'_> {
    Endpoint { device, host }
}

/// The route a copy from memory at `src` to new memory at `dst` takes (location level).
pub fn copy_route(registry: &Registry, src: Location, dst: Location) -> Result<Route> {
    let (a, b) = (registry.device(src)?, registry.device(dst)?);
    let (route, _) = registry.matrix().plan(
        endpoint(a, a.host_access_default()),
        endpoint(b, b.host_access_default()),
    );
    Ok(route)
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
    crate::registry()
        .matrix()
        .plan(
            endpoint(src.device(), src.host_access()),
            endpoint(dst.device(), dst.host_access()),
        )
        .0
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

/// Copies `len` bytes, bounds-checked on both sides before anything is written, on the
/// cheapest route, or on a route of `forced` kind (an error if none applies).
pub(crate) fn copy(
    src: &Memory,
    src_offset: usize,
    dst: &Memory,
    dst_offset: usize,
    len: usize,
    local: Option<&TransferStats>,
    forced: Option<RouteKind>,
) -> Result<Route> {
    src.check("copy source", src_offset, len)?;
    dst.check("copy destination", dst_offset, len)?;
    let matrix = crate::registry().matrix();
    let (a, b) = (
        endpoint(src.device(), src.host_access()),
        endpoint(dst.device(), dst.host_access()),
    );
    let (route, path) = match forced {
        None => matrix.plan(a, b),
        Some(kind) => matrix.plan_kind(kind, a, b).ok_or_else(|| {
            Error::Invalid(format!(
                "{} -> {}: no {kind} route between these two (the planner would take: {})",
                src.location(),
                dst.location(),
                matrix.plan(a, b).0
            ))
        })?,
    };
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
        path.copy(src, src_offset, dst, dst_offset, len)?;
    }
    stats::global().record(route.kind, len);
    if let Some(local) = local {
        local.record(route.kind, len);
    }
    Ok(route)
}

/// The process-wide transfer counters (every copy the library made).
pub fn global_stats() -> &'static TransferStats {
    stats::global()
}
