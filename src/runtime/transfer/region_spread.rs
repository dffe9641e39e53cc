//! Where no rectangle way applies, a region copy goes one copy per run (in one device's
//! batch form where one covers them) or packed: gathered into a block on the source's
//! device, one contiguous copy, scattered on the destination's. Which one is decided
//! here: by rule where one is clearly cheaper, else by timing both (`region_choice`).

use std::sync::Arc;

use super::async_copy::plan_for;
use super::copy::{copy, copy_on_plan, CopyOptions};
use super::region_choice;
use super::region_rect::rect;
use super::region_route::RegionRouteKind;
use super::region_staging;
use super::stats;
use crate::core::batch_copy::DeviceCopy;
use crate::core::capability::run_batch;
use crate::core::copy_span::CopySpan;
use crate::core::device::Device;
use crate::core::error::Result;
use crate::core::memory::Memory;
use crate::core::region::{Region, RegionRuns};
use crate::core::route::RouteKind;

/// Runs up to this many go one by one rather than packed: packing costs two device
/// copies and a block on each side.
const FEW_RUNS: usize = 8;
/// Runs this long go one by one rather than packed: each run's copy is at the
/// bandwidth, and packing would move every byte three times.
const LONG_RUN: usize = 1 << 20;
/// Between those, runs and packing are both timed (`region_choice`) and the faster kept;
/// runs copied one call each are tried only up to this many (a trial of thousands of
/// calls would cost more than the choice saves).
const RUNS_TRIAL: usize = 256;

/// Where no rectangle way applies: one copy per run, or packed.
pub(super) enum Spread<'a> {
    /// Known without measuring.
    Fixed(RegionRouteKind),
    /// Both timed as the copies are made, the faster kept.
    Measured(region_choice::Copy<'a>),
}

/// Runs within one device go as runs (packing there is the same copies and more); a few
/// runs, or long ones, go one by one; many runs copied one call each (no batch covers
/// them) go packed; the rest is measured.
pub(super) fn spread<'a>(src: &'a Memory, dst: &'a Memory, runs: &RegionRuns) -> Spread<'a> {
    let same = Arc::ptr_eq(src.device(), dst.device());
    if same || runs.count() <= FEW_RUNS || runs.run_len() >= LONG_RUN {
        return Spread::Fixed(RegionRouteKind::Runs);
    }
    let batch = |host: &Memory, device: &Memory| {
        host.host_pointer().is_some() && device.device().copy_batches().is_some()
    };
    if runs.count() > RUNS_TRIAL && !batch(src, dst) && !batch(dst, src) {
        return Spread::Fixed(RegionRouteKind::Packed);
    }
    Spread::Measured(region_choice::Copy {
        src,
        dst,
        bytes: runs.count() * runs.run_len(),
        run_len: runs.run_len(),
    })
}

pub(super) fn spread_kind(way: region_choice::Way) -> RegionRouteKind {
    match way {
        region_choice::Way::Runs => RegionRouteKind::Runs,
        _ => RegionRouteKind::Packed,
    }
}

/// One copy per run: in one device's batch form where one covers them all, else each on
/// the planner's route for a run's length.
pub(super) fn by_runs(src: &Memory, dst: &Memory, runs: &RegionRuns) -> Result<String> {
    let (s_dev, d_dev) = (src.device(), dst.device());
    let batched = |device: &Arc<dyn Device>, copies: &mut Vec<DeviceCopy<'_>>| -> Result<String> {
        run_batch(device.as_ref(), copies)?;
        stats::count(RouteKind::Direct, runs.count() * runs.run_len(), None);
        let form = if device.copy_batches().is_some() {
            "in one batch"
        } else {
            "one by one"
        };
        Ok(format!(
            "{} copies of {} bytes at {} {form}",
            runs.count(),
            runs.run_len(),
            device.location()
        ))
    };
    if Arc::ptr_eq(s_dev, d_dev) {
        let mut copies: Vec<DeviceCopy<'_>> = runs
            .iter()
            .map(|(so, doff, len)| DeviceCopy::Within {
                src: src.native(),
                src_offset: so,
                dst: dst.native(),
                dst_offset: doff,
                len,
            })
            .collect();
        return batched(s_dev, &mut copies);
    }
    if let (Some(s), true) = (src.host_pointer(), d_dev.copy_batches().is_some()) {
        let mut copies: Vec<DeviceCopy<'_>> = runs
            .iter()
            .map(|(so, doff, len)| DeviceCopy::Write {
                dst: dst.native(),
                offset: doff,
                // SAFETY: the source is at a host address, live while borrowed here; the
                // run lies inside it (`check`); nothing writes it during the batch.
                src: unsafe { std::slice::from_raw_parts(s.add(so), len) },
            })
            .collect();
        return batched(d_dev, &mut copies);
    }
    if let (Some(d), true) = (dst.host_pointer(), s_dev.copy_batches().is_some()) {
        let mut copies: Vec<DeviceCopy<'_>> = runs
            .iter()
            .map(|(so, doff, len)| DeviceCopy::Read {
                src: src.native(),
                offset: so,
                // SAFETY: the destination is at a host address, live while borrowed here;
                // each run lies inside it (`check`) and no two runs share a byte.
                dst: unsafe { std::slice::from_raw_parts_mut(d.add(doff), len) },
            })
            .collect();
        return batched(s_dev, &mut copies);
    }
    let plan = plan_for(src, dst, runs.run_len());
    for (so, doff, len) in runs.iter() {
        let span = CopySpan {
            src_offset: so,
            dst_offset: doff,
            len,
        };
        copy_on_plan(src, dst, span, &plan, None)?;
    }
    Ok(format!(
        "{} copies of {} bytes, each {}",
        runs.count(),
        runs.run_len(),
        plan.0.kind
    ))
}

/// Gathers on the source's device, one contiguous copy, scatters on the destination's.
pub(super) fn packed(
    src: &Memory,
    sr: &Region,
    dst: &Memory,
    dr: &Region,
    bytes: usize,
) -> Result<String> {
    let tight = sr.packed();
    let contiguous = |r: &Region| RegionRuns::new(r, &tight).count() == 1;
    let mut steps = Vec::new();
    let src_block = match contiguous(sr) {
        true => None,
        false => Some(region_staging::take(src.device(), bytes)?),
    };
    let (from, from_at) = match &src_block {
        None => (src, sr.start().unwrap_or(0)),
        Some(block) => {
            let how = within(src, sr, block, &tight)?;
            steps.push(format!("gathered at {} ({how})", src.location()));
            (block, 0)
        }
    };
    let dst_block = match contiguous(dr) {
        true => None,
        false => Some(region_staging::take(dst.device(), bytes)?),
    };
    let (to, to_at) = match &dst_block {
        None => (dst, dr.start().unwrap_or(0)),
        Some(block) => (block, 0),
    };
    let route = copy(from, from_at, to, to_at, bytes, CopyOptions::default())?;
    steps.push(format!("one copy of {bytes} bytes ({})", route.kind));
    if let Some(block) = &dst_block {
        let how = within(block, &tight, dst, dr)?;
        steps.push(format!("scattered at {} ({how})", dst.location()));
    }
    // Kept for the next copy once this one is done with them.
    if let Some(block) = src_block {
        region_staging::keep(src.device(), block);
    }
    if let Some(block) = dst_block {
        region_staging::keep(dst.device(), block);
    }
    Ok(steps.join(", "))
}

/// A region copy between two memories of one device (a gather or a scatter): a memcpy
/// per run at host addresses, the device's rectangle call, or its batch of runs.
fn within(src: &Memory, sr: &Region, dst: &Memory, dr: &Region) -> Result<String> {
    let runs = RegionRuns::new(sr, dr);
    match rect(src, sr, dst, dr, &runs) {
        Some(done) => done,
        None => by_runs(src, dst, &runs),
    }
}
