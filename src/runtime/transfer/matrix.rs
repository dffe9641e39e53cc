//! The transfer matrix as a registry: copy paths keyed by (source technology,
//! destination technology). Backends register the paths they have (an OpenMP copy
//! between two OpenMP devices, later CUDA/HIP peer copies); after those, three generic
//! paths cover every pair, so nothing is ever "not implemented":
//! same device -> host side (direct or mapped) -> staged.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::staged;
use crate::core::device::HostAccess;
use crate::core::error::{Error, Result};
use crate::core::location::Technology;
use crate::core::memory::Memory;
use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};

fn route(src: Endpoint<'_>, dst: Endpoint<'_>, kind: RouteKind, reason: String) -> Route {
    Route {
        src: src.device.location(),
        dst: dst.device.location(),
        kind,
        reason,
    }
}

/// Two allocations of one device: the backend's own device copy.
struct SameDevice;

impl CopyPath for SameDevice {
    fn name(&self) -> &'static str {
        "copy within one device"
    }

    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route> {
        Arc::ptr_eq(src.device, dst.device).then(|| {
            let t = src.device.location().technology();
            route(
                src,
                dst,
                RouteKind::Direct,
                format!("one {t} copy within the device"),
            )
        })
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        src.device()
            .copy_within(src.native(), so, dst.native(), d, len)
    }
}

/// One side reachable from the host: the other side's backend reads into, or writes
/// from, that side's host view. `Direct` when that side is the host itself.
struct HostSide;

impl CopyPath for HostSide {
    fn name(&self) -> &'static str {
        "read or write through the host-visible side"
    }

    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route> {
        let (s, d) = (src.device.location(), dst.device.location());
        if s.is_host() {
            let t = d.technology();
            return Some(route(
                src,
                dst,
                RouteKind::Direct,
                format!("one {t} host-to-device write"),
            ));
        }
        if d.is_host() {
            let t = s.technology();
            return Some(route(
                src,
                dst,
                RouteKind::Direct,
                format!("one {t} device-to-host read"),
            ));
        }
        if let Some(why) = src.visible_because() {
            return Some(route(
                src,
                dst,
                RouteKind::Mapped,
                format!("{why}; {d} writes from its mapping"),
            ));
        }
        let why = dst.visible_because()?;
        Some(route(
            src,
            dst,
            RouteKind::Mapped,
            format!("{why}; {s} reads into its mapping"),
        ))
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        // The device side's own runtime call does the copy (it may be faster than a
        // plain memcpy, e.g. multi-threaded), into or out of the host-visible side.
        let write_from_src = |dst: &Memory| {
            src.with_host_slice(so, len, false, |bytes| {
                dst.device().write(dst.native(), d, bytes)
            })
        };
        let read_into_dst = |src: &Memory| {
            dst.with_host_slice(d, len, true, |bytes| {
                src.device().read(src.native(), so, bytes)
            })
        };
        let (src_visible, dst_visible) = (
            src.host_access() != HostAccess::None,
            dst.host_access() != HostAccess::None,
        );
        if src.location().is_host() || (src_visible && !dst.location().is_host()) {
            write_from_src(dst)
        } else if dst_visible {
            read_into_dst(src)
        } else {
            Err(Error::Invalid(format!(
                "{} -> {}: neither side is host-visible",
                src.location(),
                dst.location()
            )))
        }
    }
}

/// The fallback for every pair: through host memory in overlapping chunks.
struct Staged;

impl CopyPath for Staged {
    fn name(&self) -> &'static str {
        "staged through host chunks"
    }

    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route> {
        let reason = if src.host == HostAccess::None && dst.host == HostAccess::None {
            "neither side is host-visible: "
        } else {
            ""
        };
        Some(route(
            src,
            dst,
            RouteKind::Staged,
            format!(
                "{reason}staged through host memory in {} MiB chunks, legs overlapping",
                staged::CHUNK >> 20
            ),
        ))
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        staged::copy(src, so, dst, d, len)
    }
}

/// The cheapest route among `paths` that apply to the pair.
fn best<'m>(
    paths: impl Iterator<Item = &'m Arc<dyn CopyPath>>,
    src: Endpoint<'_>,
    dst: Endpoint<'_>,
) -> Option<(Route, &'m Arc<dyn CopyPath>)> {
    paths
        .filter_map(|p| p.plan(src, dst).map(|r| (r, p)))
        .min_by_key(|(r, _)| r.kind)
}

/// The registry of copy paths, filled by the backends at discovery.
pub struct TransferMatrix {
    registered: BTreeMap<(Technology, Technology), Vec<Arc<dyn CopyPath>>>,
    generic: Vec<Arc<dyn CopyPath>>,
}

impl Default for TransferMatrix {
    fn default() -> Self {
        TransferMatrix {
            registered: BTreeMap::new(),
            generic: vec![Arc::new(SameDevice), Arc::new(HostSide), Arc::new(Staged)],
        }
    }
}

impl TransferMatrix {
    /// Adds a path for copies from `src` to `dst` technology; registered paths are tried
    /// before the generic ones, in registration order.
    pub fn register(&mut self, src: Technology, dst: Technology, path: Arc<dyn CopyPath>) {
        self.registered.entry((src, dst)).or_default().push(path);
    }

    fn candidates(
        &self,
        src: Technology,
        dst: Technology,
    ) -> impl Iterator<Item = &Arc<dyn CopyPath>> {
        self.registered
            .get(&(src, dst))
            .into_iter()
            .flatten()
            .chain(self.generic.iter())
    }

    /// The best route between two endpoints and the path that takes it: the best of the
    /// paths a backend registered for this pair when one applies (the backend knows
    /// better, e.g. that a GPU copy should go through pinned memory), else the best
    /// generic one.
    pub fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> (Route, &Arc<dyn CopyPath>) {
        let (s, d) = (
            src.device.location().technology(),
            dst.device.location().technology(),
        );
        let registered = if Arc::ptr_eq(src.device, dst.device) {
            None
        } else {
            best(self.registered.get(&(s, d)).into_iter().flatten(), src, dst)
        };
        registered
            .or_else(|| best(self.generic.iter(), src, dst))
            .expect("the staged path applies to every pair")
    }

    /// A path that takes a route of `kind` between the two, if any does.
    pub fn plan_kind(
        &self,
        kind: RouteKind,
        src: Endpoint<'_>,
        dst: Endpoint<'_>,
    ) -> Option<(Route, &Arc<dyn CopyPath>)> {
        let (s, d) = (
            src.device.location().technology(),
            dst.device.location().technology(),
        );
        self.candidates(s, d)
            .filter_map(|p| p.plan(src, dst).map(|r| (r, p)))
            .find(|(r, _)| r.kind == kind)
    }

    /// The registered (non-generic) paths, for `locus info`.
    pub fn registered(&self) -> impl Iterator<Item = (Technology, Technology, &'static str)> + '_ {
        self.registered
            .iter()
            .flat_map(|((s, d), paths)| paths.iter().map(move |p| (*s, *d, p.name())))
    }
}
