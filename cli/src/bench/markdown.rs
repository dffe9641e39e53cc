//! `locus bench --markdown`: the report as a Markdown record for documents: the command
//! that made it and when, the machine and its devices, the host's memcpy, a bandwidth
//! matrix per size, efficiency against memcpy and against each raw native API at the
//! largest size, the host memory kinds per device, and the duplex and concurrent runs
//! when there were any.

use std::fmt::Write;

use super::output::locations;
use super::{format_size, Cell, Report};

/// A UTC date `YYYY-MM-DD` from seconds since the Unix epoch (the civil calendar).
fn date(unix_time: u64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let z = (unix_time / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// A bandwidth with two decimals, or three significant digits below 0.1 GB/s (a slow
/// small copy must not read as zero).
fn gbps(v: f64) -> String {
    if v >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.3e}")
    }
}

/// One matrix: a row per source, a column per destination, `value` of each cell.
fn matrix(
    out: &mut String,
    report: &Report,
    bytes: u64,
    title: &str,
    value: impl Fn(&Cell) -> Option<String>,
) {
    let locs = locations(report);
    let _ = writeln!(out, "{title}\n");
    let _ = writeln!(out, "| src \\ dst | {} |", locs.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(locs.len()));
    for s in &locs {
        let row: Vec<String> = locs
            .iter()
            .map(|d| {
                report
                    .cells
                    .iter()
                    .find(|c| &c.src == s && &c.dst == d && c.bytes == bytes)
                    .and_then(&value)
                    .unwrap_or_else(|| "-".into())
            })
            .collect();
        let _ = writeln!(out, "| {s} | {} |", row.join(" | "));
    }
    let _ = writeln!(out);
}

/// The report as Markdown; `command` is the command line that made it.
pub fn markdown(report: &Report, command: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# locus bench on {}\n", report.machine.host);
    let _ = writeln!(
        out,
        "Made by `{command}` on {} (UTC): {} in {:.1} s, {} hardware threads.\n",
        date(report.unix_time),
        super::output::measured(report),
        report.seconds,
        report.machine.threads
    );
    let _ = writeln!(
        out,
        "| Location | Device | Platform | Kind | Version |\n|---|---|---|---|---|"
    );
    for d in &report.machine.devices {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            d.location,
            d.name,
            d.platform,
            d.kind,
            d.version.as_deref().unwrap_or("-")
        );
    }
    for (technology, why) in &report.machine.missing {
        let _ = writeln!(out, "| {technology} | missing: {why} | | | |");
    }
    let _ = writeln!(out);
    if !report.memcpy.is_empty() {
        let _ = writeln!(out, "The host's memcpy (the roof), GB/s (median):\n");
        let _ = writeln!(out, "| Size | GB/s |\n|---|---|");
        for m in &report.memcpy {
            let _ = writeln!(out, "| {} | {:.2} |", format_size(m.bytes), m.gbps.median);
        }
        let _ = writeln!(out);
    }
    for &bytes in &report.sizes {
        let title = format!(
            "Bandwidth at {}, GB/s (median; rows: source, columns: destination):",
            format_size(bytes)
        );
        matrix(&mut out, report, bytes, &title, |c| {
            Some(gbps(c.gbps.median))
        });
    }
    if let Some(&largest) = report.sizes.iter().max() {
        let size = format_size(largest);
        matrix(
            &mut out,
            report,
            largest,
            &format!("Against memcpy at {size} (locus / memcpy):"),
            |c| Some(format!("{:.2}", c.efficiency_vs_memcpy)),
        );
        matrix(
            &mut out,
            report,
            largest,
            &format!("Against the raw native API at {size} (locus time / raw time - 1):"),
            |c| c.overhead_vs_raw.map(|o| format!("{:+.1}%", o * 100.0)),
        );
    }
    if !report.bandwidth_test.is_empty() {
        let _ = writeln!(
            out,
            "Host memory kinds, {} (the CUDA samples' bandwidthTest shape), GB/s (median):\n",
            format_size(report.bandwidth_test[0].bytes)
        );
        let _ = writeln!(
            out,
            "| Device | Direction | Host memory | GB/s | Route |\n|---|---|---|---|---|"
        );
        for c in &report.bandwidth_test {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {:.2} | {} |",
                c.location, c.direction, c.host_memory, c.gbps.median, c.route
            );
        }
        let _ = writeln!(out);
    }
    if !report.batch.is_empty() {
        let _ = writeln!(
            out,
            "Small copies ({} of {} per pair), us per copy (median):\n",
            report.batch[0].copies,
            format_size(report.batch[0].bytes)
        );
        let _ = writeln!(
            out,
            "| Pair | One by one | One copy_batch | Raw calls one by one |\n|---|---|---|---|"
        );
        for c in &report.batch {
            let [one, batch, raw] = c.us_per_copy;
            let _ = writeln!(
                out,
                "| {} -> {} | {one:.2} | {batch:.2} | {raw:.2} |",
                c.src, c.dst
            );
        }
        let _ = writeln!(out);
    }
    if !report.bidirectional.is_empty() {
        let _ = writeln!(out, "Both directions at once, GB/s (median):\n");
        let _ = writeln!(out, "| Pair | Size | a -> b | b -> a |\n|---|---|---|---|");
        for d in &report.bidirectional {
            let _ = writeln!(
                out,
                "| {} <-> {} | {} | {:.2} | {:.2} |",
                d.a,
                d.b,
                format_size(d.bytes),
                d.a_to_b_gbps,
                d.b_to_a_gbps
            );
        }
        let _ = writeln!(out);
    }
    if !report.concurrent.is_empty() {
        let _ = writeln!(out, "Copies at once, aggregate GB/s:\n");
        let _ = writeln!(
            out,
            "| Shape | Center | Copies | Size each | Aggregate |\n|---|---|---|---|---|"
        );
        for r in &report.concurrent {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.2} |",
                r.shape,
                r.center.as_deref().unwrap_or("-"),
                r.copies.len(),
                format_size(r.bytes),
                r.aggregate_gbps
            );
        }
        let _ = writeln!(out);
    }
    if let Some(rule) = super::small_copies::verdict(report) {
        let _ = writeln!(out, "{}\n", rule.replace("\n  ", "\n- "));
    }
    super::regions::markdown(&mut out, &report.regions);
    super::stream_output::markdown(&mut out, &report.stream);
    super::stream_output::markdown_copies(&mut out, &report.kernel_copies);
    for note in &report.notes {
        let _ = writeln!(out, "- {note}");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_the_civil_calendar_s() {
        assert_eq!(super::date(0), "1970-01-01");
        assert_eq!(super::date(951_782_400), "2000-02-29");
        assert_eq!(super::date(1_795_651_200), "2026-11-26");
    }
}
