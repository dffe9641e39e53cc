//! Copies that run at the same time, as nvbandwidth measures them: both directions of
//! every pair at once (`--bidirectional`), and the contention shapes one-to-all,
//! all-to-one and all pairs at once (`--concurrent`).
//!
//! Each copy runs on a thread of its own; every round starts them together (a barrier)
//! and ends when the last one is done, so a copy's time is its own and the round's wall
//! time is what all of them took together.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{format_size, Stats};
use locus::{Error, Location, Memory, Registry, Result};

/// One copy a thread of its own runs once per round.
pub type Job<'a> = Box<dyn FnMut() -> Result<()> + Send + 'a>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs every job once per round, all started together, after an untimed warm-up
/// round; rounds go on until `budget` seconds are spent and `min_runs` are timed (at most
/// 10000). Returns each job's times and the rounds' wall times (from the common start to
/// the last job's end). The first error (or panic) of any job ends the run and is
/// returned; no thread is left waiting.
pub fn at_once(budget: f64, min_runs: usize, jobs: Vec<Job<'_>>) -> Result<(Vec<Stats>, Stats)> {
    let barrier = Barrier::new(jobs.len() + 1);
    let stop = AtomicBool::new(false);
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let mut walls = Vec::new();
    let samples: Vec<Vec<Duration>> = std::thread::scope(|s| {
        let threads: Vec<_> = jobs
            .into_iter()
            .map(|mut job| {
                let (barrier, stop, failed) = (&barrier, &stop, &failed);
                s.spawn(move || {
                    let mut times = Vec::new();
                    let mut warm_up = true;
                    loop {
                        barrier.wait();
                        if stop.load(Ordering::Acquire) {
                            return times;
                        }
                        let t = Instant::now();
                        let outcome =
                            catch_unwind(AssertUnwindSafe(&mut job)).unwrap_or_else(|_| {
                                Err(Error::Invalid(
                                    "a copy panicked (a bug: please report it)".into(),
                                ))
                            });
                        let took = t.elapsed();
                        match outcome {
                            Ok(()) if !warm_up => times.push(took),
                            Ok(()) => {}
                            Err(e) => {
                                lock(failed).get_or_insert(e);
                            }
                        }
                        warm_up = false;
                        barrier.wait();
                    }
                })
            })
            .collect();
        let start = Instant::now();
        for round in 0.. {
            let timed = round > min_runs.max(1) && start.elapsed().as_secs_f64() >= budget
                || round > 10_000;
            let done = timed || lock(&failed).is_some();
            stop.store(done, Ordering::Release);
            // Read before the jobs are let go: a round's wall time then holds each of its
            // jobs' (read after, this thread may be scheduled out while they run).
            let t = Instant::now();
            barrier.wait();
            if done {
                break;
            }
            barrier.wait();
            if round > 0 {
                walls.push(t.elapsed());
            }
        }
        // A job's panic was caught in its thread, so every thread returns its times.
        threads
            .into_iter()
            .map(|t| t.join().unwrap_or_default())
            .collect()
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let each = samples
        .iter()
        .map(|times| Stats::of(times))
        .collect::<Result<Vec<_>>>()?;
    Ok((each, Stats::of(&walls)?))
}

/// Both directions of one pair at once, through locus and through the raw native API.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DuplexCell {
    /// One side.
    pub a: String,
    /// The other.
    pub b: String,
    /// Bytes each way.
    pub bytes: u64,
    /// a -> b through locus, timed while b -> a runs.
    pub a_to_b: Stats,
    /// b -> a through locus, timed while a -> b runs.
    pub b_to_a: Stats,
    /// a -> b, GB/s (median).
    pub a_to_b_gbps: f64,
    /// b -> a, GB/s (median).
    pub b_to_a_gbps: f64,
    /// Both directions' bytes over the rounds' median wall time, GB/s.
    pub sum_gbps: f64,
    /// The raw native calls each way (a -> b, then b -> a).
    pub raw_api: [String; 2],
    /// The raw calls doing the same: a -> b, b -> a and the sum, GB/s.
    pub raw_gbps: [f64; 3],
}

/// `--bidirectional`: every unordered pair of `memories` at each size, a -> b (a's
/// source into b's destination) and b -> a (b's source into a's destination) at once.
pub fn bidirectional(
    memories: &[(Location, Memory, Memory)],
    sizes: &[u64],
    budget: f64,
    min_runs: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<DuplexCell>> {
    let mut cells = Vec::new();
    for &size in sizes {
        let n = size as usize;
        for (i, (a, a_src, a_dst)) in memories.iter().enumerate() {
            for (b, b_src, b_dst) in &memories[i + 1..] {
                if n > a_src.len() || n > b_src.len() {
                    continue;
                }
                progress(&format!("{a} <-> {b}, {}", format_size(size)));
                let (each, wall) = at_once(
                    budget,
                    min_runs,
                    vec![
                        Box::new(|| a_src.copy_to(0, b_dst, 0, n).map(drop)),
                        Box::new(|| b_src.copy_to(0, a_dst, 0, n).map(drop)),
                    ],
                )?;
                let (mut scratch_ab, mut scratch_ba) = (vec![0u8; n], vec![0u8; n]);
                let (raw, raw_wall) = at_once(
                    budget,
                    min_runs,
                    vec![
                        Box::new(|| a_src.native_copy_to(b_dst, n, &mut scratch_ab)),
                        Box::new(|| b_src.native_copy_to(a_dst, n, &mut scratch_ba)),
                    ],
                )?;
                cells.push(DuplexCell {
                    a: a.to_string(),
                    b: b.to_string(),
                    bytes: size,
                    a_to_b_gbps: Stats::gbps(size, each[0].median_s),
                    b_to_a_gbps: Stats::gbps(size, each[1].median_s),
                    sum_gbps: Stats::gbps(2 * size, wall.median_s),
                    a_to_b: each[0],
                    b_to_a: each[1],
                    raw_api: [a_src.native_calls_to(b_dst), b_src.native_calls_to(a_dst)],
                    raw_gbps: [
                        Stats::gbps(size, raw[0].median_s),
                        Stats::gbps(size, raw[1].median_s),
                        Stats::gbps(2 * size, raw_wall.median_s),
                    ],
                });
            }
        }
    }
    Ok(cells)
}

/// nvbandwidth's contention shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// From each location to every other at once.
    OneToAll,
    /// From every other location into each one at once.
    AllToOne,
    /// Every ordered pair at once.
    AllPairs,
    /// The three above, one after the other.
    All,
}

impl Shape {
    /// The shapes `self` stands for.
    pub fn each(self) -> Vec<Shape> {
        match self {
            Shape::All => vec![Shape::OneToAll, Shape::AllToOne, Shape::AllPairs],
            one => vec![one],
        }
    }

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Shape::OneToAll => "one-to-all",
            Shape::AllToOne => "all-to-one",
            Shape::AllPairs => "all-pairs",
            Shape::All => "all",
        }
    }
}

/// One copy of a concurrent run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConcurrentCopy {
    /// Source location.
    pub src: String,
    /// Destination location.
    pub dst: String,
    /// Timing of this copy while the others ran.
    pub stats: Stats,
    /// GB/s (median).
    pub gbps: f64,
}

/// Copies run at once in one shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConcurrentRun {
    /// `one-to-all`, `all-to-one` or `all-pairs`.
    pub shape: String,
    /// The location every copy leaves (one-to-all) or reaches (all-to-one).
    pub center: Option<String>,
    /// Bytes per copy.
    pub bytes: u64,
    /// Each copy.
    pub copies: Vec<ConcurrentCopy>,
    /// The rounds' wall time: from the common start to the last copy's end.
    pub wall: Stats,
    /// Every copy's bytes over the median wall time, GB/s.
    pub aggregate_gbps: f64,
}

/// The buffers a concurrent run copies between: per location one source and one
/// destination per other location (no two copies write the same memory).
pub struct Endpoints {
    locations: Vec<Location>,
    sources: Vec<Memory>,
    destinations: Vec<Vec<Memory>>,
    bytes: usize,
}

impl Endpoints {
    /// Allocates them, `bytes` each; refuses first (nothing allocated) when the host
    /// cannot hold those that live in its memory.
    pub fn new(registry: &Registry, locations: &[Location], bytes: usize) -> Result<Endpoints> {
        let k = locations.len();
        if k < 2 {
            return Err(too_few("--concurrent", k));
        }
        let mut host_bytes = 0u128;
        for &l in locations {
            if registry.device(l)?.info().shares_host_memory {
                host_bytes += (k as u128) * bytes as u128;
            }
        }
        if let Some((available, _)) = locus::core::host_memory::available() {
            if host_bytes > available as u128 {
                return Err(Error::Invalid(format!(
                    "--concurrent: {k} buffers of {} per location ({} in the host's \
                     memory) do not fit in the {} it has available: pass smaller --sizes",
                    format_size(bytes as u64),
                    format_size(host_bytes.min(u64::MAX as u128) as u64),
                    format_size(available)
                )));
            }
        }
        let mut sources = Vec::new();
        let mut destinations = Vec::new();
        for &l in locations {
            let src = Memory::new(l, bytes)?;
            src.fill(0..bytes, &[0x5A])?;
            sources.push(src);
            destinations.push(
                (1..k)
                    .map(|_| Memory::new(l, bytes))
                    .collect::<Result<Vec<_>>>()?,
            );
        }
        Ok(Endpoints {
            locations: locations.to_vec(),
            sources,
            destinations,
            bytes,
        })
    }

    /// The destination at `dst` that copies from `src` write (indices into the locations).
    fn destination(&self, src: usize, dst: usize) -> &Memory {
        &self.destinations[dst][if src < dst { src } else { src - 1 }]
    }

    /// Runs `shape` (not [`Shape::All`]): one run per location for one-to-all and
    /// all-to-one, one run for all pairs.
    pub fn run(&self, shape: Shape, budget: f64, min_runs: usize) -> Result<Vec<ConcurrentRun>> {
        let k = self.locations.len();
        // (the location at the centre, the (source, destination) copies run at once)
        type Group = (Option<usize>, Vec<(usize, usize)>);
        let groups: Vec<Group> = match shape {
            Shape::OneToAll => (0..k)
                .map(|c| {
                    (
                        Some(c),
                        (0..k).filter(|&d| d != c).map(|d| (c, d)).collect(),
                    )
                })
                .collect(),
            Shape::AllToOne => (0..k)
                .map(|c| {
                    (
                        Some(c),
                        (0..k).filter(|&s| s != c).map(|s| (s, c)).collect(),
                    )
                })
                .collect(),
            Shape::AllPairs | Shape::All => vec![(
                None,
                (0..k)
                    .flat_map(|s| (0..k).filter(move |&d| d != s).map(move |d| (s, d)))
                    .collect(),
            )],
        };
        let n = self.bytes;
        let mut runs = Vec::new();
        for (center, pairs) in groups {
            let jobs: Vec<Job<'_>> = pairs
                .iter()
                .map(|&(s, d)| {
                    let (src, dst) = (&self.sources[s], self.destination(s, d));
                    Box::new(move || src.copy_to(0, dst, 0, n).map(drop)) as Job<'_>
                })
                .collect();
            let (each, wall) = at_once(budget, min_runs, jobs)?;
            let copies = pairs
                .iter()
                .zip(each)
                .map(|(&(s, d), stats)| ConcurrentCopy {
                    src: self.locations[s].to_string(),
                    dst: self.locations[d].to_string(),
                    gbps: Stats::gbps(n as u64, stats.median_s),
                    stats,
                })
                .collect::<Vec<_>>();
            runs.push(ConcurrentRun {
                shape: shape.name().into(),
                center: center.map(|c| self.locations[c].to_string()),
                bytes: n as u64,
                aggregate_gbps: Stats::gbps(n as u64 * copies.len() as u64, wall.median_s),
                copies,
                wall,
            });
        }
        Ok(runs)
    }
}

/// Refuses, before anything runs, `--bidirectional` or `--concurrent` with fewer than
/// two locations.
pub fn check(config: &super::Config) -> Result<()> {
    let k = config.locations.len();
    match (config.bidirectional, config.concurrent) {
        _ if k >= 2 => Ok(()),
        (true, _) => Err(too_few("--bidirectional", k)),
        (false, Some(_)) => Err(too_few("--concurrent", k)),
        (false, None) => Ok(()),
    }
}

/// The error for copies between locations asked of fewer than two.
fn too_few(option: &str, k: usize) -> Error {
    Error::Invalid(format!(
        "{option}: copies between locations need two or more, and {k} {} given; \
         pass --locations with several (or leave it out for every one found)",
        if k == 1 { "was" } else { "were" }
    ))
}

/// Largest bytes per copy of a concurrent run: each copy has buffers of its own, so the
/// largest `--sizes` value is used only up to this.
pub const CONCURRENT_MAX: u64 = 64 << 20;

/// `--concurrent SHAPE`: each shape `shape` stands for, at the largest of the sizes (at
/// most [`CONCURRENT_MAX`], and each device's largest allocation: said in `notes`).
pub fn contention(
    registry: &Registry,
    config: &super::Config,
    shape: Shape,
    notes: &mut Vec<String>,
) -> Result<Vec<ConcurrentRun>> {
    let largest = config.sizes.iter().copied().max().unwrap_or(CONCURRENT_MAX);
    let mut bytes = largest.min(CONCURRENT_MAX);
    for &l in &config.locations {
        bytes = bytes.min(registry.device(l)?.info().max_allocation);
    }
    if bytes < largest {
        notes.push(format!(
            "--concurrent copies {} each (the largest size is {}; every copy has buffers of \
             its own, so at most {} or the smallest device's largest allocation)",
            format_size(bytes),
            format_size(largest),
            format_size(CONCURRENT_MAX)
        ));
    }
    let endpoints = Endpoints::new(registry, &config.locations, bytes as usize)?;
    let mut runs = Vec::new();
    for one in shape.each() {
        runs.extend(endpoints.run(one, config.cell_seconds, config.min_runs)?);
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_job_runs_each_round_and_the_first_error_ends_the_run() {
        let (a, b) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let (each, wall) = at_once(
            0.0,
            3,
            vec![
                Box::new(|| {
                    a.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                }),
                Box::new(|| {
                    b.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(2));
                    Ok(())
                }),
            ],
        )
        .unwrap();
        // A warm-up round and three timed ones, every job in each.
        assert_eq!((a.into_inner(), b.into_inner()), (4, 4));
        assert!(each.iter().all(|s| s.runs == 3) && wall.runs == 3);
        assert!(
            wall.min_s >= each[1].min_s,
            "a round lasts as long as its slowest copy"
        );

        let runs = AtomicUsize::new(0);
        let err = at_once(
            10.0,
            1000,
            vec![
                Box::new(|| {
                    runs.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                }),
                Box::new(|| Err(Error::Invalid("the copy failed".into()))),
                Box::new(|| panic!("a bug")),
            ],
        )
        .unwrap_err();
        assert!(err.to_string().contains("failed") || err.to_string().contains("panicked"));
        assert_eq!(
            runs.into_inner(),
            1,
            "the run ends after the round that failed"
        );
    }
}
