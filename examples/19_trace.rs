//! See what moved, where and when: a pipeline of moves and kernels over four locations
//! (the host and one location of each other technology, or the list given), traced into
//! a file Perfetto opens, counted in a statistics scope, then summed up and drawn.
//!
//! Run: `cargo run --release --example 19_trace -- pipeline.json [host,opencl:0,...]`,
//! then open `pipeline.json` in <https://ui.perfetto.dev>, or
//! `locus trace summary pipeline.json` / `locus trace svg pipeline.json -o pipeline.svg`.

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::trace::{ChromeTrace, StatisticsScope};
use locus::{Buffer, Location, Transfer};

/// One buffer made at each location, then two rounds: every buffer moves on to the next
/// location (all moves started together) and `y += x` runs there.
fn pipeline(locations: &[Location], n: usize) -> Result<(), locus::Error> {
    let mut ys: Vec<Buffer<f32>> = locations
        .iter()
        .enumerate()
        .map(|(i, &at)| Buffer::filled(at, n, i as f32).map(|b| b.with_transfer(Transfer::Async)))
        .collect::<Result<_, _>>()?;
    let x = Buffer::filled(Location::Host, n, 1.0f32)?;
    let saxpy = kernels::saxpy();
    for round in 1..=2 {
        for (i, y) in ys.iter().enumerate() {
            y.prefetch(locations[(i + round) % locations.len()])?;
        }
        for (i, y) in ys.iter_mut().enumerate() {
            let at = locations[(i + round) % locations.len()];
            Codelet::new(&saxpy, &[at])?.call(
                &mut [
                    Arg::f32(1.0),
                    Arg::buf(&x),
                    Arg::buf_mut(y),
                    Arg::u32(n as u32),
                ],
                Launch::d1(n),
            )?;
        }
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(y.to_vec()?[n - 1], i as f32 + 2.0);
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "pipeline.json".into());
    let locations = match std::env::args().nth(2) {
        Some(list) => locus::parse_locations(&list)?,
        None => {
            let mut picked: Vec<Location> = Vec::new();
            for l in locus::available() {
                if picked.len() < 4 && !picked.iter().any(|p| p.technology() == l.technology()) {
                    picked.push(l);
                }
            }
            picked
        }
    };
    let n = 1 << 20; // 4 MiB of f32 per buffer

    // Once untraced, so the trace shows the pipeline, not the kernels' first compilation.
    pipeline(&locations, n)?;
    let trace = ChromeTrace::create(&path)?;
    let scope = StatisticsScope::new();
    pipeline(&locations, n)?;
    let counted = scope.finish();
    trace.finish()?;
    println!(
        "{} allocations ({} MiB), {} copies ({} MiB) over {}",
        counted.total_count,
        counted.total_bytes >> 20,
        counted.copies.iter().sum::<u64>(),
        counted.copied_bytes.iter().sum::<u64>() >> 20,
        locations
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("trace written to {path}: open it in https://ui.perfetto.dev, or run `locus trace summary {path}`");
    Ok(())
}
