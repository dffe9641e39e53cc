//! `locus trace summary run.json`: the routes that took the time and moved the bytes,
//! the memory each location's sources held, the kernels and the waits, read from a trace
//! file locus wrote (`LOCUS_TRACE`, `locus::trace::ChromeTrace`, `locus bench --trace`).
//! A file cut short by a crash (its closing `]` missing) is read as far as it goes.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::Value;

/// One copy's key in the summary: pair, route, path and whether a queue ran it.
type CopyKey = (String, String, String, String, bool);

/// Totals of one kind of work.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Totals {
    /// How many.
    pub count: u64,
    /// Bytes (copies and allocations).
    pub bytes: u64,
    /// Microseconds (copies, launches, waits).
    pub micros: f64,
}

/// What a trace file holds, summed.
#[derive(Debug, Default)]
pub struct TraceSummary {
    /// Events read.
    pub events: usize,
    /// Whether the file was cut short (no closing `]`).
    pub truncated: bool,
    /// Copies by (source, destination, route, path, queued).
    pub copies: Vec<(CopyKey, Totals)>,
    /// Allocations by "location source", with the most bytes held at once and the bytes
    /// still held at the end.
    pub memory: Vec<(String, Totals, i64, i64)>,
    /// Kernel launches by (location, kernel).
    pub kernels: Vec<((String, String), Totals)>,
    /// Waits.
    pub waits: Totals,
    /// Copies that failed.
    pub failed_copies: u64,
}

/// A trace file's events, and whether the file was cut short (its closing `]` missing,
/// as after a crash: read as far as it goes).
pub fn parse(text: &str) -> Result<(Vec<Value>, bool), String> {
    let trimmed = text.trim_end();
    let truncated = !trimmed.ends_with(']');
    let whole = if truncated {
        format!("{}]", trimmed.trim_end_matches(','))
    } else {
        trimmed.to_string()
    };
    let value: Value = serde_json::from_str(&whole).map_err(|e| {
        format!("not a trace in the Chrome trace event format (a JSON array of events): {e}")
    })?;
    match value {
        Value::Array(events) => Ok((events, truncated)),
        _ => {
            Err("not a trace in the Chrome trace event format: the file is not a JSON array".into())
        }
    }
}

/// Reads a trace file's text (see the module's note on files cut short).
pub fn summarize(text: &str) -> Result<TraceSummary, String> {
    let (events, truncated) = parse(text)?;
    let mut copies: HashMap<CopyKey, Totals> = HashMap::new();
    let mut kernels: HashMap<(String, String), Totals> = HashMap::new();
    let mut memory: HashMap<String, (Totals, i64, i64)> = HashMap::new();
    let mut waits = Totals::default();
    let mut failed_copies = 0;
    let text_of = |v: &Value| v.as_str().unwrap_or("?").to_string();
    for e in &events {
        let args = &e["args"];
        let dur = e["dur"].as_f64().unwrap_or(0.0);
        match (e["ph"].as_str(), e["cat"].as_str()) {
            (Some("X"), Some(cat)) if cat.starts_with("copy,") && args["ok"] == false => {
                failed_copies += 1;
            }
            (Some("X"), Some(cat)) if cat.starts_with("copy,") => {
                let key = (
                    text_of(&args["src"]),
                    text_of(&args["dst"]),
                    text_of(&args["route"]),
                    text_of(&args["path"]),
                    args["queued"].as_bool().unwrap_or(false),
                );
                let t = copies.entry(key).or_default();
                t.count += 1;
                t.bytes += args["bytes"].as_u64().unwrap_or(0);
                t.micros += dur;
            }
            (Some("X"), Some("kernel")) => {
                let key = (text_of(&args["location"]), text_of(&e["name"]));
                let t = kernels.entry(key).or_default();
                t.count += 1;
                t.micros += dur;
            }
            (Some("X"), Some("wait")) => {
                waits.count += 1;
                waits.micros += dur;
            }
            (Some("i"), Some("memory")) if e["name"] == "allocate" => {
                let key = format!(
                    "{} {}",
                    text_of(&args["location"]),
                    text_of(&args["source"])
                );
                let (t, _, _) = memory.entry(key).or_default();
                t.count += 1;
                t.bytes += args["bytes"].as_u64().unwrap_or(0);
            }
            (Some("C"), Some("memory")) => {
                let held = args["bytes"].as_i64().unwrap_or(0);
                let (_, peak, now) = memory.entry(text_of(&e["name"])).or_default();
                *peak = (*peak).max(held);
                *now = held;
            }
            _ => {}
        }
    }
    let mut copies: Vec<_> = copies.into_iter().collect();
    copies.sort_by(|a, b| b.1.micros.total_cmp(&a.1.micros));
    let mut kernels: Vec<_> = kernels.into_iter().collect();
    kernels.sort_by(|a, b| b.1.micros.total_cmp(&a.1.micros));
    let mut memory: Vec<_> = memory
        .into_iter()
        .map(|(k, (t, peak, now))| (k, t, peak, now))
        .collect();
    memory.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    Ok(TraceSummary {
        events: events.len(),
        truncated,
        copies,
        memory,
        kernels,
        waits,
        failed_copies,
    })
}

fn size(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

fn millis(micros: f64) -> String {
    format!("{:.3} ms", micros / 1000.0)
}

impl TraceSummary {
    /// The report `locus trace summary` prints: the `top` copy routes by time, then
    /// memory, kernels and waits.
    pub fn report(&self, top: usize) -> String {
        let mut out = String::new();
        let moved: u64 = self.copies.iter().map(|c| c.1.bytes).sum();
        let copy_count: u64 = self.copies.iter().map(|c| c.1.count).sum();
        let copy_time: f64 = self.copies.iter().map(|c| c.1.micros).sum();
        let _ = writeln!(
            out,
            "{} events{}: {copy_count} copies moved {} in {}; {} waits took {}",
            self.events,
            if self.truncated {
                " (the file was cut short: read up to its end)"
            } else {
                ""
            },
            size(moved as f64),
            millis(copy_time),
            self.waits.count,
            millis(self.waits.micros),
        );
        if self.failed_copies > 0 {
            let _ = writeln!(out, "{} copies failed", self.failed_copies);
        }
        if !self.copies.is_empty() {
            let _ = writeln!(out, "\nCopies, by time (the top {top}):");
            let _ = writeln!(
                out,
                "  {:<28} {:<7} {:>7} {:>11} {:>12} {:>9}  path",
                "pair", "route", "copies", "bytes", "time", "GB/s"
            );
            for ((src, dst, route, path, queued), t) in self.copies.iter().take(top) {
                let rate = if t.micros > 0.0 {
                    t.bytes as f64 / t.micros / 1e3
                } else {
                    0.0
                };
                let _ = writeln!(
                    out,
                    "  {:<28} {:<7} {:>7} {:>11} {:>12} {:>9.2}  {path}{}",
                    format!("{src} -> {dst}"),
                    route,
                    t.count,
                    size(t.bytes as f64),
                    millis(t.micros),
                    rate,
                    if *queued { " (queued)" } else { "" },
                );
            }
        }
        if !self.memory.is_empty() {
            let _ = writeln!(out, "\nMemory, by the most held at once:");
            let _ = writeln!(
                out,
                "  {:<40} {:>8} {:>11} {:>11} {:>11}",
                "location and source", "allocs", "allocated", "peak held", "held at end"
            );
            for (name, t, peak, now) in &self.memory {
                let _ = writeln!(
                    out,
                    "  {:<40} {:>8} {:>11} {:>11} {:>11}",
                    name,
                    t.count,
                    size(t.bytes as f64),
                    size(*peak as f64),
                    size(*now as f64)
                );
            }
        }
        if !self.kernels.is_empty() {
            let _ = writeln!(out, "\nKernels, by time:");
            for ((location, kernel), t) in self.kernels.iter().take(top) {
                let _ = writeln!(
                    out,
                    "  {:<28} {:<24} {:>7} launches {:>12}",
                    location,
                    kernel,
                    t.count,
                    millis(t.micros)
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"locus"}},
{"name":"allocate","cat":"memory","ph":"i","s":"t","ts":1,"pid":1,"tid":1,"args":{"id":1,"location":"opencl:0","bytes":4096,"kind":"default","source":"device"}},
{"name":"opencl:0 device","cat":"memory","ph":"C","ts":1,"pid":1,"tid":1,"args":{"bytes":4096}},
{"name":"host -> opencl:0","cat":"copy,direct","ph":"X","ts":2,"dur":4,"pid":1,"tid":1,"args":{"src":"host","dst":"opencl:0","bytes":4096,"route":"direct","path":"write","queued":false}},
{"name":"host -> opencl:0","cat":"copy,direct","ph":"X","ts":7,"dur":6,"pid":1,"tid":1,"args":{"src":"host","dst":"opencl:0","bytes":4096,"route":"direct","path":"write","queued":false}},
{"name":"wait","cat":"wait","ph":"X","ts":9,"dur":3,"pid":1,"tid":1},
{"name":"opencl:0 device","cat":"memory","ph":"C","ts":20,"pid":1,"tid":1,"args":{"bytes":0}}"#;

    #[test]
    fn a_file_cut_short_is_summed_as_far_as_it_goes() {
        let s = summarize(TRACE).unwrap();
        assert!(s.truncated);
        assert_eq!(s.events, 7);
        assert_eq!(s.copies.len(), 1);
        assert_eq!(
            s.copies[0].1,
            Totals {
                count: 2,
                bytes: 8192,
                micros: 10.0
            }
        );
        assert_eq!(s.memory[0].2, 4096, "peak held");
        assert_eq!(s.memory[0].3, 0, "held at the end");
        assert_eq!(s.waits.count, 1);
        let report = s.report(10);
        assert!(
            report.contains("host -> opencl:0") && report.contains("cut short"),
            "{report}"
        );
        let closed = format!("{TRACE}\n]\n");
        assert!(!summarize(&closed).unwrap().truncated);
    }

    #[test]
    fn text_that_is_no_trace_is_a_clear_error() {
        let e = summarize("{\"a\": 1}").unwrap_err();
        assert!(e.contains("Chrome trace event format"), "{e}");
        assert!(summarize("not json").unwrap_err().contains("JSON array"));
    }
}
