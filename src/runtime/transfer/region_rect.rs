//! The rectangle ways of a region copy: a memcpy per run between host addresses or
//! through the host's in-place views of both memories, or one call of the runtime's own
//! rectangle copy ([`RectCopies`]); where both a memcpy through mappings and the
//! runtime's call apply, the faster is measured as the copies are made (`region_choice`).

use std::sync::Arc;

use super::region_choice::{self, Choice};
use crate::core::device::{Device, HostAccess};
use crate::core::error::Result;
use crate::core::memory::Memory;
use crate::core::rect_copy::{RectCopies, RectCopy};
use crate::core::region::{Region, RegionRuns};

/// How a rectangle copy runs between the two memories, where one does.
pub(super) enum RectWay<'a> {
    /// Both at host addresses: a memcpy per run.
    HostRows(*const u8, *mut u8),
    /// One device's rectangle call.
    Device(&'a Arc<dyn Device>, &'a dyn RectCopies, Side),
    /// Two memories the host maps in place (or reaches at their addresses): both spans
    /// mapped, a memcpy per run.
    Mapped,
}

/// Which way a device's rectangle call goes, with the host end's address.
#[derive(Clone, Copy)]
pub(super) enum Side {
    Write(*const u8),
    Read(*mut u8),
    Within,
}

/// Which rectangle way comes first where both apply: a memcpy per run through the
/// host's in-place views of both memories (`Host`), or the runtime's own call
/// (`Runtime`, the benchmark's baseline). [`rect`] measures which is faster.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Prefer {
    Host,
    Runtime,
}

pub(super) fn rect_way<'a>(
    src: &'a Memory,
    sr: &Region,
    dst: &'a Memory,
    dr: &Region,
    prefer: Prefer,
) -> Option<RectWay<'a>> {
    if let (Some(s), Some(d)) = (src.host_pointer(), dst.host_pointer()) {
        return Some(RectWay::HostRows(s, d));
    }
    let reached = |m: &Memory| m.host_access() != HostAccess::None;
    let mapped = !std::ptr::eq(src, dst) && reached(src) && reached(dst);
    if mapped && prefer == Prefer::Host {
        return Some(RectWay::Mapped);
    }
    let ready = sr.normalized().rect_ready() && dr.normalized().rect_ready();
    let rect = |m: &'a Memory| {
        let device = m.device();
        Some((device, device.rect_copies().filter(|_| ready)?))
    };
    if Arc::ptr_eq(src.device(), dst.device()) {
        if let Some((device, calls)) = rect(src) {
            return Some(RectWay::Device(device, calls, Side::Within));
        }
    }
    if let (Some(host), Some((device, calls))) = (src.host_pointer(), rect(dst)) {
        return Some(RectWay::Device(device, calls, Side::Write(host)));
    }
    if let (Some(host), Some((device, calls))) = (dst.host_pointer(), rect(src)) {
        return Some(RectWay::Device(device, calls, Side::Read(host)));
    }
    mapped.then_some(RectWay::Mapped)
}

/// A rectangle copy on the way that is faster between these two devices for this size,
/// where both a memcpy through the host's in-place views and the runtime's rectangle
/// call apply (measured as the copies are made: `region_choice`); `None` where no
/// rectangle way applies.
pub(super) fn rect(
    src: &Memory,
    sr: &Region,
    dst: &Memory,
    dr: &Region,
    runs: &RegionRuns,
) -> Option<Result<String>> {
    let host = rect_way(src, sr, dst, dr, Prefer::Host)?;
    let runtime = match host {
        RectWay::Mapped => rect_way(src, sr, dst, dr, Prefer::Runtime),
        _ => None,
    };
    let Some(runtime @ RectWay::Device(..)) = runtime else {
        return Some(by_rect(src, sr, dst, dr, host, runs));
    };
    let copy = region_choice::Copy {
        src,
        dst,
        bytes: sr.bytes().unwrap_or(0),
        run_len: runs.run_len(),
    };
    let way = region_choice::next(Choice::Rect, &copy);
    let chosen = match way {
        region_choice::Way::Runtime => runtime,
        _ => host,
    };
    let (done, took) = region_choice::timed(|| by_rect(src, sr, dst, dr, chosen, runs));
    if done.is_ok() {
        region_choice::record(Choice::Rect, &copy, way, took);
    }
    Some(done)
}

/// A rectangle copy: a memcpy per run between host addresses, or one device call.
pub(super) fn by_rect(
    src: &Memory,
    sr: &Region,
    dst: &Memory,
    dr: &Region,
    way: RectWay<'_>,
    runs: &RegionRuns,
) -> Result<String> {
    let (sr, dr) = (sr.normalized(), dr.normalized());
    let how = match way {
        RectWay::HostRows(s, d) => {
            for (so, doff, len) in runs.iter() {
                // SAFETY: both memories are at host addresses and live (borrowed here);
                // each run lies inside its memory (`check`), and source and destination
                // runs do not overlap (different memories, or regions checked apart).
                unsafe { std::ptr::copy_nonoverlapping(s.add(so), d.add(doff), len) };
            }
            format!(
                "a memcpy per run on the host ({} of {} bytes)",
                runs.count(),
                runs.run_len()
            )
        }
        RectWay::Mapped => {
            let (s0, d0) = (sr.origin[0], dr.origin[0]);
            let (s_len, d_len) = (span_len(&sr), span_len(&dr));
            src.with_host_bytes(s0, s_len, |from| {
                dst.with_host_bytes_mut(d0, d_len, |to| {
                    for (so, doff, len) in runs.iter() {
                        let (so, doff) = (so - s0, doff - d0);
                        to[doff..doff + len].copy_from_slice(&from[so..so + len]);
                    }
                    Ok(())
                })
            })?;
            format!(
                "a memcpy per run between host mappings ({} of {} bytes)",
                runs.count(),
                runs.run_len()
            )
        }
        RectWay::Device(device, rect, side) => {
            let copy = match side {
                Side::Within => RectCopy::Within {
                    src: src.native(),
                    src_region: sr,
                    dst: dst.native(),
                    dst_region: dr,
                },
                Side::Write(host) => RectCopy::Write {
                    // SAFETY: the source's host address (`rect_way`) plus the region's
                    // first byte, its span inside the memory (`check`), live while
                    // borrowed here; nothing writes it meanwhile (the destination is
                    // another memory, not at a host address).
                    src: unsafe {
                        std::slice::from_raw_parts(host.add(sr.origin[0]), span_len(&sr))
                    },
                    src_region: from_zero(&sr),
                    dst: dst.native(),
                    dst_region: dr,
                },
                Side::Read(host) => RectCopy::Read {
                    src: src.native(),
                    src_region: sr,
                    // SAFETY: the destination's host address (`rect_way`) plus the
                    // region's first byte, its span inside the memory (`check`), live
                    // while borrowed here; this call is the only writer of the span's
                    // bytes it writes (the region's rows).
                    dst: unsafe {
                        std::slice::from_raw_parts_mut(host.add(dr.origin[0]), span_len(&dr))
                    },
                    dst_region: from_zero(&dr),
                },
            };
            let call = rect.rect_call(copy.direction());
            rect.copy_rect(copy)?;
            format!("{call} at {}, one call", device.location())
        }
    };
    Ok(how)
}

/// A normalized region addressed from its own first byte (origin 0): a host slice that
/// starts there holds it.
fn from_zero(r: &Region) -> Region {
    Region {
        origin: [0, 0, 0],
        ..*r
    }
}

/// Bytes from a checked region's first byte to one past its last.
fn span_len(r: &Region) -> usize {
    r.end().unwrap_or(0) - r.start().unwrap_or(0)
}
