//! Text table, CSV and run comparison for `locus bench` reports.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{format_size, Report};
use locus::{Error, Result};

fn locations(report: &Report) -> Vec<String> {
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

/// The report as text for people: a bandwidth matrix per size, efficiency and raw-API
/// overhead at the largest size, latency at the smallest, the routes, memcpy and access
/// latencies.
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "locus bench on {} ({} threads), {} cells in {:.1} s\n",
        report.machine.host,
        report.machine.threads,
        report.cells.len(),
        report.seconds
    );
    for d in &report.machine.devices {
        let _ = writeln!(
            out,
            "  {:<10} {} [{}; {}]",
            d.location, d.name, d.kind, d.platform
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "host memcpy (the roof):");
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
            &format!("Latency, us per copy (median), {}:", format_size(small)),
            |c| Some(format!("{:.1}", c.latency_us)),
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
            "\nbandwidthTest shape (the CUDA samples' bandwidthTest, {}):",
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
    for n in &report.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The report as CSV: one row per cell, every figure.
pub fn csv(report: &Report) -> String {
    let mut out = String::from(
        "src,dst,bytes,route,runs,median_s,min_s,max_s,median_gbps,best_gbps,worst_gbps,latency_us,memcpy_gbps,efficiency_vs_memcpy,raw_api,raw_median_s,raw_median_gbps,overhead_vs_raw,legs,reason\n",
    );
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    for c in &report.cells {
        let _ =
            writeln!(
            out,
            "{},{},{},{},{},{:e},{:e},{:e},{:.4},{:.4},{:.4},{:.3},{:.4},{:.4},{},{},{},{},{},{}",
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
        );
    }
    out
}

/// Compares two reports cell by cell: new / old median bandwidth, with regressions
/// (below 0.9) marked.
pub fn compare(old: &Report, new: &Report) -> Result<String> {
    let index: BTreeMap<(&str, &str, u64), f64> = old
        .cells
        .iter()
        .map(|c| ((c.src.as_str(), c.dst.as_str(), c.bytes), c.gbps.median))
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:<12} {:>9} {:>10} {:>10} {:>7}",
        "src", "dst", "size", "old GB/s", "new GB/s", "ratio"
    );
    let (mut matched, mut slower, mut faster) = (0, 0, 0);
    for c in &new.cells {
        let Some(&before) = index.get(&(c.src.as_str(), c.dst.as_str(), c.bytes)) else {
            continue;
        };
        matched += 1;
        let ratio = c.gbps.median / before;
        let flag = if ratio < 0.9 {
            slower += 1;
            "  REGRESSION"
        } else if ratio > 1.1 {
            faster += 1;
            "  faster"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:<12} {:<12} {:>9} {:>10.2} {:>10.2} {:>7.2}{flag}",
            c.src,
            c.dst,
            format_size(c.bytes),
            before,
            c.gbps.median,
            ratio
        );
    }
    if matched == 0 {
        return Err(Error::Invalid(
            "the two reports have no cell in common (same pairs and sizes are needed)".into(),
        ));
    }
    let _ = writeln!(
        out,
        "\n{matched} cells compared: {slower} slower than 0.9x, {faster} faster than 1.1x"
    );
    Ok(out)
}
