//! The small-copy rule: at 4 KiB and below, no route locus takes may be slower than the
//! raw native calls that make the same copy by hand by more than 10% or 2 us, whichever
//! is larger. The raw baseline is the complete copy: one native call where one suffices,
//! a native read into host memory plus a native write for a pair of runtimes, and a call
//! that returns before its DMA lands (`cuMemcpyHtoD` from pageable memory) timed with
//! the wait that completes it (its name in the report says so). Both are timed in
//! rotation in one cell, so drift on a busy machine hits both alike.

use std::fmt::Write;

use super::{format_size, Cell, Report};

/// The largest copy the rule covers.
pub const MAX_BYTES: u64 = 4 << 10;

/// The most locus's median may exceed the raw median by, in seconds, for `raw` seconds.
pub fn allowance(raw: f64) -> f64 {
    (raw * 0.10).max(2e-6)
}

/// The cells the rule covers that break it.
pub fn breaches(report: &Report) -> Vec<&Cell> {
    covered(report)
        .filter(|c| {
            c.raw
                .as_ref()
                .is_some_and(|r| c.stats.median_s > r.stats.median_s + allowance(r.stats.median_s))
        })
        .collect()
}

fn covered(report: &Report) -> impl Iterator<Item = &Cell> {
    report
        .cells
        .iter()
        .filter(|c| c.bytes <= MAX_BYTES && c.raw.is_some())
}

/// One line on the rule for the reports (none when no cell is small enough), then a line
/// per breach.
pub fn verdict(report: &Report) -> Option<String> {
    let n = covered(report).count();
    if n == 0 {
        return None;
    }
    let broken = breaches(report);
    let mut out = if broken.is_empty() {
        format!(
            "small-copy rule (at {} and below, locus within 10% or 2 us of the raw calls): holds in all {n} cells",
            format_size(MAX_BYTES)
        )
    } else {
        format!(
            "small-copy rule (at {} and below, locus within 10% or 2 us of the raw calls): broken in {} of {n} cells",
            format_size(MAX_BYTES),
            broken.len()
        )
    };
    for c in broken {
        let raw = c.raw.as_ref().map_or(0.0, |r| r.stats.median_s);
        let _ = write!(
            out,
            "\n  {} -> {} at {}: {} {:.1} us, raw {:.1} us ({})",
            c.src,
            c.dst,
            format_size(c.bytes),
            c.route,
            c.stats.median_s * 1e6,
            raw * 1e6,
            c.raw.as_ref().map_or("", |r| r.api.as_str())
        );
    }
    Some(out)
}
