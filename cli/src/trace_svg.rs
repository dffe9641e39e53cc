//! `locus trace svg run.json`: a trace file drawn as a timeline picture (one row per
//! host thread and device queue, copies coloured by route, kernels and waits), for a
//! page or a report where Perfetto cannot be opened. Files cut short are drawn as far as
//! they go.

use std::collections::HashMap;
use std::fmt::Write;

/// Left margin for the row names, the timeline's width, one row's height.
const LABEL: f64 = 190.0;
const WIDTH: f64 = 900.0;
const ROW: f64 = 26.0;

/// The fill of a slice of category `cat`.
fn fill(cat: &str) -> &'static str {
    match cat {
        "copy,direct" => "#43a047",
        "copy,peer" => "#00897b",
        "copy,mapped" => "#fbc02d",
        "copy,staged" => "#e53935",
        "kernel" => "#1e88e5",
        "wait" => "#9e9e9e",
        _ => "#bdbdbd",
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The picture of the trace in `text` (the Chrome trace format locus writes).
pub fn svg(text: &str) -> Result<String, String> {
    let (events, _) = crate::trace_summary::parse(text)?;
    // Rows in order of first use, named by their metadata.
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut rows: Vec<u64> = Vec::new();
    let mut slices = Vec::new();
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    for e in &events {
        let tid = e["tid"].as_u64().unwrap_or(0);
        match e["ph"].as_str() {
            Some("M") if e["name"] == "thread_name" => {
                names.insert(tid, e["args"]["name"].as_str().unwrap_or("?").to_string());
            }
            Some("X") => {
                let (ts, dur) = (
                    e["ts"].as_f64().unwrap_or(0.0),
                    e["dur"].as_f64().unwrap_or(0.0),
                );
                first = first.min(ts);
                last = last.max(ts + dur);
                if !rows.contains(&tid) {
                    rows.push(tid);
                }
                slices.push((tid, ts, dur, e));
            }
            _ => {}
        }
    }
    if slices.is_empty() {
        return Err("the trace holds no copies, kernels or waits to draw".into());
    }
    let span = (last - first).max(1.0);
    let x = |t: f64| LABEL + (t - first) / span * WIDTH;
    let height = 60.0 + ROW * rows.len() as f64 + 40.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="sans-serif" font-size="12">"#,
        LABEL + WIDTH + 60.0
    );
    let _ = writeln!(
        out,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    // The time axis: five ticks, in milliseconds from the first slice.
    for i in 0..=5 {
        let t = first + span * i as f64 / 5.0;
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="30" x2="{0:.1}" y2="{1:.1}" stroke="#e0e0e0"/><text x="{0:.1}" y="22" text-anchor="middle">{2:.2} ms</text>"##,
            x(t),
            height - 40.0,
            (t - first) / 1000.0
        );
    }
    for (i, tid) in rows.iter().enumerate() {
        let y = 40.0 + ROW * i as f64;
        let mut name = names
            .get(tid)
            .cloned()
            .unwrap_or_else(|| format!("track {tid}"));
        // Threads of one name (locus's workers) told apart by their track.
        if rows
            .iter()
            .filter(|r| names.get(r) == names.get(tid))
            .count()
            > 1
        {
            name = format!("{name} ({tid})");
        }
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL - 8.0,
            y + ROW * 0.6,
            escape(&name)
        );
    }
    for (tid, ts, dur, e) in &slices {
        let row = rows.iter().position(|r| r == tid).unwrap_or(0);
        let y = 40.0 + ROW * row as f64 + 3.0;
        let cat = e["cat"].as_str().unwrap_or("");
        let width = (dur / span * WIDTH).max(1.0);
        let mut title = e["name"].as_str().unwrap_or("?").to_string();
        if let Some(bytes) = e["args"]["bytes"].as_u64() {
            let _ = write!(
                title,
                ", {bytes} B, {}, {}",
                e["args"]["route"].as_str().unwrap_or("?"),
                e["args"]["path"].as_str().unwrap_or("?")
            );
        }
        let _ = write!(title, ", {dur:.1} us");
        let _ = writeln!(
            out,
            r#"<rect x="{:.2}" y="{y:.1}" width="{width:.2}" height="{:.1}" fill="{}"><title>{}</title></rect>"#,
            x(*ts),
            ROW - 6.0,
            fill(cat),
            escape(&title)
        );
    }
    // The legend.
    let legend = [
        ("copy, direct", "copy,direct"),
        ("copy, peer", "copy,peer"),
        ("copy, mapped", "copy,mapped"),
        ("copy, staged", "copy,staged"),
        ("kernel launch", "kernel"),
        ("wait", "wait"),
    ];
    for (i, (label, cat)) in legend.iter().enumerate() {
        let lx = LABEL + i as f64 * 140.0;
        let ly = height - 25.0;
        let _ = writeln!(
            out,
            r#"<rect x="{lx:.1}" y="{:.1}" width="14" height="12" fill="{}"/><text x="{:.1}" y="{ly:.1}">{label}</text>"#,
            ly - 10.0,
            fill(cat),
            lx + 18.0
        );
    }
    out.push_str("</svg>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_drawn_row_by_row_and_no_trace_is_an_error() {
        let trace = r#"[{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"main"}},
{"name":"host -> opencl:0","cat":"copy,mapped","ph":"X","ts":10,"dur":5,"pid":1,"tid":1,"args":{"bytes":64,"route":"mapped","path":"p"}},
{"name":"saxpy","cat":"kernel","ph":"X","ts":20,"dur":2,"pid":1,"tid":1000000}"#;
        let picture = svg(trace).unwrap();
        assert!(picture.starts_with("<svg") && picture.contains(">main</text>"));
        assert!(picture.contains("track 1000000") && picture.contains(fill("copy,mapped")));
        assert!(picture.contains("host -&gt; opencl:0, 64 B, mapped"));
        assert!(svg("[]").unwrap_err().contains("no copies"));
    }
}
