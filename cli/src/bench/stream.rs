//! `locus bench --stream`: BabelStream's five kernels (Copy, Mul, Add, Triad, Dot) on
//! every location through locus's codelets (`locus::codelet::kernels::stream`, sources
//! in `shaders/stream/`), in f32 and in f64 where the location has f64, reported as
//! BabelStream reports them: MB/s from the fastest run, and the min / max / average time
//! over the runs after the first. Beside them, per location, the API's own copy of the
//! same array (`Memory::copy_to` within the device: the copy engine where there is one)
//! against the Copy kernel; and the host's own loop (plain Rust over as many threads as
//! the machine has, no locus), the reference a device's numbers are read against.
//!
//! The arrays start at BabelStream's values (a = 0.1, b = 0.2, c = 0, scalar 0.4), and
//! the results are checked after the run as BabelStream checks them.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use locus::codelet::kernels::stream::{self as kernels, Precision};
use locus::codelet::{Arg, Codelet, Element, Kernel, Launch};
use locus::{Buffer, Error, Location, Memory, Registry, Result};

use super::format_size;

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
/// Work items of the Dot kernel, each summing a strided share (at most one per element).
const DOT_PARTS: usize = 1 << 16;

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

/// Refuses, before anything is allocated, arrays the machine cannot hold or the kernels
/// cannot count: three arrays of f64 at one location at a time (their host copies too,
/// for the check, where the location shares the host's memory), and the host loop's.
pub fn check(registry: &Registry, locations: &[Location], config: &StreamConfig) -> Result<()> {
    if config.times < 2 {
        return Err(Error::Invalid(format!(
            "--stream-times {}: BabelStream needs at least 2 runs (the first is not counted)",
            config.times
        )));
    }
    if config.elements == 0 || config.elements > (u32::MAX as usize) - DOT_PARTS {
        return Err(Error::Invalid(format!(
            "--stream-elements {}: the kernels count elements in 32 bits; pass 1 to {}",
            config.elements,
            u32::MAX as usize - DOT_PARTS
        )));
    }
    let array = config.elements as u128 * 8;
    let mut host_needs = 6 * array;
    for &l in locations {
        let device = registry.device(l)?;
        if device.info().shares_host_memory {
            continue;
        }
        if let Ok((free, _)) = device.available_memory() {
            if 3 * array > free as u128 {
                return Err(Error::Invalid(format!(
                    "--stream-elements {}: {l} holds three arrays of {} at once and has {} free; pass fewer elements",
                    config.elements,
                    format_size(array as u64),
                    format_size(free)
                )));
            }
        }
        host_needs = host_needs.max(3 * array);
    }
    match locus::core::host_memory::available() {
        Some((available, _)) if host_needs > available as u128 => Err(Error::Invalid(format!(
            "--stream-elements {}: three f64 arrays and their host copies ({}) do not fit in the {} the host has available; pass fewer elements",
            config.elements,
            format_size(host_needs as u64),
            format_size(available)
        ))),
        _ => Ok(()),
    }
}

/// Runs BabelStream at every location in both precisions (f64 skipped, with the reason
/// in `notes`, where a location has none), then the host loop. The options are
/// [`check`]ed first by the caller (`bench::run` does, before anything runs).
pub fn run(
    registry: &Registry,
    locations: &[Location],
    config: &StreamConfig,
    notes: &mut Vec<String>,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<StreamRun>> {
    let mut runs = Vec::new();
    for &at in locations {
        for precision in Precision::ALL {
            let largest = registry.device(at)?.info().max_allocation;
            let array = (config.elements * precision.bytes()) as u64;
            if array > largest {
                notes.push(format!(
                    "stream: {at} {} skipped: an array of {} is larger than the device's largest allocation ({})",
                    precision.name(),
                    format_size(array),
                    format_size(largest)
                ));
                continue;
            }
            progress(&format!("stream at {at}, {}", precision.name()));
            let run = match precision {
                Precision::F32 => at_location::<f32>(at, config),
                Precision::F64 => at_location::<f64>(at, config),
            };
            match run {
                Ok(run) => runs.push(run),
                Err(Skip(why)) => {
                    notes.push(format!("stream: {at} {} skipped: {why}", precision.name()))
                }
                Err(Failed(e)) => return Err(e),
            }
        }
    }
    for precision in Precision::ALL {
        progress(&format!("stream, host loop, {}", precision.name()));
        runs.push(match precision {
            Precision::F32 => super::stream_host::host_loop::<f32>(config)?,
            Precision::F64 => super::stream_host::host_loop::<f64>(config)?,
        });
    }
    Ok(runs)
}

/// Why a run did not happen: the location cannot run these kernels (said in the notes),
/// or something failed (the run's error).
enum Outcome {
    Skip(String),
    Failed(Error),
}
use Outcome::{Failed, Skip};

impl From<Error> for Outcome {
    fn from(e: Error) -> Outcome {
        Failed(e)
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

fn at_location<T: Real>(
    at: Location,
    config: &StreamConfig,
) -> std::result::Result<StreamRun, Outcome> {
    let precision = T::PRECISION;
    let set: Vec<Kernel> = vec![
        kernels::copy(precision),
        kernels::mul(precision),
        kernels::add(precision),
        kernels::triad(precision),
        kernels::dot(precision),
    ];
    if precision == Precision::F64 {
        if let Some(why) = locus::registry().device(at)?.lacks_f64() {
            return Err(Skip(why));
        }
    }
    if !set[0].has_source_for(at.technology()) {
        return Err(Skip(format!(
            "the kernels have no {} source for {}",
            precision.name(),
            at.technology()
        )));
    }
    let mut codelets = Vec::new();
    for k in &set {
        codelets.push(Codelet::new(k, &[at])?);
    }
    let n = config.elements;
    let parts = DOT_PARTS.min(n);
    let (mut a, mut b, mut c) = (
        Buffer::filled(at, n, T::of(START[0]))?,
        Buffer::filled(at, n, T::of(START[1]))?,
        Buffer::filled(at, n, T::of(START[2]))?,
    );
    let mut partial = Buffer::<T>::zeroed(at, parts)?;
    let scalar = T::of(SCALAR);
    let len = n as u32;
    let mut times: Vec<Vec<Duration>> = (0..5).map(|_| Vec::with_capacity(config.times)).collect();
    let mut sum = 0.0;
    for _ in 0..config.times {
        let args = vec![Arg::buf(&a), Arg::buf_mut(&mut c), Arg::u32(len)];
        times[0].push(timed(&codelets[0], args, Launch::d1(n))?);
        let args = vec![
            scalar.arg(),
            Arg::buf(&c),
            Arg::buf_mut(&mut b),
            Arg::u32(len),
        ];
        times[1].push(timed(&codelets[1], args, Launch::d1(n))?);
        let args = vec![
            Arg::buf(&a),
            Arg::buf(&b),
            Arg::buf_mut(&mut c),
            Arg::u32(len),
        ];
        times[2].push(timed(&codelets[2], args, Launch::d1(n))?);
        let args = vec![
            scalar.arg(),
            Arg::buf(&b),
            Arg::buf(&c),
            Arg::buf_mut(&mut a),
            Arg::u32(len),
        ];
        times[3].push(timed(&codelets[3], args, Launch::d1(n))?);
        // Dot's time includes adding the partial sums on the host, as BabelStream's does.
        let started = Instant::now();
        let args = vec![
            Arg::buf(&a),
            Arg::buf(&b),
            Arg::buf_mut(&mut partial),
            Arg::u32(len),
            Arg::u32(parts as u32),
        ];
        codelets[4]
            .call_async(args, Launch::d1(parts))?
            .synchronize()?;
        sum = partial.to_vec()?.into_iter().map(Into::<f64>::into).sum();
        times[4].push(started.elapsed());
    }
    let (ga, gb, gc) = (a.to_vec()?, b.to_vec()?, c.to_vec()?);
    verify(
        at.to_string().as_str(),
        precision,
        config,
        [&ga, &gb, &gc],
        sum,
    )?;
    drop((a, b, c, partial, ga, gb, gc));
    let array = (n * precision.bytes()) as u64;
    let mut kernels: Vec<StreamKernel> = KERNELS
        .iter()
        .zip(&times)
        .map(|((name, arrays), t)| figures(name, arrays * array, t))
        .collect();
    kernels.push(api_copy(at, array, config.times)?);
    Ok(StreamRun {
        location: at.to_string(),
        precision: precision.name().into(),
        how: "locus codelets".into(),
        elements: n as u64,
        times: config.times,
        kernels,
    })
}

/// One kernel run, start to finish.
fn timed(codelet: &Codelet<'_>, args: Vec<Arg<'_>>, launch: Launch) -> Result<Duration> {
    let started = Instant::now();
    codelet.call_async(args, launch)?.synchronize()?;
    Ok(started.elapsed())
}

/// The runtime's own copy of one array within the device, as often as the kernels ran.
fn api_copy(at: Location, array: u64, times: usize) -> Result<StreamKernel> {
    let bytes = array as usize;
    let (src, dst) = (Memory::new(at, bytes)?, Memory::new(at, bytes)?);
    src.fill(0..bytes, &[0x5A])?;
    let mut samples = Vec::with_capacity(times);
    for _ in 0..times {
        let started = Instant::now();
        src.copy_to(0, &dst, 0, bytes)?;
        samples.push(started.elapsed());
    }
    Ok(figures("API copy", 2 * array, &samples))
}

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
