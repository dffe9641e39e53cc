//! `locus bench --regions`: the faces a grid program moves, at every ordered pair: a row
//! face, a column face and the middle N/2 x N/2 tile of an N x N grid of f64, and the
//! x-face of an M x M x M box of f64, each copied to a contiguous block of the
//! destination. Timed in the same run four
//! ways: through `copy_region_to` (the planner's route), as a loop of one `copy_to` per
//! contiguous run (what a user without regions writes), with the runtime's own rectangle
//! call alone where one exists between the two, and as one contiguous copy of the same
//! number of bytes (the bandwidth a region copy is held to).

use serde::{Deserialize, Serialize};

use super::{measure, measure_together, Config, Stats};
use locus::{Memory, Region, Registry, Result};

/// One pair's copies of one face, four ways.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegionCell {
    /// Source location.
    pub src: String,
    /// Destination location.
    pub dst: String,
    /// Which face (`row face`, `column face`, `half tile`, `box x-face`).
    pub shape: String,
    /// Bytes the face holds.
    pub bytes: u64,
    /// Contiguous runs it is made of.
    pub runs: usize,
    /// The planner's route, as `copy_region_to` reported it.
    pub route: String,
    /// `copy_region_to`.
    pub locus: Stats,
    /// One `copy_to` per run.
    pub run_loop: Stats,
    /// The runtime's own rectangle call alone, where one exists between the two.
    pub raw_rect: Option<Stats>,
    /// What `raw_rect` called.
    pub raw_call: Option<String>,
    /// One contiguous copy of as many bytes.
    pub contiguous: Stats,
}

impl RegionCell {
    /// Microseconds (median) through locus, the loop, the raw rectangle call and the
    /// contiguous copy.
    pub fn us(&self) -> [Option<f64>; 4] {
        let us = |s: &Stats| s.median_s * 1e6;
        [
            Some(us(&self.locus)),
            Some(us(&self.run_loop)),
            self.raw_rect.as_ref().map(us),
            Some(us(&self.contiguous)),
        ]
    }
}

/// The faces, for grids of `n` x `n` and boxes of `m` x `m` x `m` f64: (name, grid bytes,
/// region).
fn shapes(n: usize, m: usize) -> Vec<(&'static str, usize, Region)> {
    vec![
        (
            "row face",
            n * n * 8,
            Region::block_2d::<f64>((n, n), (1, 0), (1, n)),
        ),
        (
            "column face",
            n * n * 8,
            Region::block_2d::<f64>((n, n), (0, 1), (n, 1)),
        ),
        (
            "half tile",
            n * n * 8,
            Region::block_2d::<f64>((n, n), (n / 4, n / 4), (n / 2, n / 2)),
        ),
        (
            "box x-face",
            m * m * m * 8,
            Region::block_3d::<f64>((m, m, m), (0, 0, 1), (m, m, 1)),
        ),
    ]
}

/// The next of the timings `measure_together` returned, one per closure.
fn next(timed: &mut impl Iterator<Item = Stats>) -> Result<Stats> {
    timed
        .next()
        .ok_or_else(|| locus::Error::Invalid("a timing is missing".into()))
}

/// Runs `--regions` on every ordered pair of `config`'s locations, with grids of `n` x
/// `n` and boxes of `m` x `m` x `m` f64.
pub(super) fn run(
    registry: &Registry,
    config: &Config,
    (n, m): (usize, usize),
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<RegionCell>> {
    let mut out = Vec::new();
    for &from in &config.locations {
        for &to in &config.locations {
            progress(&format!("regions {from} -> {to}"));
            let cap = registry
                .device(from)?
                .info()
                .max_allocation
                .min(registry.device(to)?.info().max_allocation);
            for (shape, grid_bytes, region) in shapes(n, m) {
                if grid_bytes as u64 > cap {
                    continue;
                }
                let bytes = region.bytes().unwrap_or(0);
                let src = Memory::new(from, grid_bytes)?;
                src.fill(0..grid_bytes, &[0x5A])?;
                let dst = Memory::new(to, bytes)?;
                let packed = region.packed();
                let runs = locus::core::region::RegionRuns::new(&region, &packed);
                let run_loop = measure(config.cell_seconds, config.min_runs.min(3), || {
                    for (s, d, len) in runs.iter() {
                        src.copy_to(s, &dst, d, len)?;
                    }
                    Ok(())
                })?;
                let raw_call = src.native_copy_region_to(&region, &dst, &packed).ok();
                // In rotation, so that none of the three is always timed after the same
                // other (a runtime's worker threads idle or busy).
                let mut through_locus = || src.copy_region_to(&region, &dst, &packed).map(drop);
                let mut raw = || src.native_copy_region_to(&region, &dst, &packed).map(drop);
                let mut one_copy = || src.copy_to(0, &dst, 0, bytes).map(drop);
                let mut fns: Vec<&mut dyn FnMut() -> Result<()>> =
                    vec![&mut through_locus, &mut one_copy];
                if raw_call.is_some() {
                    fns.push(&mut raw);
                }
                let mut timed =
                    measure_together(config.cell_seconds, config.min_runs, &mut fns)?.into_iter();
                let (locus, contiguous) = (next(&mut timed)?, next(&mut timed)?);
                let raw_rect = timed.next();
                // The route once the timed copies are made: where two rectangle ways
                // apply, the first copies of a process measure both.
                let route = src.copy_region_to(&region, &dst, &packed)?;
                out.push(RegionCell {
                    src: from.to_string(),
                    dst: to.to_string(),
                    shape: shape.to_string(),
                    bytes: bytes as u64,
                    runs: route.runs,
                    route: format!("{}: {}", route.kind, route.how),
                    locus,
                    run_loop,
                    raw_rect,
                    raw_call,
                    contiguous,
                });
            }
        }
    }
    Ok(out)
}

/// A microsecond figure, or a dash where there is none.
fn us_text(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

/// How many times faster `copy_region_to` was than the loop of copies per run.
fn versus_loop(c: &RegionCell) -> f64 {
    c.run_loop.median_s / c.locus.median_s.max(1e-12)
}

/// The `--regions` section of the text report.
pub(super) fn text(out: &mut String, cells: &[RegionCell]) {
    use std::fmt::Write;
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nRegions, us (median): copy_region_to, a loop of one copy per run, the runtime's own rectangle call, one contiguous copy of as many bytes:"
    );
    for c in cells {
        let [locus, run_loop, raw, contiguous] = c.us().map(us_text);
        let _ = writeln!(
            out,
            "  {:<10} -> {:<10} {:<12} {:>9} in {:>5} runs {:>9} {:>11} {:>9} {:>9}   {:.0}x the loop   {}",
            c.src,
            c.dst,
            c.shape,
            super::format_size(c.bytes),
            c.runs,
            locus,
            run_loop,
            raw,
            contiguous,
            versus_loop(c),
            c.route
        );
    }
}

/// The `--regions` section of the Markdown report.
pub(super) fn markdown(out: &mut String, cells: &[RegionCell]) {
    use std::fmt::Write;
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Regions, us (median): `copy_region_to`, a loop of one `copy_to` per contiguous run, the runtime's own rectangle call alone (where one exists between the two), one contiguous copy of as many bytes:\n"
    );
    let _ = writeln!(
        out,
        "| Pair | Face | Bytes | Runs | copy_region_to | Loop | Raw rect | Contiguous | x the loop | Route |\n|---|---|---|---|---|---|---|---|---|---|"
    );
    for c in cells {
        let [locus, run_loop, raw, contiguous] = c.us().map(us_text);
        let _ = writeln!(
            out,
            "| {} -> {} | {} | {} | {} | {locus} | {run_loop} | {raw} | {contiguous} | {:.0} | {} |",
            c.src,
            c.dst,
            c.shape,
            super::format_size(c.bytes),
            c.runs,
            versus_loop(c),
            c.route.replace('|', "/")
        );
    }
    let _ = writeln!(out);
}
