//! What a `locus bench --stream` run is, shared by the locations' runs (`stream`), the
//! host's own loop (`stream_host`) and the kernel copies (`kernel_copies`): BabelStream's
//! options, starting values and kernels, the figures it reports, and its check of the
//! results.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use locus::codelet::kernels::stream::Precision;
use locus::codelet::{Arg, Element};
use locus::{Error, Result};

/// BabelStream's options.
#[derive(Debug, Clone, Copy)]
pub struct StreamConfig {
    /// Elements per array (BabelStream's `--arraysize`, default 2^25).
    pub elements: usize,
    /// Runs of each kernel (BabelStream's `--numtimes`, default 100; at least 2: the
    /// first is not counted).
    pub times: usize,
}

impl Default for StreamConfig {
    fn default() -> StreamConfig {
        StreamConfig {
            elements: 1 << 25,
            times: 100,
        }
    }
}

/// One kernel's figures in BabelStream's form.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamKernel {
    /// Copy, Mul, Add, Triad, Dot, or "API copy" (the runtime's copy of one array).
    pub kernel: String,
    /// Bytes read and written per run (BabelStream's count: 2 or 3 arrays).
    pub bytes: u64,
    /// Bytes / fastest time, in MB/s (10^6 bytes).
    pub mbytes_per_sec: f64,
    /// Fastest run, seconds.
    pub min_s: f64,
    /// Slowest run, seconds.
    pub max_s: f64,
    /// Mean run, seconds.
    pub avg_s: f64,
}

/// BabelStream at one location in one precision.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamRun {
    /// Location, or "host loop" for the plain Rust reference.
    pub location: String,
    /// f32 or f64.
    pub precision: String,
    /// How the kernels ran: locus's codelets, or the host loop and its threads.
    pub how: String,
    /// Elements per array.
    pub elements: u64,
    /// Runs per kernel (the first not counted).
    pub times: usize,
    /// The kernels, in BabelStream's order, then the API copy.
    pub kernels: Vec<StreamKernel>,
}

/// BabelStream's starting values and scalar.
pub(super) const START: [f64; 3] = [0.1, 0.2, 0.0];
pub(super) const SCALAR: f64 = 0.4;
/// An element type of the kernels.
pub(super) trait Real:
    Element
    + Copy
    + Send
    + Sync
    + Into<f64>
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
{
    /// Which set of kernels.
    const PRECISION: Precision;
    /// `v` in this type.
    fn of(v: f64) -> Self;
    /// A scalar argument.
    fn arg<'a>(self) -> Arg<'a>;
}

impl Real for f32 {
    const PRECISION: Precision = Precision::F32;
    fn of(v: f64) -> f32 {
        v as f32
    }
    fn arg<'a>(self) -> Arg<'a> {
        Arg::f32(self)
    }
}

impl Real for f64 {
    const PRECISION: Precision = Precision::F64;
    fn of(v: f64) -> f64 {
        v
    }
    fn arg<'a>(self) -> Arg<'a> {
        Arg::f64(self)
    }
}

/// BabelStream's figures from the run times (the first run not counted).
pub(super) fn figures(kernel: &str, bytes: u64, times: &[Duration]) -> StreamKernel {
    let counted = if times.len() > 1 { &times[1..] } else { times };
    let seconds: Vec<f64> = counted.iter().map(Duration::as_secs_f64).collect();
    let min_s = seconds.iter().copied().fold(f64::INFINITY, f64::min);
    let max_s = seconds.iter().copied().fold(0.0, f64::max);
    let avg_s = seconds.iter().sum::<f64>() / seconds.len().max(1) as f64;
    StreamKernel {
        kernel: kernel.into(),
        bytes,
        mbytes_per_sec: bytes as f64 / min_s.max(1e-12) / 1e6,
        min_s,
        max_s,
        avg_s,
    }
}

/// The five kernels' names, in BabelStream's order, with the arrays each touches.
pub(super) const KERNELS: [(&str, u64); 5] = [
    ("Copy", 2),
    ("Mul", 2),
    ("Add", 3),
    ("Triad", 3),
    ("Dot", 2),
];

/// BabelStream's check: the arrays against the same recurrence on scalars (mean
/// absolute error within 100 epsilon), the dot product within a relative 1e-8 (f64) or
/// 1e-4 (f32: its partial sums round). A wrong result is an error naming the location.
pub(super) fn verify<T: Into<f64> + Copy>(
    at: &str,
    precision: Precision,
    config: &StreamConfig,
    arrays: [&[T]; 3],
    sum: f64,
) -> Result<()> {
    let round = |v: f64| match precision {
        Precision::F32 => v as f32 as f64,
        Precision::F64 => v,
    };
    let [mut a, mut b, mut c] = START.map(round);
    let s = round(SCALAR);
    for _ in 0..config.times {
        c = a;
        b = round(s * c);
        c = round(a + b);
        a = round(b + round(s * c));
    }
    let gold_sum = a * b * config.elements as f64;
    let epsilon = match precision {
        Precision::F32 => f32::EPSILON as f64,
        Precision::F64 => f64::EPSILON,
    };
    for (name, values, gold) in [
        ("a", arrays[0], a),
        ("b", arrays[1], b),
        ("c", arrays[2], c),
    ] {
        let error = values
            .iter()
            .map(|v| ((*v).into() - gold).abs())
            .sum::<f64>()
            / values.len().max(1) as f64;
        if error > 100.0 * epsilon * gold.abs().max(1.0) {
            return Err(Error::Invalid(format!(
                "stream at {at}, {}: array {name} is wrong after {} runs: mean error {error:e} against {gold}; the kernels' results are not to be trusted there",
                precision.name(),
                config.times
            )));
        }
    }
    let tolerance = match precision {
        Precision::F32 => 1e-4,
        Precision::F64 => 1e-8,
    };
    if ((sum - gold_sum) / gold_sum).abs() > tolerance {
        return Err(Error::Invalid(format!(
            "stream at {at}, {}: dot is {sum}, expected {gold_sum}; the kernels' results are not to be trusted there",
            precision.name()
        )));
    }
    Ok(())
}
