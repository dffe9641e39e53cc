//! Text table, CSV and run comparison for `locus bench` reports.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{format_size, Report};
use locus::{Error, Result};

/// The report's locations, in the order its cells list them.
pub(super) fn locations(report: &Report) -> Vec<String> {
    let mut seen = Vec::new();
    for c in &report.cells {
        if !seen.contains(&c.src) {
            seen.push(c.src.clone());
        }
    }
    seen
}

fn matrix(
    out: &mut String,
    report: &Report,
    bytes: u64,
    title: &str,
    value: impl Fn(&super::Cell) -> Option<String>,
) {
    let locs = locations(report);
    let w = locs.iter().map(String::len).max().unwrap_or(4).max(9);
    let _ = writeln!(out, "{title}");
    let _ = write!(out, "  {:w$}", "src \\ dst");
    for l in &locs {
        let _ = write!(out, " {l:>w$}");
    }
    let _ = writeln!(out);
    for s in &locs {
        let _ = write!(out, "  {s:w$}");
        for d in &locs {
            let v = report
                .cells
                .iter()
                .find(|c| &c.src == s && &c.dst == d && c.bytes == bytes)
                .and_then(&value)
                .unwrap_or_else(|| "-".into());
            let _ = write!(out, " {v:>w$}");
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out);
}

/// What a run measured, for its heading: matrix cells, or BabelStream's runs alone.
pub(super) fn measured(report: &Report) -> String {
    if report.cells.is_empty() && !report.stream.is_empty() {
        format!("{} BabelStream runs", report.stream.len())
    } else if report.cells.is_empty() && !report.regions.is_empty() {
        format!("{} region copies", report.regions.len())
    } else {
        format!("{} cells", report.cells.len())
    }
}

/// The report as text for people: a bandwidth matrix per size, efficiency and raw-API
/// overhead at the largest size, latency at the smallest, the routes, memcpy and access
/// latencies.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "locus bench on {} ({} threads), {} in {:.1} s\n",
        report.machine.host,
        report.machine.threads,
        measured(report),
        report.seconds
    );
    for d in &report.machine.devices {
        let _ = writeln!(
            out,
            "  {:<10} {} [{}; {}]",
            d.location, d.name, d.kind, d.platform
        );
    }
    if !report.memcpy.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "host memcpy (the roof):");
    }
    for m in &report.memcpy {
        let _ = writeln!(
            out,
            "  {:>8}: {:7.2} GB/s  ({:.1} us)",
            format_size(m.bytes),
            m.gbps.median,
            m.stats.median_s * 1e6
        );
    }
    let _ = writeln!(out);
    for &bytes in &report.sizes {
        matrix(
            &mut out,
            report,
            bytes,
            &format!("Bandwidth, GB/s (median), {}:", format_size(bytes)),
            |c| Some(format!("{:.2}", c.gbps.median)),
        );
    }
    if let (Some(&small), Some(&large)) = (report.sizes.iter().min(), report.sizes.iter().max()) {
        matrix(
            &mut out,
            report,
            small,
            &format!(
                "Latency, us per copy (median / 99th percentile), {}:",
                format_size(small)
            ),
            |c| Some(format!("{:.1}/{:.1}", c.latency_us, c.stats.p99_s * 1e6)),
        );
        matrix(
            &mut out,
            report,
            large,
            &format!(
                "Efficiency against memcpy (locus / memcpy bandwidth), {}:",
                format_size(large)
            ),
            |c| Some(format!("{:.2}", c.efficiency_vs_memcpy)),
        );
        matrix(
            &mut out,
            report,
            large,
            &format!(
                "Overhead against the raw native API (locus time / raw time - 1), {}:",
                format_size(large)
            ),
            |c| c.overhead_vs_raw.map(|o| format!("{:+.1}%", o * 100.0)),
        );
        let _ = writeln!(
            out,
            "Routes, legs and raw baselines ({}):",
            format_size(large)
        );
        for c in report.cells.iter().filter(|c| c.bytes == large) {
            let counters: Vec<String> = c
                .counters
                .iter()
                .map(|k| {
                    format!(
                        "{} {:.0} x {}",
                        k.route,
                        k.calls,
                        format_size(k.bytes as u64 / k.calls.max(1.0) as u64)
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "  {} -> {}: {} ({}); legs: {}; counters: {}; {:.2} GB/s [{:.2}..{:.2}]; raw {}: {}",
                c.src,
                c.dst,
                c.route,
                c.reason,
                if c.legs.is_empty() { "none".to_string() } else { c.legs.join(", ") },
                counters.join(", "),
                c.gbps.median,
                c.gbps.worst,
                c.gbps.best,
                c.raw.as_ref().map_or("-", |r| r.api.as_str()),
                c.raw.as_ref().map_or("-".into(), |r| format!("{:.2} GB/s", r.gbps.median)),
            );
        }
        let _ = writeln!(out);
    }
    if !report.access.is_empty() {
        let _ = writeln!(out, "access(host) latency:");
        for a in &report.access {
            let _ = writeln!(
                out,
                "  {:<10} {:<15} {:>8}: {:8.2} us",
                a.location,
                a.case,
                format_size(a.bytes),
                a.median_us
            );
        }
    }
    if !report.bandwidth_test.is_empty() {
        let _ = writeln!(
            out,
            "\nHost memory kinds (the CUDA samples' bandwidthTest shape, {}):",
            format_size(report.bandwidth_test[0].bytes)
        );
        for c in &report.bandwidth_test {
            let _ = writeln!(
                out,
                "  {:<10} {:<17} {:<12} {:8.2} GB/s  ({})",
                c.location, c.direction, c.host_memory, c.gbps.median, c.route
            );
        }
    }
    together(&mut out, report);
    if let Some(rule) = super::small_copies::verdict(report) {
        let _ = writeln!(out, "\n{rule}");
    }
    super::regions::text(&mut out, &report.regions);
    super::stream_output::text(&mut out, &report.stream);
    super::stream_output::text_copies(&mut out, &report.kernel_copies);
    for n in &report.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The `--bidirectional` and `--concurrent` sections.
fn together(out: &mut String, report: &Report) {
    if !report.batch.is_empty() {
        let _ = writeln!(
            out,
            "\nSmall copies ({} of {} per pair), us per copy (median): one by one, as one copy_batch, raw calls one by one:",
            report.batch[0].copies,
            format_size(report.batch[0].bytes)
        );
        for c in &report.batch {
            let [one, batch, raw] = c.us_per_copy;
            let _ = writeln!(
                out,
                "  {:<10} -> {:<10} {:>8.2} {:>8.2} {:>8.2}   batch {:.1}x faster",
                c.src,
                c.dst,
                one,
                batch,
                raw,
                one / batch
            );
        }
    }
    if !report.bidirectional.is_empty() {
        let _ = writeln!(
            out,
            "\nBoth directions at once, GB/s and us per copy (median each way; sum = both over the wall time), raw API beside:"
        );
        let _ = writeln!(
            out,
            "  {:<10} {:<10} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} | {:>8} {:>8} {:>8}",
            "a",
            "b",
            "size",
            "a->b",
            "b->a",
            "sum",
            "a->b us",
            "b->a us",
            "raw a->b",
            "raw b->a",
            "raw sum"
        );
        for c in &report.bidirectional {
            let _ = writeln!(
                out,
                "  {:<10} {:<10} {:>8} {:>8.2} {:>8.2} {:>8.2} {:>9.1} {:>9.1} | {:>8.2} {:>8.2} {:>8.2}",
                c.a,
                c.b,
                format_size(c.bytes),
                c.a_to_b_gbps,
                c.b_to_a_gbps,
                c.sum_gbps,
                c.a_to_b.median_s * 1e6,
                c.b_to_a.median_s * 1e6,
                c.raw_gbps[0],
                c.raw_gbps[1],
                c.raw_gbps[2]
            );
        }
    }
    for run in &report.concurrent {
        let _ = writeln!(
            out,
            "\nConcurrent copies, {}{}, {} each: {:.2} GB/s in aggregate",
            run.shape,
            run.center
                .as_ref()
                .map_or(String::new(), |c| format!(" ({c})")),
            format_size(run.bytes),
            run.aggregate_gbps
        );
        for c in &run.copies {
            let _ = writeln!(
                out,
                "  {:<10} -> {:<10} {:8.2} GB/s  (cv {:.0}%)",
                c.src,
                c.dst,
                c.gbps,
                c.stats.cv * 100.0
            );
        }
    }
}

/// The report as CSV: one row per cell, every figure.
pub fn csv(report: &Report) -> String {
    let mut out = String::from(
        "src,dst,bytes,route,runs,median_s,min_s,max_s,median_gbps,best_gbps,worst_gbps,latency_us,memcpy_gbps,efficiency_vs_memcpy,raw_api,raw_median_s,raw_median_gbps,overhead_vs_raw,legs,reason,p99_s,cv\n",
    );
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    for c in &report.cells {
        let _ =
            writeln!(
            out,
            "{},{},{},{},{},{:e},{:e},{:e},{:.4},{:.4},{:.4},{:.3},{:.4},{:.4},{},{},{},{},{},{},{:e},{:.4}",
            c.src,
            c.dst,
            c.bytes,
            c.route,
            c.stats.runs,
            c.stats.median_s,
            c.stats.min_s,
            c.stats.max_s,
            c.gbps.median,
            c.gbps.best,
            c.gbps.worst,
            c.latency_us,
            c.memcpy_gbps,
            c.efficiency_vs_memcpy,
            quote(c.raw.as_ref().map_or("", |r| r.api.as_str())),
            c.raw.as_ref().map_or(String::new(), |r| format!("{:e}", r.stats.median_s)),
            c.raw.as_ref().map_or(String::new(), |r| format!("{:.4}", r.gbps.median)),
            c.overhead_vs_raw.map_or(String::new(), |o| format!("{o:.4}")),
            quote(&c.legs.join("; ")),
            quote(&c.reason),
            c.stats.p99_s,
            c.stats.cv,
        );
    }
    out
}

/// How far apart two medians may be before the change is more than the noise: two
/// standard deviations of their ratio (from each cell's coefficient of variation), or
/// 10% where a report has none (made before locus recorded it).
fn spread(old: &super::Stats, new: &super::Stats) -> f64 {
    if old.cv > 0.0 && new.cv > 0.0 {
        2.0 * (old.cv * old.cv + new.cv * new.cv).sqrt()
    } else {
        0.10
    }
}

/// Compares two reports cell by cell: new / old median bandwidth, each change marked
/// (REGRESSION or faster) when it is beyond the two cells' own spread.
pub fn compare(old: &Report, new: &Report) -> Result<String> {
    let index: BTreeMap<(&str, &str, u64), &super::Cell> = old
        .cells
        .iter()
        .map(|c| ((c.src.as_str(), c.dst.as_str(), c.bytes), c))
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:<12} {:>9} {:>10} {:>10} {:>7} {:>7}",
        "src", "dst", "size", "old GB/s", "new GB/s", "ratio", "spread"
    );
    let (mut matched, mut slower, mut faster) = (0, 0, 0);
    for c in &new.cells {
        let Some(before) = index.get(&(c.src.as_str(), c.dst.as_str(), c.bytes)) else {
            continue;
        };
        matched += 1;
        let ratio = c.gbps.median / before.gbps.median;
        let spread = spread(&before.stats, &c.stats);
        let flag = if ratio < 1.0 - spread {
            slower += 1;
            "  REGRESSION"
        } else if ratio > 1.0 + spread {
            faster += 1;
            "  faster"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:<12} {:<12} {:>9} {:>10.2} {:>10.2} {:>7.2} {:>6.0}%{flag}",
            c.src,
            c.dst,
            format_size(c.bytes),
            before.gbps.median,
            c.gbps.median,
            ratio,
            spread * 100.0
        );
    }
    if matched == 0 {
        return Err(Error::Invalid(
            "the two reports have no cell in common (same pairs and sizes are needed)".into(),
        ));
    }
    let _ = writeln!(
        out,
        "\n{matched} cells compared: {slower} slower and {faster} faster beyond their spread \
         (two standard deviations of the pair of runs, from each cell's coefficient of \
         variation; 10% where a report has none)"
    );
    Ok(out)
}
