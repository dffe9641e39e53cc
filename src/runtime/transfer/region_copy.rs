//! Copies of regions ([`Memory::copy_region_to`]): a 2-D or 3-D rectangle of one memory
//! into a rectangle of another, at any pair of locations, on one of four routes:
//! - `contiguous`: both sides' bytes follow one another, so one ordinary copy;
//! - `rect`: the runtime's own rectangle copy, one call (where both ends are its memory,
//!   or one end is memory at a host address), or a memcpy per row where both ends are at
//!   host addresses;
//! - `packed`: the region gathered into a contiguous block on the source's device, one
//!   copy of the block on the transfer matrix's route, scattered on the destination's;
//! - `runs`: one copy per contiguous run, in one device's batch form where one covers
//!   them (one submission on WebGPU), else each on the planner's route.

use super::copy::{check_copy, copy, CopyOptions};
use super::region_choice::{self, Choice};
use super::region_rect::{by_rect, rect, rect_way, Prefer};
use super::region_route::{RegionRoute, RegionRouteKind, RegionVia};
use super::region_spread::{by_runs, packed, spread, spread_kind, Spread};
use super::stats;
use crate::core::copy_span::CopySpan;
use crate::core::error::{Error, Result};
use crate::core::memory::Memory;
use crate::core::region::{regions_overlap, Region, RegionRuns};
use crate::core::route::RouteKind;

const CALL: &str = "copy_region";

/// Checks both regions, their extents and their overlap, before anything is written,
/// then waits for what host use of either memory must wait for.
fn check(src: &Memory, sr: &Region, dst: &Memory, dr: &Region) -> Result<usize> {
    let bytes = check_regions(src, sr, dst, dr)?;
    let span = |r: &Region| r.start().unwrap_or(0);
    check_copy(
        src,
        dst,
        CopySpan {
            src_offset: span(sr),
            dst_offset: span(dr),
            len: 0,
        },
    )?;
    Ok(bytes)
}

/// Checks both regions against their memories, their extents and their overlap; the
/// bytes they hold.
pub(super) fn check_regions(src: &Memory, sr: &Region, dst: &Memory, dr: &Region) -> Result<usize> {
    sr.check(src.location(), CALL, "source", src.len())?;
    dr.check(dst.location(), CALL, "destination", dst.len())?;
    let names = ["width (x, bytes)", "rows (y)", "planes (z)"];
    if let Some(i) = (0..3).find(|&i| sr.extent[i] != dr.extent[i]) {
        return Err(Error::Invalid(format!(
            "{} -> {}: {CALL}: the source region's {} is {} and the destination's {}: both \
             regions need one extent ({:?} and {:?}); nothing was copied",
            src.location(),
            dst.location(),
            names[i],
            sr.extent[i],
            dr.extent[i],
            sr.extent,
            dr.extent
        )));
    }
    if std::ptr::eq(src, dst) && regions_overlap(sr, dr) {
        return Err(Error::Invalid(format!(
            "{}: {CALL}: the source region ({sr}) and the destination region ({dr}) share \
             bytes of one memory: the result would depend on the order of the rows; copy \
             through a second memory; nothing was copied",
            src.location()
        )));
    }
    src.check("copy_region source", 0, 0)?;
    dst.check("copy_region destination", 0, 0)?;
    // The checks above bound every byte inside a memory, so the product fits.
    Ok(sr.bytes().unwrap_or(0))
}

/// The route the planner takes for a copy of these two regions.
pub fn plan_region(src: &Memory, sr: &Region, dst: &Memory, dr: &Region) -> RegionRouteKind {
    let runs = RegionRuns::new(sr, dr);
    if runs.count() == 1 {
        RegionRouteKind::Contiguous
    } else if rect_way(src, sr, dst, dr, Prefer::Host).is_some() {
        RegionRouteKind::Rect
    } else {
        match spread(src, dst, &runs) {
            Spread::Fixed(kind) => kind,
            Spread::Measured(copy) => spread_kind(region_choice::next(Choice::Spread, &copy)),
        }
    }
}

/// Copies region `sr` of `src` to region `dr` of `dst` on the route `via` names.
pub fn copy_region(
    src: &Memory,
    sr: &Region,
    dst: &Memory,
    dr: &Region,
    via: RegionVia,
) -> Result<RegionRoute> {
    let bytes = check(src, sr, dst, dr)?;
    let runs = RegionRuns::new(sr, dr);
    // The planner's route, its rectangle way found once (`rect` runs it, or says none
    // applies).
    let (kind, how) = match via {
        RegionVia::Kind(kind) => (kind, by_kind(kind, src, sr, dst, dr, &runs, bytes)?),
        RegionVia::Planner if runs.count() == 1 => {
            let kind = RegionRouteKind::Contiguous;
            (kind, by_kind(kind, src, sr, dst, dr, &runs, bytes)?)
        }
        RegionVia::Planner => match rect(src, sr, dst, dr, &runs) {
            Some(done) => (RegionRouteKind::Rect, counted(done, bytes)?),
            None => match spread(src, dst, &runs) {
                Spread::Fixed(kind) => (kind, by_kind(kind, src, sr, dst, dr, &runs, bytes)?),
                Spread::Measured(copy) => {
                    let way = region_choice::next(Choice::Spread, &copy);
                    let kind = spread_kind(way);
                    let (done, took) =
                        region_choice::timed(|| by_kind(kind, src, sr, dst, dr, &runs, bytes));
                    if done.is_ok() {
                        region_choice::record(Choice::Spread, &copy, way, took);
                    }
                    (kind, done?)
                }
            },
        },
    };
    Ok(RegionRoute {
        src: src.location(),
        dst: dst.location(),
        kind,
        runs: runs.count(),
        how,
    })
}

/// The copy on a route of `kind`; an error where that route does not apply.
fn by_kind(
    kind: RegionRouteKind,
    src: &Memory,
    sr: &Region,
    dst: &Memory,
    dr: &Region,
    runs: &RegionRuns,
    bytes: usize,
) -> Result<String> {
    Ok(match kind {
        RegionRouteKind::Contiguous if runs.count() == 1 => {
            let (s, d, len) = runs.iter().next().unwrap_or((0, 0, 0));
            copy(src, s, dst, d, len, CopyOptions::default())?.to_string()
        }
        RegionRouteKind::Contiguous => {
            return Err(not_taken(
                src,
                dst,
                kind,
                format!("it is {} runs", runs.count()),
            ))
        }
        RegionRouteKind::Rect => match rect(src, sr, dst, dr, runs) {
            Some(done) => counted(done, bytes)?,
            None => {
                return Err(not_taken(
                    src,
                    dst,
                    kind,
                    "neither runtime has a rectangle copy between these two memories (or a \
                     slice pitch is not a whole number of rows)"
                        .into(),
                ))
            }
        },
        RegionRouteKind::Runs => by_runs(src, dst, runs)?,
        RegionRouteKind::Packed => packed(src, sr, dst, dr, bytes)?,
    })
}

/// A rectangle copy's outcome, counted in the process's transfer counters.
pub(super) fn counted(done: Result<String>, bytes: usize) -> Result<String> {
    let how = done?;
    stats::count(RouteKind::Direct, bytes, None);
    Ok(how)
}

fn not_taken(src: &Memory, dst: &Memory, kind: RegionRouteKind, why: String) -> Error {
    Error::Invalid(format!(
        "{} -> {}: {CALL}: no {kind} route for these regions: {why}; use RegionVia::Planner \
         for the planner's route; nothing was copied",
        src.location(),
        dst.location()
    ))
}

impl Memory {
    /// Copies region `src_region` of this memory to region `dst_region` of `dst` with the
    /// runtime's own rectangle call alone (no planner, no counters: a benchmark's raw
    /// baseline), or a memcpy per run where both are at host addresses; returns what it
    /// called. An error where no runtime has a rectangle copy between the two.
    pub fn native_copy_region_to(
        &self,
        src_region: &Region,
        dst: &Memory,
        dst_region: &Region,
    ) -> Result<String> {
        check(self, src_region, dst, dst_region)?;
        let runs = RegionRuns::new(src_region, dst_region);
        match rect_way(self, src_region, dst, dst_region, Prefer::Runtime) {
            Some(way) => by_rect(self, src_region, dst, dst_region, way, &runs),
            None => Err(not_taken(
                self,
                dst,
                RegionRouteKind::Rect,
                "neither runtime has a rectangle copy between these two memories".into(),
            )),
        }
    }

    /// Copies region `src_region` of this memory to region `dst_region` of `dst` (one
    /// extent, any pitches), at any pair of locations, on the route the planner picks,
    /// and returns that route. Both regions are checked before anything is written.
    ///
    /// ```
    /// use locus::{Location, Memory, Region};
    ///
    /// // A 64 x 64 grid of f32; its second column goes to a 64-element vector.
    /// let grid = Memory::new(Location::Host, 64 * 64 * 4)?;
    /// let values: Vec<f32> = (0..64 * 64).map(|i| i as f32).collect();
    /// grid.write(0, bytemuck::cast_slice(&values))?;
    /// let column = Region::block_2d::<f32>((64, 64), (0, 1), (64, 1));
    /// let face = Memory::new(*locus::available().last().unwrap(), 64 * 4)?;
    /// let route = grid.copy_region_to(&column, &face, &column.packed())?;
    /// let mut back = vec![0f32; 64];
    /// face.read(0, bytemuck::cast_slice_mut(&mut back))?;
    /// assert_eq!(back[3], (3 * 64 + 1) as f32);
    /// println!("{route}");
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn copy_region_to(
        &self,
        src_region: &Region,
        dst: &Memory,
        dst_region: &Region,
    ) -> Result<RegionRoute> {
        copy_region(self, src_region, dst, dst_region, RegionVia::Planner)
    }

    /// Copies region `src_region` of `src` into region `dst_region` of this memory
    /// ([`Memory::copy_region_to`] the other way round).
    pub fn copy_region_from(
        &self,
        dst_region: &Region,
        src: &Memory,
        src_region: &Region,
    ) -> Result<RegionRoute> {
        copy_region(src, src_region, self, dst_region, RegionVia::Planner)
    }

    /// [`Memory::copy_region_to`] on the route `via` names (an error where it does not
    /// apply): how a benchmark compares the routes and a test holds each to the data.
    pub fn copy_region_to_via(
        &self,
        src_region: &Region,
        dst: &Memory,
        dst_region: &Region,
        via: RegionVia,
    ) -> Result<RegionRoute> {
        copy_region(self, src_region, dst, dst_region, via)
    }
}
