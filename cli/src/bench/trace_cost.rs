//! What tracing costs a small copy (`locus bench --trace`): 4 KiB copies from the host to
//! each location with nobody listening, under a statistics scope, and written to a
//! trace file, timed in rotation (rounds of each in turn) so that drift on a busy machine
//! hits all three alike.

use std::fmt::Write;
use std::sync::Arc;
use std::time::Instant;

use locus::trace::{ChromeTrace, StatisticsScope};
use locus::{Location, Memory, Result};

/// Bytes per copy.
pub const BYTES: usize = 4 << 10;
/// Copies per round.
const COPIES: usize = 200;
/// Rounds of each mode.
const ROUNDS: usize = 9;

/// One pair's cost per copy, in microseconds (medians over the rounds).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TraceCost {
    /// The copy's source (the host) and destination.
    pub pair: String,
    /// Nobody listening.
    pub off_us: f64,
    /// Under a statistics scope.
    pub scope_us: f64,
    /// Written to a trace file.
    pub file_us: f64,
}

fn round(src: &Memory, dst: &Memory) -> Result<f64> {
    let start = Instant::now();
    for _ in 0..COPIES {
        src.copy_to(0, dst, 0, BYTES)?;
    }
    Ok(start.elapsed().as_secs_f64() * 1e6 / COPIES as f64)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The cost at each of `locations` (from the host); the trace file is made in the
/// temporary directory and removed.
pub fn measure(locations: &[Location]) -> Result<Vec<TraceCost>> {
    let file = std::env::temp_dir().join(format!("locus-trace-cost-{}.json", std::process::id()));
    let mut out = Vec::new();
    for &at in locations {
        let src = Arc::new(Memory::new(Location::Host, BYTES)?);
        let dst = Arc::new(Memory::new(at, BYTES)?);
        round(&src, &dst)?; // warm: the first copy's setup is not the cost measured
        let (mut off, mut scope, mut traced) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            off.push(round(&src, &dst)?);
            let s = StatisticsScope::new();
            scope.push(round(&src, &dst)?);
            drop(s);
            let t = ChromeTrace::create(&file)?;
            traced.push(round(&src, &dst)?);
            t.finish()?;
        }
        out.push(TraceCost {
            pair: format!("host -> {at}"),
            off_us: median(off),
            scope_us: median(scope),
            file_us: median(traced),
        });
    }
    let _ = std::fs::remove_file(&file);
    Ok(out)
}

/// The table the bench prints.
pub fn table(costs: &[TraceCost]) -> String {
    let mut out = format!(
        "Tracing cost: {} KiB copies, us per copy (median of {ROUNDS} rounds of {COPIES}, in rotation)\n",
        BYTES >> 10
    );
    let _ = writeln!(
        out,
        "  {:<22} {:>9} {:>17} {:>17}",
        "pair", "off", "statistics scope", "trace file"
    );
    for c in costs {
        let _ = writeln!(
            out,
            "  {:<22} {:>9.2} {:>9.2} ({:+6.2}) {:>9.2} ({:+6.2})",
            c.pair,
            c.off_us,
            c.scope_us,
            c.scope_us - c.off_us,
            c.file_us,
            c.file_us - c.off_us
        );
    }
    out
}
