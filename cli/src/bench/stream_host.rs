//! The host's own loop for `locus bench --stream`: BabelStream's five kernels in plain
//! Rust over as many threads as the machine has (each thread a contiguous share), no
//! locus in between: what the host's memory does, for reading the locations' numbers.

use std::thread;
use std::time::{Duration, Instant};

use locus::Result;

use super::stream_model::{figures, verify, Real, StreamConfig, StreamRun, KERNELS, SCALAR, START};

/// Elements summed in the element type before the sum joins an `f64` total (f32 sums of
/// millions of equal terms lose their low digits otherwise; the device kernels' partial
/// sums bound it the same way).
const BLOCK: usize = 1024;

/// Runs `f` over `threads` contiguous shares of `out`, each with its offset, and times it.
fn each_share<T: Send>(
    threads: usize,
    out: &mut [T],
    f: impl Fn(usize, &mut [T]) + Sync,
) -> Duration {
    let share = out.len().div_ceil(threads).max(1);
    let started = Instant::now();
    thread::scope(|s| {
        for (i, chunk) in out.chunks_mut(share).enumerate() {
            let f = &f;
            s.spawn(move || f(i * share, chunk));
        }
    });
    started.elapsed()
}

/// Sum of `a[i] * b[i]` over `threads` shares, and its time.
fn dot<T: Real>(threads: usize, a: &[T], b: &[T]) -> (f64, Duration) {
    let share = a.len().div_ceil(threads).max(1);
    let started = Instant::now();
    let sum = thread::scope(|s| {
        let handles: Vec<_> = a
            .chunks(share)
            .zip(b.chunks(share))
            .map(|(a, b)| {
                s.spawn(move || {
                    a.chunks(BLOCK)
                        .zip(b.chunks(BLOCK))
                        .map(|(a, b)| {
                            let block = a.iter().zip(b).fold(T::of(0.0), |s, (x, y)| s + *x * *y);
                            Into::<f64>::into(block)
                        })
                        .sum::<f64>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(f64::NAN))
            .sum()
    });
    (sum, started.elapsed())
}

/// BabelStream's run in plain Rust threads.
pub(super) fn host_loop<T: Real>(config: &StreamConfig) -> Result<StreamRun> {
    let threads = thread::available_parallelism().map_or(1, |n| n.get());
    let n = config.elements;
    let (mut a, mut b, mut c) = (
        vec![T::of(START[0]); n],
        vec![T::of(START[1]); n],
        vec![T::of(START[2]); n],
    );
    let scalar = T::of(SCALAR);
    let mut times: Vec<Vec<Duration>> = (0..5).map(|_| Vec::with_capacity(config.times)).collect();
    let mut sum = 0.0;
    for _ in 0..config.times {
        times[0].push(each_share(threads, &mut c, |at, c| {
            c.copy_from_slice(&a[at..at + c.len()])
        }));
        times[1].push(each_share(threads, &mut b, |at, b| {
            for (b, c) in b.iter_mut().zip(&c[at..]) {
                *b = scalar * *c;
            }
        }));
        times[2].push(each_share(threads, &mut c, |at, c| {
            for ((c, a), b) in c.iter_mut().zip(&a[at..]).zip(&b[at..]) {
                *c = *a + *b;
            }
        }));
        times[3].push(each_share(threads, &mut a, |at, a| {
            for ((a, b), c) in a.iter_mut().zip(&b[at..]).zip(&c[at..]) {
                *a = *b + scalar * *c;
            }
        }));
        let (s, t) = dot(threads, &a, &b);
        sum = s;
        times[4].push(t);
    }
    let precision = T::PRECISION;
    verify("the host loop", precision, config, [&a, &b, &c], sum)?;
    let array = (n * precision.bytes()) as u64;
    let mut kernels: Vec<_> = KERNELS
        .iter()
        .zip(&times)
        .map(|((name, arrays), t)| figures(name, arrays * array, t))
        .collect();
    // The host's API copy is memcpy.
    let mut samples = Vec::with_capacity(config.times);
    for _ in 0..config.times {
        let started = Instant::now();
        c.copy_from_slice(std::hint::black_box(&a));
        std::hint::black_box(&mut c);
        samples.push(started.elapsed());
    }
    kernels.push(figures("API copy", 2 * array, &samples));
    Ok(StreamRun {
        location: "host loop".into(),
        precision: precision.name().into(),
        how: format!("plain Rust, {threads} threads (no locus); API copy: memcpy on one thread"),
        elements: n as u64,
        times: config.times,
        kernels,
    })
}
