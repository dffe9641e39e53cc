//! The copy engine: a bounds-checked copy between any two allocations on the route the
//! process's transfer matrix picks (umem's `copy_to` / `copy_from`), and the route
//! queries behind `locus info`.

use std::sync::Arc;

use super::stats::{self, TransferStats};
use crate::core::device::{Device, HostAccess};
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};
use crate::runtime::access::location_accessibility;
use crate::runtime::registry::{registry, Registry};

fn endpoint(device: &Arc<dyn Device>, host: HostAccess) -> Endpoint<'_> {
    Endpoint { device, host }
}

/// The route a large copy (256 MiB) from memory at `src` to new memory at `dst` takes
/// (location level; [`copy_route_for`] for another size).
pub fn copy_route(registry: &Registry, src: Location, dst: Location) -> Result<Route> {
    copy_route_for(registry, src, dst, 256 << 20)
}

/// The route a copy of `bytes` from memory at `src` to new memory at `dst` takes.
pub fn copy_route_for(
    registry: &Registry,
    src: Location,
    dst: Location,
    bytes: usize,
) -> Result<Route> {
    let (a, b) = (registry.device(src)?, registry.device(dst)?);
    let (route, _) = registry.matrix().plan(
        endpoint(a, a.host_access_default()),
        endpoint(b, b.host_access_default()),
        bytes,
    );
    Ok(route)
}

/// The route data at `src` takes to be consumed at `dst`: `InPlace` when `dst` can use
/// it where it is, else the copy route.
pub fn access_route(registry: &Registry, src: Location, dst: Location) -> Result<Route> {
    let (in_place, reason) = location_accessibility(registry, src, dst)?;
    if in_place {
        return Ok(Route {
            src,
            dst,
            kind: RouteKind::InPlace,
            reason: reason.into(),
        });
    }
    copy_route(registry, src, dst)
}

/// The route a copy of `bytes` between two allocations takes.
pub fn route_between(src: &Memory, dst: &Memory, bytes: usize) -> Route {
    registry()
        .matrix()
        .plan(Endpoint::of(src), Endpoint::of(dst), bytes)
        .0
}

/// What a copy may be held to.
#[derive(Clone, Copy)]
pub(crate) enum Forced<'a> {
    /// The planner's choice.
    No,
    /// A route of this kind.
    Kind(RouteKind),
    /// The candidate path of this name.
    Path(&'a str),
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
/// planner's route, or on the route `forced` names (an error if none applies).
pub(crate) fn copy(
    src: &Memory,
    src_offset: usize,
    dst: &Memory,
    dst_offset: usize,
    len: usize,
    local: Option<&TransferStats>,
    forced: Forced<'_>,
) -> Result<Route> {
    src.check("copy source", src_offset, len)?;
    dst.check("copy destination", dst_offset, len)?;
    src.settle_before_host_use()?;
    dst.settle_before_host_use()?;
    let matrix = registry().matrix();
    let (a, b) = (Endpoint::of(src), Endpoint::of(dst));
    let none = |what: String| {
        Error::Invalid(format!(
            "{} -> {}: no {what} between these two (the planner would take: {})",
            src.location(),
            dst.location(),
            matrix.plan(a, b, len).0
        ))
    };
    // Moves the data on `path`, counted as a route of `kind`.
    let run = |kind: RouteKind, path: &dyn CopyPath| -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let same_allocation = std::ptr::eq(src, dst);
        let overlapping =
            same_allocation && src_offset < dst_offset + len && dst_offset < src_offset + len;
        if overlapping {
            // Backends' device copies reject overlap (clEnqueueCopyBuffer); go through a
            // host copy of the range instead.
            let mut tmp = crate::core::host_memory::zeroed_vec::<u8>(len, "an overlapping copy")?;
            src.read(src_offset, &mut tmp)?;
            dst.write(dst_offset, &tmp)?;
        } else {
            path.copy(src, src_offset, dst, dst_offset, len)?;
        }
        stats::global().record(kind, len);
        if let Some(local) = local {
            local.record(kind, len);
        }
        Ok(())
    };
    let forced = match forced {
        Forced::No => return matrix.with_plan(a, b, len, run),
        Forced::Kind(kind) => matrix
            .plan_kind(kind, a, b, len)
            .ok_or_else(|| none(format!("{kind} route"))),
        Forced::Path(name) => matrix.plan_path(name, a, b).ok_or_else(|| {
            let names: Vec<String> = matrix
                .candidates(a, b)
                .iter()
                .map(|(_, p)| format!("'{}'", p.name()))
                .collect();
            none(format!(
                "candidate path '{name}' (the candidates are {})",
                names.join(", ")
            ))
        }),
    };
    let (route, path) = forced?;
    run(route.kind, &*path)?;
    Ok(route)
}

/// The process-wide transfer counters (every copy the library made).
pub fn global_stats() -> &'static TransferStats {
    stats::global()
}

impl Memory {
    /// Copies `len` bytes from `self[src_offset..]` to `dst[dst_offset..]` on the route
    /// the transfer matrix picks, and returns that route (umem's `copy_to`).
    pub fn copy_to(
        &self,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
    ) -> Result<Route> {
        copy(self, src_offset, dst, dst_offset, len, None, Forced::No)
    }

    /// Copies `len` bytes from `src[src_offset..]` into `self[dst_offset..]` (umem's
    /// `copy_from`).
    pub fn copy_from(
        &self,
        dst_offset: usize,
        src: &Memory,
        src_offset: usize,
        len: usize,
    ) -> Result<Route> {
        copy(src, src_offset, self, dst_offset, len, None, Forced::No)
    }

    /// Like [`Memory::copy_to`], also counting the transfer in `stats`.
    pub fn copy_to_counted(
        &self,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
        stats: &TransferStats,
    ) -> Result<Route> {
        copy(
            self,
            src_offset,
            dst,
            dst_offset,
            len,
            Some(stats),
            Forced::No,
        )
    }

    /// Like [`Memory::copy_to`] on a route of the given kind (e.g. to benchmark the
    /// staged path against the planner's choice). An error when no such route exists
    /// between the two.
    pub fn copy_to_via(
        &self,
        kind: RouteKind,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
    ) -> Result<Route> {
        copy(
            self,
            src_offset,
            dst,
            dst_offset,
            len,
            None,
            Forced::Kind(kind),
        )
    }

    /// Like [`Memory::copy_to`] on the candidate path named `path` (a
    /// [`CopyPath::name`], as `locus info` lists
    /// them): what calibration measures, and how a test holds every candidate to the
    /// data. An error naming the candidates when that path does not apply.
    pub fn copy_to_via_path(
        &self,
        path: &str,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
    ) -> Result<Route> {
        copy(
            self,
            src_offset,
            dst,
            dst_offset,
            len,
            None,
            Forced::Path(path),
        )
    }
}
