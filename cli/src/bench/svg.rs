//! `--plot FILE.svg`: the bandwidth matrix as a heat map (at the largest size), with in
//! each cell the bandwidth against size for that pair (log-scale sizes).

use std::fmt::Write;

use super::{format_size, Report};

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Colour for a fraction of the maximum bandwidth (0..1), light to dark blue.
fn colour(f: f64) -> String {
    let f = f.clamp(0.0, 1.0);
    // #f7fbff (slowest) to #6baed6 (fastest): light enough for black text.
    let (r, g, b) = (
        (247.0 - 140.0 * f) as u8,
        (251.0 - 77.0 * f) as u8,
        (255.0 - 41.0 * f) as u8,
    );
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// The SVG document.
pub fn plot(report: &Report) -> String {
    let mut locs: Vec<&str> = Vec::new();
    for c in &report.cells {
        if !locs.contains(&c.src.as_str()) {
            locs.push(&c.src);
        }
    }
    let sizes = &report.sizes;
    let large = sizes.iter().copied().max().unwrap_or(0);
    let peak = report
        .cells
        .iter()
        .map(|c| c.gbps.median)
        .chain(report.memcpy.iter().map(|m| m.gbps.median))
        .fold(f64::MIN_POSITIVE, f64::max);
    let peak_large = report
        .cells
        .iter()
        .filter(|c| c.bytes == large)
        .map(|c| c.gbps.median)
        .fold(f64::MIN_POSITIVE, f64::max);
    let floor_large = report
        .cells
        .iter()
        .filter(|c| c.bytes == large)
        .map(|c| c.gbps.median)
        .fold(peak_large, f64::min);
    let span = (peak_large - floor_large).max(f64::MIN_POSITIVE);
    let (cell, left, top) = (120.0, 110.0, 100.0);
    let n = locs.len() as f64;
    let (width, height) = (left + n * cell + 30.0, top + n * cell + 70.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="22" font-size="15" font-weight="bold">locus bench: copy bandwidth between locations, GB/s</text>"#
    );
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="40" fill="#555">colour and number: median at {} (lightest {floor_large:.1}, darkest {peak_large:.1} GB/s); red curve: {} to {}, log scale, 0 to {peak:.1} GB/s</text>"##,
        format_size(large),
        format_size(*sizes.iter().min().unwrap_or(&0)),
        format_size(large)
    );
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="58" fill="#555">{} ({} threads); rows: source, columns: destination; dashed: host memcpy</text>"##,
        escape(&report.machine.host),
        report.machine.threads
    );
    for (i, l) in locs.iter().enumerate() {
        let x = left + i as f64 * cell + cell / 2.0;
        let y = top + i as f64 * cell + cell / 2.0;
        let _ = writeln!(
            s,
            r#"<text x="{x}" y="{}" text-anchor="middle" font-weight="bold">{}</text>"#,
            top - 8.0,
            escape(l)
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{y}" text-anchor="end" font-weight="bold">{}</text>"#,
            left - 8.0,
            escape(l)
        );
    }
    let log = |b: u64| (b.max(1) as f64).log2();
    let (lo, hi) = (
        log(*sizes.iter().min().unwrap_or(&1)),
        log(large).max(log(*sizes.iter().min().unwrap_or(&1)) + 1.0),
    );
    let memcpy_points: Vec<(f64, f64)> = report
        .memcpy
        .iter()
        .map(|m| (log(m.bytes), m.gbps.median))
        .collect();
    for (r, src) in locs.iter().enumerate() {
        for (c, dst) in locs.iter().enumerate() {
            let (x0, y0) = (left + c as f64 * cell, top + r as f64 * cell);
            let pair: Vec<_> = report
                .cells
                .iter()
                .filter(|k| k.src == *src && k.dst == *dst)
                .collect();
            let at_large = pair
                .iter()
                .find(|k| k.bytes == large)
                .map(|k| k.gbps.median);
            let fill = at_large.map_or("#eeeeee".to_string(), |g| colour((g - floor_large) / span));
            let _ = writeln!(
                s,
                r#"<rect class="cell" data-src="{}" data-dst="{}" x="{x0}" y="{y0}" width="{cell}" height="{cell}" fill="{fill}" stroke="white" stroke-width="2"><title>{} -> {}: {}</title></rect>"#,
                escape(src),
                escape(dst),
                escape(src),
                escape(dst),
                pair.first().map_or(String::new(), |k| escape(&format!(
                    "{} ({})",
                    k.route, k.reason
                )))
            );
            let plot_x = |v: f64| x0 + 8.0 + (v - lo) / (hi - lo) * (cell - 16.0);
            let plot_y = |g: f64| y0 + cell - 8.0 - g / peak * (cell - 42.0);
            let line = |points: &[(f64, f64)]| {
                points
                    .iter()
                    .map(|(x, g)| format!("{:.1},{:.1}", plot_x(*x), plot_y(*g)))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let _ = writeln!(
                s,
                r##"<polyline points="{}" fill="none" stroke="#888" stroke-dasharray="3,2" stroke-width="1"/>"##,
                line(&memcpy_points)
            );
            let mut points: Vec<(f64, f64)> =
                pair.iter().map(|k| (log(k.bytes), k.gbps.median)).collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let _ = writeln!(
                s,
                r##"<polyline points="{}" fill="none" stroke="#b30000" stroke-width="2"/>"##,
                line(&points)
            );
            if let Some(g) = at_large {
                let route = pair.first().map_or("", |k| k.route.as_str());
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" text-anchor="middle" font-weight="bold">{g:.1}</text><text x="{}" y="{}" text-anchor="middle" fill="#333">{route}</text>"##,
                    x0 + cell / 2.0,
                    y0 + 16.0,
                    x0 + cell / 2.0,
                    y0 + 28.0
                );
            }
        }
    }
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="{}" fill="#555">Each cell: number = median GB/s at {}, then the route; red curve = GB/s against size (log scale); dashed = host memcpy.</text>"##,
        top + n * cell + 25.0,
        format_size(large)
    );
    let _ = writeln!(s, "</svg>");
    s
}
