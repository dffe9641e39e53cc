//! The generic copy paths: the candidates every pair has, whatever its technologies.
//!
//! - [`SameDevice`]: two allocations of one device, the backend's own device copy;
//! - [`DstWrites`]: the source is host-visible, so the destination's runtime writes from
//!   the source's host view (its own host-to-device call: `clEnqueueWriteBuffer`,
//!   `queue.memcpy`, a WebGPU upload);
//! - [`SrcReads`]: the destination is host-visible, so the source's runtime reads into
//!   it (its own device-to-host call);
//! - [`BothMapped`]: both sides are host-visible: a memcpy between the two host views
//!   on the caller's thread, no runtime call beyond the mappings;
//! - [`Staged`]: through reused host chunks of a given size, the two legs overlapping.
//!
//! Each applies to some pairs; the planner ([`TransferMatrix`](super::TransferMatrix))
//! chooses among those that apply by measured cost, or by a fixed order before any
//! calibration.

use std::sync::Arc;

use super::staged;
use crate::core::device::HostAccess;
use crate::core::error::Result;
use crate::core::memory::Memory;
use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};

fn route(src: Endpoint<'_>, dst: Endpoint<'_>, kind: RouteKind, reason: String) -> Route {
    Route {
        src: src.device.location(),
        dst: dst.device.location(),
        kind,
        reason: reason.into(),
    }
}

/// The generic paths in their default order (the planner's choice before calibration:
/// the cheapest route kind, then the first in this order).
pub(crate) fn generic() -> Vec<Arc<dyn CopyPath>> {
    vec![
        Arc::new(SameDevice),
        Arc::new(DstWrites),
        Arc::new(SrcReads),
        Arc::new(BothMapped),
        Arc::new(Staged::<{ 8 << 20 }>),
        Arc::new(Staged::<{ 1 << 20 }>),
    ]
}

/// Two allocations of one device: the backend's own device copy.
pub struct SameDevice;

impl CopyPath for SameDevice {
    fn name(&self) -> &'static str {
        "copy within one device"
    }

    fn is_runtime_call(&self) -> bool {
        true
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

/// The source is host-visible: the destination's runtime writes from its host view.
/// `Direct` when the source is the host itself.
pub struct DstWrites;

impl CopyPath for DstWrites {
    fn name(&self) -> &'static str {
        "destination's runtime writes from the source's host view"
    }

    fn is_runtime_call(&self) -> bool {
        true
    }

    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route> {
        let (s, d) = (src.device.location(), dst.device.location());
        if Arc::ptr_eq(src.device, dst.device) || d.is_host() {
            return None;
        }
        let t = d.technology();
        if s.is_host() {
            return Some(route(
                src,
                dst,
                RouteKind::Direct,
                format!("one {t} host-to-device write"),
            ));
        }
        let why = src.visible_because()?;
        Some(route(
            src,
            dst,
            RouteKind::Mapped,
            format!("{why}; {d} writes from its mapping"),
        ))
    }

    fn maps(&self, src: Endpoint<'_>, _dst: Endpoint<'_>) -> usize {
        usize::from(src.host == HostAccess::Mapped)
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        src.with_host_bytes(so, len, |bytes| dst.device().write(dst.native(), d, bytes))
    }
}

/// The destination is host-visible: the source's runtime reads into its host view.
/// `Direct` when the destination is the host itself.
pub struct SrcReads;

impl CopyPath for SrcReads {
    fn name(&self) -> &'static str {
        "source's runtime reads into the destination's host view"
    }

    fn is_runtime_call(&self) -> bool {
        true
    }

    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route> {
        let (s, d) = (src.device.location(), dst.device.location());
        if Arc::ptr_eq(src.device, dst.device) || s.is_host() {
            return None;
        }
        let t = s.technology();
        if d.is_host() {
            return Some(route(
                src,
                dst,
                RouteKind::Direct,
                format!("one {t} device-to-host read"),
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

    fn maps(&self, _src: Endpoint<'_>, dst: Endpoint<'_>) -> usize {
        usize::from(dst.host == HostAccess::Mapped)
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        dst.with_host_bytes_mut(d, len, |bytes| src.device().read(src.native(), so, bytes))
    }
}

/// Both sides host-visible: one memcpy between the two host views, on the caller's
/// thread (no runtime copy call).
pub struct BothMapped;

impl CopyPath for BothMapped {
    fn name(&self) -> &'static str {
        "memcpy between both sides' host views"
    }

    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route> {
        if Arc::ptr_eq(src.device, dst.device)
            || src.host == HostAccess::None
            || dst.host == HostAccess::None
        {
            return None;
        }
        let (s, d) = (src.device.location(), dst.device.location());
        Some(route(
            src,
            dst,
            RouteKind::Mapped,
            format!("{s} and {d} are both host-visible: one memcpy between their mappings"),
        ))
    }

    fn maps(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> usize {
        [src.host, dst.host]
            .iter()
            .filter(|h| **h == HostAccess::Mapped)
            .count()
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        src.with_host_bytes(so, len, |from| {
            dst.with_host_bytes_mut(d, len, |to| {
                to.copy_from_slice(from);
                Ok(())
            })
        })
    }
}

/// The fallback for every pair: through host memory in overlapping chunks of `CHUNK`
/// bytes.
pub struct Staged<const CHUNK: usize>;

impl<const CHUNK: usize> CopyPath for Staged<CHUNK> {
    fn name(&self) -> &'static str {
        match CHUNK >> 20 {
            1 => "staged through 1 MiB host chunks",
            8 => "staged through 8 MiB host chunks",
            _ => "staged through host chunks",
        }
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
                CHUNK >> 20
            ),
        ))
    }

    fn copy(&self, src: &Memory, so: usize, dst: &Memory, d: usize, len: usize) -> Result<()> {
        staged::copy(src, so, dst, d, len, CHUNK)
    }
}
