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

use locus::codelet::kernels::stream::{self as kernels, Precision};
use locus::codelet::{Arg, Codelet, Kernel, Launch};
use locus::{Buffer, Error, Location, Memory, Registry, Result};

use super::format_size;
use super::stream_model::{figures, verify, Real, KERNELS, SCALAR, START};
pub use super::stream_model::{StreamConfig, StreamKernel, StreamRun};

/// Work items of the Dot kernel, each summing a strided share (at most one per element).
const DOT_PARTS: usize = 1 << 16;

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
