//! The copy engine: a bounds-checked copy between any two allocations on the route the
//! process's transfer matrix picks (umem's `copy_to` / `copy_from`), and the route
//! queries behind `locus info`.

use std::sync::Arc;

use super::matrix::Plan;
use super::stats::{self, TransferStats};
use crate::core::copy_span::CopySpan;
use crate::core::device::{Device, HostAccess};
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};
use crate::core::trace::{traced_copy, CopyTrace};
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

/// Which route a copy takes ([`CopyOptions::via`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Via<'a> {
    /// The planner's choice (what [`Memory::copy_to`] takes).
    #[default]
    Planner,
    /// A route of this kind (e.g. to benchmark the staged route against the planner's
    /// choice); an error when no such route exists between the two.
    Kind(RouteKind),
    /// The candidate path of this name (a [`CopyPath::name`], as `locus info` lists
    /// them): what calibration measures, and how a test holds every candidate to the
    /// data; an error naming the candidates when that path does not apply.
    Path(&'a str),
}

/// How [`Memory::copy_to_with`] copies: on which route, and which transfer counters
/// count it besides the process's.
#[derive(Debug, Clone, Copy, Default)]
pub struct CopyOptions<'a> {
    /// The route.
    pub via: Via<'a>,
    /// Counters that count this copy too (a buffer's own, a benchmark's).
    pub stats: Option<&'a TransferStats>,
}

impl<'a> CopyOptions<'a> {
    /// On the planner's route, counted in `stats` too.
    pub fn counted(stats: &'a TransferStats) -> CopyOptions<'a> {
        CopyOptions {
            via: Via::Planner,
            stats: Some(stats),
        }
    }

    /// On the route `via` names.
    pub fn via(via: Via<'a>) -> CopyOptions<'a> {
        CopyOptions { via, stats: None }
    }
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

/// Checks a copy of `span` before anything is written: both ranges, both runtimes alive,
/// and host use of either side waited for where it must be.
pub(super) fn check_copy(src: &Memory, dst: &Memory, span: CopySpan) -> Result<()> {
    src.check("copy source", span.src_offset, span.len)?;
    dst.check("copy destination", span.dst_offset, span.len)?;
    crate::core::shutdown::check_runtime_alive(src.location(), "copy (source)")?;
    crate::core::shutdown::check_runtime_alive(dst.location(), "copy (destination)")?;
    src.settle_before_host_use()?;
    dst.settle_before_host_use()?;
    Ok(())
}

/// Moves the data of `span` on `path`, and counts it as a route of `kind` in the
/// process's counters and in `local`: the one place a copy is counted.
fn run_path(
    src: &Memory,
    dst: &Memory,
    span: CopySpan,
    kind: RouteKind,
    path: &dyn CopyPath,
    local: Option<&TransferStats>,
) -> Result<()> {
    let CopySpan {
        src_offset,
        dst_offset,
        len,
    } = span;
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
        let what = || CopyTrace {
            src: src.location(),
            dst: dst.location(),
            bytes: len,
            route: kind,
            path: path.name(),
        };
        traced_copy(what, || path.copy(src, src_offset, dst, dst_offset, len))?;
    }
    stats::count(kind, len, local);
    Ok(())
}

/// Copies `span` on `plan`, made for this pair and size by the caller (a buffer that
/// chose its source replica by it): the move is planned once. Checked and counted as
/// [`copy`] is.
pub(crate) fn copy_on_plan(
    src: &Memory,
    dst: &Memory,
    span: CopySpan,
    plan: &Plan,
    local: Option<&TransferStats>,
) -> Result<Route> {
    check_copy(src, dst, span)?;
    run_path(src, dst, span, plan.0.kind, &*plan.1, local)?;
    Ok(plan.0.clone())
}

/// Copies `len` bytes, bounds-checked on both sides before anything is written, on the
/// route `options` names (an error if none applies), counted where it says.
pub(crate) fn copy(
    src: &Memory,
    src_offset: usize,
    dst: &Memory,
    dst_offset: usize,
    len: usize,
    options: CopyOptions<'_>,
) -> Result<Route> {
    let local = options.stats;
    let span = CopySpan {
        src_offset,
        dst_offset,
        len,
    };
    check_copy(src, dst, span)?;
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
    let run = |kind: RouteKind, path: &dyn CopyPath| run_path(src, dst, span, kind, path, local);
    let forced = match options.via {
        Via::Planner => return matrix.with_plan(a, b, len, run),
        Via::Kind(kind) => matrix
            .plan_kind(kind, a, b, len)
            .ok_or_else(|| none(format!("{kind} route"))),
        Via::Path(name) => matrix.plan_path(name, a, b).ok_or_else(|| {
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
        copy(
            self,
            src_offset,
            dst,
            dst_offset,
            len,
            CopyOptions::default(),
        )
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
        copy(
            src,
            src_offset,
            self,
            dst_offset,
            len,
            CopyOptions::default(),
        )
    }

    /// Like [`Memory::copy_to`], on the route `options.via` names and counted in
    /// `options.stats` too.
    ///
    /// ```
    /// use locus::transfer::{CopyOptions, Via};
    /// use locus::{Location, Memory, RouteKind};
    ///
    /// let (a, b) = (Memory::new(Location::Host, 64)?, Memory::new(Location::Host, 64)?);
    /// let route = a.copy_to_with(0, &b, 0, 64, CopyOptions::via(Via::Kind(RouteKind::Staged)))?;
    /// assert_eq!(route.kind, RouteKind::Staged);
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn copy_to_with(
        &self,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
        options: CopyOptions<'_>,
    ) -> Result<Route> {
        copy(self, src_offset, dst, dst_offset, len, options)
    }
}
