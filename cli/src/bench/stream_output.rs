//! `--stream`'s sections of the text report and of the Markdown record: per location and
//! precision, BabelStream's own table (MBytes/sec, Min, Max, Average), and one summary
//! line per run.

use std::fmt::Write;

use super::format_size;
use super::kernel_copies::KernelCopy;
use super::stream::StreamRun;

/// The heading line of a run: where, what, how big.
fn heading(run: &StreamRun) -> String {
    let element = if run.precision == "f64" { 8 } else { 4 };
    format!(
        "{} {} ({}): {} elements, {} per array, {} runs (the first not counted)",
        run.location,
        run.precision,
        run.how,
        run.elements,
        format_size(run.elements * element),
        run.times
    )
}

/// The text section: a summary in MB/s, then BabelStream's table per run.
pub(super) fn text(out: &mut String, runs: &[StreamRun]) {
    if runs.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nBabelStream (device memory bandwidth through locus's codelets), MB/s from the fastest run:"
    );
    let _ = writeln!(
        out,
        "  {:<10} {:<4} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "location", "type", "Copy", "Mul", "Add", "Triad", "Dot", "API copy"
    );
    for run in runs {
        let mut line = format!("  {:<10} {:<4}", run.location, run.precision);
        for k in &run.kernels {
            let _ = write!(line, " {:>10.1}", k.mbytes_per_sec);
        }
        let _ = writeln!(out, "{line}");
    }
    for run in runs {
        let _ = writeln!(out, "\n{}", heading(run));
        let _ = writeln!(
            out,
            "Function    MBytes/sec  Min (sec)   Max         Average"
        );
        for k in &run.kernels {
            let _ = writeln!(
                out,
                "{:<12}{:<12.3}{:<12.5}{:<12.5}{:<12.5}",
                k.kernel, k.mbytes_per_sec, k.min_s, k.max_s, k.avg_s
            );
        }
    }
}

/// The Markdown section: one table, a row per run and kernel.
pub(super) fn markdown(out: &mut String, runs: &[StreamRun]) {
    if runs.is_empty() {
        return;
    }
    let first = &runs[0];
    let _ = writeln!(
        out,
        "BabelStream's kernels through locus's codelets, {} elements per array, {} runs each (the first not counted); \"API copy\" is the runtime's own copy of one array within the device (memcpy for the host loop):\n",
        first.elements, first.times
    );
    let _ = writeln!(
        out,
        "| Location | Type | Function | MBytes/sec | Min (s) | Max (s) | Average (s) |\n|---|---|---|---|---|---|---|"
    );
    for run in runs {
        for k in &run.kernels {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {:.1} | {:.6} | {:.6} | {:.6} |",
                run.location, run.precision, k.kernel, k.mbytes_per_sec, k.min_s, k.max_s, k.avg_s
            );
        }
    }
    let _ = writeln!(out);
}

/// The text section of the kernel copies across locations.
pub(super) fn text_copies(out: &mut String, copies: &[KernelCopy]) {
    if copies.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nCopy kernel at the reader over the other location's memory in place, against the API's copy, {} (MB/s from the fastest run):",
        format_size(copies[0].bytes)
    );
    for c in copies {
        let _ = writeln!(
            out,
            "  {:<10} -> {:<10} kernel {:>10.1}   API copy {:>10.1} ({})",
            c.memory, c.by, c.kernel.mbytes_per_sec, c.api.mbytes_per_sec, c.api_route
        );
    }
}

/// The Markdown table of the kernel copies across locations.
pub(super) fn markdown_copies(out: &mut String, copies: &[KernelCopy]) {
    if copies.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "The Copy kernel at the reader over another location's memory in place, against the API's copy between the two, {} (MB/s from the fastest run):\n",
        format_size(copies[0].bytes)
    );
    let _ = writeln!(
        out,
        "| Memory at | Kernel at | Copy kernel MB/s | API copy MB/s | API route |\n|---|---|---|---|---|"
    );
    for c in copies {
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {:.1} | {:.1} | {} |",
            c.memory, c.by, c.kernel.mbytes_per_sec, c.api.mbytes_per_sec, c.api_route
        );
    }
    let _ = writeln!(out);
}
