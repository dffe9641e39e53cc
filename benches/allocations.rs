//! RMM's `random_allocations` shape on every available location: 2N random operations,
//! 73% allocations (while anything is allocated), sizes uniform up to a maximum. In the
//! same run, per location and shape: the raw backend allocation (upstream), the system
//! allocator (host only: `std::alloc`, i.e. malloc), a pool, an arena and binning.
//! Like RMM's benchmark, the pool's initial size is taken before timing starts (the
//! peak the raw run reached); it still grows on demand. Every resource runs the
//! sequence once untimed (warm-up), then five times timed: the median is reported. Reports milliseconds, the
//! pool's speed-up over raw (and over malloc on the host), and the pool's footprint
//! (bytes taken from upstream) over the peak live bytes.
//!
//! `cargo bench --bench allocations [-- --quick]`

use std::alloc::Layout;
use std::sync::Arc;
use std::time::Instant;

use locus::resource::{self, Arena, Binning, Limiting, MemoryResource, Pool, Statistics, Tracking};
use locus::{Location, Memory};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The operation sequence: `Some(size)` allocates, `None(index)` frees live block `i`.
fn ops(n: usize, max: usize, seed: u64) -> Vec<Result<usize, usize>> {
    let mut rng = Rng(seed);
    let mut live = 0usize;
    let mut out = Vec::with_capacity(2 * n);
    for _ in 0..2 * n {
        if live == 0 || rng.next() % 100 < 73 {
            out.push(Ok(1 + (rng.next() as usize % max)));
            live += 1;
        } else {
            out.push(Err(rng.next() as usize % live));
            live -= 1;
        }
    }
    out
}

/// Runs the sequence against `alloc` / `free`; returns (seconds, peak live bytes).
fn run<B, E>(
    ops: &[Result<usize, usize>],
    mut alloc: impl FnMut(usize) -> Result<B, E>,
    mut free: impl FnMut(B),
    size_of: impl Fn(&B) -> usize,
) -> Result<(f64, usize), E> {
    let mut live: Vec<B> = Vec::with_capacity(ops.len());
    let (mut bytes, mut peak) = (0usize, 0usize);
    let start = Instant::now();
    for op in ops {
        match *op {
            Ok(size) => {
                live.push(alloc(size)?);
                bytes += size;
                peak = peak.max(bytes);
            }
            Err(i) => {
                let b = live.swap_remove(i);
                bytes -= size_of(&b);
                free(b);
            }
        }
    }
    for b in live.drain(..) {
        free(b);
    }
    Ok((start.elapsed().as_secs_f64(), peak))
}

/// Timed passes per measurement (after one warm-up pass); the median is reported.
const PASSES: usize = 5;

/// The median of `PASSES` results of `pass` (seconds first), after one warm-up pass
/// (first-touch page faults of the harness's and the resource's own bookkeeping land
/// there).
fn median<E>(pass: impl FnMut() -> Result<(f64, usize), E>) -> Result<(f64, usize), E> {
    locus_cli::bench::timing::median_by(PASSES, pass, |run| run.0)
}

fn resource_run(
    r: &dyn MemoryResource,
    ops: &[Result<usize, usize>],
) -> locus::Result<(f64, usize)> {
    median(|| {
        run(
            ops,
            |s| r.allocate(s, 64),
            |b| r.deallocate(b),
            |b| b.bytes(),
        )
    })
}

fn system_run(ops: &[Result<usize, usize>]) -> f64 {
    let layout = |s: usize| Layout::from_size_align(s, 64).expect("layout");
    let once = || {
        run::<_, ()>(
            ops,
            // SAFETY: non-zero sizes; each pointer is freed once with its own layout.
            |s| Ok((unsafe { std::alloc::alloc(layout(s)) }, s)),
            |(p, s)| unsafe { std::alloc::dealloc(p, layout(s)) },
            |&(_, s)| s,
        )
    };
    median(once).map(|(t, _)| t).unwrap_or(f64::NAN)
}

fn ms(r: &locus::Result<(f64, usize)>) -> String {
    match r {
        Ok((s, _)) => format!("{:.3}", s * 1e3),
        Err(e) => format!("error: {e}"),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let quick = std::env::args().any(|a| a == "--quick");
    println!(
        "{:<9} {:>5} {:>6} {:>9} {:>9} {:>9} {:>8} {:>9} {:>9} {:>9} {:>10}",
        "location",
        "N",
        "max",
        "raw ms",
        "malloc ms",
        "pool ms",
        "pool/raw",
        "pool/mall",
        "arena ms",
        "binning ms",
        "footprint"
    );
    let shapes: &[(usize, usize)] = if quick {
        &[(1000, 64 << 10)]
    } else {
        &[
            (1000, 64 << 10),
            (4000, 16 << 10),
            (10_000, 4 << 10),
            (1000, 1 << 20),
        ]
    };
    for l in locus::available() {
        for &(n, max) in shapes {
            let ops = ops(n, max, 42);
            let upstream = resource::upstream(l)?;
            let raw = resource_run(upstream.as_ref(), &ops);
            let system = (l == Location::Host).then(|| system_run(&ops));
            let peak = raw.as_ref().map_or(64 << 20, |&(_, p)| p);
            let pool = Pool::new(Arc::clone(&upstream), 8 << 20, 8 << 30);
            let pooled = pool.reserve(peak).and_then(|()| resource_run(&pool, &ops));
            let footprint = pool.held_bytes() as f64 / peak as f64;
            let arena = Arena::new(Arc::clone(&upstream), 8 << 20);
            let arena_run = resource_run(&arena, &ops);
            let large = Arc::new(Pool::new(Arc::clone(&upstream), 8 << 20, 8 << 30));
            let binned = large.reserve(peak).and_then(|()| {
                Binning::new(Arc::clone(&upstream), large.clone(), 256, 64 << 10, 256)
                    .and_then(|b| resource_run(&b, &ops))
            });
            let ratio = |a: &locus::Result<(f64, usize)>, b: f64| {
                a.as_ref()
                    .map_or("-".to_string(), |&(s, _)| format!("{:.1}x", b / s))
            };
            println!(
                "{:<9} {n:>5} {:>5}K {:>9} {:>9} {:>9} {:>8} {:>9} {:>9} {:>9} {:>10.2}",
                l.to_string(),
                max >> 10,
                ms(&raw),
                system.map_or("-".into(), |s| format!("{:.3}", s * 1e3)),
                ms(&pooled),
                raw.as_ref().map_or("-".into(), |&(r, _)| ratio(&pooled, r)),
                system.map_or("-".into(), |s| ratio(&pooled, s)),
                ms(&arena_run),
                ms(&binned),
                footprint
            );
            drop(arena);
            pool.release();
        }
    }
    adaptors(quick)?;
    threaded(quick)
}

/// What the adaptors cost over the bare pool they wrap (statistics, limiting,
/// tracking: RMM's adaptors on the allocation path) and `Memory` handles (with their
/// address-index entry), in the same run: every resource's
/// passes interleaved, nanoseconds per operation over the pool's.
fn adaptors(quick: bool) -> Result<(), Box<dyn std::error::Error>> {
    let (n, max) = (10_000, 4 << 10);
    let ops = ops(n, max, 7);
    println!(
        "\nadaptors over a pool (N {n}, max {}K, {} operations): ns per operation, and over the bare pool",
        max >> 10,
        ops.len()
    );
    println!(
        "{:<9} {:>8} {:>18} {:>18} {:>18} {:>18}",
        "location", "pool", "statistics", "limiting", "tracking", "Memory handle"
    );
    let locations = if quick {
        vec![Location::Host]
    } else {
        locus::available()
    };
    for l in locations {
        let pool: Arc<dyn MemoryResource> =
            Arc::new(Pool::new(resource::upstream(l)?, 8 << 20, 8 << 30));
        let wrapped: [Arc<dyn MemoryResource>; 4] = [
            pool.clone(),
            Arc::new(Statistics::new(pool.clone())),
            Arc::new(Limiting::new(pool.clone(), usize::MAX / 2)),
            Arc::new(Tracking::new(pool.clone())),
        ];
        // Interleaved passes: each round runs every resource once; medians per resource.
        // The last column: `Memory` handles over the bare pool (what users hold: the
        // block, its owner and its entry in the address index that `locus::lookup` reads).
        let mut times = vec![Vec::new(); wrapped.len() + 1];
        for round in 0..=2 * PASSES {
            for (r, t) in wrapped.iter().zip(times.iter_mut()) {
                let (s, _) = run(
                    &ops,
                    |s| r.allocate(s, 64),
                    |b| r.deallocate(b),
                    |b| b.bytes(),
                )?;
                if round > 0 {
                    t.push(s);
                }
            }
            let (s, _) = run(
                &ops,
                |s| Memory::from_resource_aligned(&pool, s, 64),
                drop,
                Memory::len,
            )?;
            if round > 0 {
                times[wrapped.len()].push(s);
            }
        }
        let per_op: Vec<f64> = times
            .iter_mut()
            .map(|t| {
                t.sort_by(f64::total_cmp);
                t[t.len() / 2] * 1e9 / ops.len() as f64
            })
            .collect();
        let cell = |i: usize| format!("{:.1} (+{:.1})", per_op[i], per_op[i] - per_op[0]);
        println!(
            "{:<9} {:>8.1} {:>18} {:>18} {:>18} {:>18}",
            l.to_string(),
            per_op[0],
            cell(1),
            cell(2),
            cell(3),
            cell(4)
        );
    }
    Ok(())
}

/// Threads running the sequence at once on one shared resource: a pool (one lock for
/// all) against an arena (a pool per thread). The threads start together (a barrier);
/// the time of the slowest thread, median of five after a warm-up.
fn threaded(quick: bool) -> Result<(), Box<dyn std::error::Error>> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let (n, max) = (20_000, 16 << 10);
    println!(
        "\n{threads} threads at once, each its own sequence (N {n}, max {}K) on one resource:",
        max >> 10
    );
    println!(
        "{:<9} {:>9} {:>9} {:>12}",
        "location", "pool ms", "arena ms", "arena/pool"
    );
    let sequences: Vec<_> = (0..threads).map(|t| ops(n, max, 42 + t as u64)).collect();
    let locations = if quick {
        vec![Location::Host]
    } else {
        locus::available()
    };
    for l in locations {
        let upstream = resource::upstream(l)?;
        let pool: Arc<dyn MemoryResource> =
            Arc::new(Pool::new(Arc::clone(&upstream), 8 << 20, 8 << 30));
        let arena: Arc<dyn MemoryResource> = Arc::new(Arena::new(Arc::clone(&upstream), 8 << 20));
        let mut times = Vec::new();
        for r in [&pool, &arena] {
            let at_once = || {
                let start = std::sync::Barrier::new(threads);
                std::thread::scope(|s| {
                    let runs: Vec<_> = sequences
                        .iter()
                        .map(|seq| {
                            let start = &start;
                            s.spawn(move || {
                                start.wait();
                                run(
                                    seq,
                                    |b| r.allocate(b, 64),
                                    |b| r.deallocate(b),
                                    |b| b.bytes(),
                                )
                            })
                        })
                        .collect();
                    let mut slowest = 0f64;
                    for h in runs {
                        let (t, _) = h.join().map_err(|_| {
                            locus::Error::Invalid("a bench thread panicked".into())
                        })??;
                        slowest = slowest.max(t);
                    }
                    Ok::<_, locus::Error>((slowest, 0))
                })
            };
            times.push(median(at_once).map(|(t, _)| t));
        }
        match (&times[0], &times[1]) {
            (Ok(p), Ok(a)) => println!(
                "{:<9} {:>9.3} {:>9.3} {:>11.2}x",
                l.to_string(),
                p * 1e3,
                a * 1e3,
                a / p
            ),
            (p, a) => println!("{:<9} {p:?} {a:?}", l.to_string()),
        }
    }
    Ok(())
}
