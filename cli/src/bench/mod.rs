//! `locus bench`: the cross-backend transfer matrix, timed through the library and
//! against host memcpy and each backend's raw native API in the same run.
//!
//! For every ordered pair of locations and every size, the copy
//! `Memory::copy_to` (the planner's route) is timed: one warm-up, then repeated runs
//! until the per-cell time budget is spent. Each cell records the route and reason, the
//! legs the bytes took and the transfer counters, the median / min / max bandwidth, the
//! latency, the efficiency against memcpy of the same size, and the overhead against the
//! raw native transfer (what a user would write by hand: one native call, or a native
//! read into a host buffer plus a native write out of it for a cross-backend pair).

mod access;
pub mod bandwidth_test;
pub mod batch;
pub mod calibrate;
pub mod kernel_copies;
mod machine;
mod markdown;
mod memories;
#[cfg(feature = "mpi")]
pub mod mpi;
mod output;
pub mod regions;
pub mod small_copies;
mod stats;
pub mod stream;
mod stream_host;
mod stream_model;
mod stream_output;
mod svg;
pub mod timing;
pub mod together;
pub mod trace_cost;

use std::time::Instant;

use serde::{Deserialize, Serialize};

use machine::machine;
pub use machine::{DeviceDescription, Machine};
pub use markdown::markdown;
pub(crate) use memories::{check_memory, pair_memories};
pub use output::{compare, csv, table};
pub use stats::{format_size, parse_size, parse_sizes, Stats};
pub use svg::plot;

use locus::{Error, Result};
use locus::{Location, Memory, Registry, RouteKind, TransferStats};
use timing::{measure, measure_together};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Locations to include (every ordered pair of them).
    pub locations: Vec<Location>,
    /// Transfer sizes in bytes.
    pub sizes: Vec<u64>,
    /// Time budget per measurement (locus or raw) of one cell.
    pub cell_seconds: f64,
    /// Minimum timed runs per measurement (after the warm-up).
    pub min_runs: usize,
    /// Stop starting new cells once this much time has passed.
    pub max_seconds: Option<f64>,
    /// Also both directions of every pair at once (`--bidirectional`).
    pub bidirectional: bool,
    /// Also copies at once in these shapes (`--concurrent`).
    pub concurrent: Option<together::Shape>,
    /// Also many small copies per pair, one by one and as one batch (`--batch`).
    pub batch: bool,
    /// Also BabelStream's kernels at every location (`--stream`).
    pub stream: Option<stream::StreamConfig>,
    /// Also the faces of a grid of this many f64 per side, and of a box of a sixteenth
    /// of it, at every pair (`--regions`).
    pub regions: Option<usize>,
    /// The transfer matrix and the modes around it; false runs only `stream`
    /// (`--stream` alone).
    pub matrix: bool,
}

impl Config {
    /// The default sweep: 4 KiB to 256 MiB, every available location.
    pub fn default_for(registry: &Registry) -> Config {
        Config {
            locations: registry.locations(),
            sizes: vec![4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20],
            cell_seconds: 0.15,
            min_runs: 5,
            max_seconds: Some(110.0),
            bidirectional: false,
            concurrent: None,
            batch: false,
            stream: None,
            regions: None,
            matrix: true,
        }
    }

    /// `--quick`: three sizes and a short budget (seconds in all).
    pub fn quick(registry: &Registry) -> Config {
        Config {
            sizes: vec![4 << 10, 1 << 20, 8 << 20],
            cell_seconds: 0.01,
            min_runs: 2,
            max_seconds: Some(60.0),
            ..Config::default_for(registry)
        }
    }
}

/// Bandwidths in GB/s derived from [`Stats`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Bandwidth {
    /// From the median time.
    pub median: f64,
    /// From the fastest run (the best bandwidth).
    pub best: f64,
    /// From the slowest run.
    pub worst: f64,
}

impl Bandwidth {
    fn of(bytes: u64, s: &Stats) -> Bandwidth {
        Bandwidth {
            median: Stats::gbps(bytes, s.median_s),
            best: Stats::gbps(bytes, s.min_s),
            worst: Stats::gbps(bytes, s.max_s),
        }
    }
}

/// Copies and bytes over one route kind, per copy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Counter {
    /// Route kind.
    pub route: String,
    /// Copies per transfer.
    pub calls: f64,
    /// Bytes per transfer.
    pub bytes: f64,
}

/// A raw native baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RawResult {
    /// The native calls timed.
    pub api: String,
    /// Timing.
    pub stats: Stats,
    /// Bandwidth.
    pub gbps: Bandwidth,
}

/// One cell of the matrix: a pair at one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// Source location.
    pub src: String,
    /// Destination location.
    pub dst: String,
    /// Bytes per copy.
    pub bytes: u64,
    /// Route kind the planner chose.
    pub route: String,
    /// Why.
    pub reason: String,
    /// The legs the bytes took.
    pub legs: Vec<String>,
    /// Transfer counters per copy.
    pub counters: Vec<Counter>,
    /// Timing through locus.
    pub stats: Stats,
    /// Bandwidth through locus.
    pub gbps: Bandwidth,
    /// Median time per copy in microseconds.
    pub latency_us: f64,
    /// memcpy bandwidth at this size (median), timed in rotation with this cell.
    pub memcpy_gbps: f64,
    /// locus bandwidth / memcpy bandwidth (medians).
    pub efficiency_vs_memcpy: f64,
    /// The raw native baseline for this pair.
    pub raw: Option<RawResult>,
    /// locus time / raw time - 1 (medians): positive means locus is slower.
    pub overhead_vs_raw: Option<f64>,
}

/// memcpy at one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemcpyResult {
    /// Bytes.
    pub bytes: u64,
    /// Timing.
    pub stats: Stats,
    /// Bandwidth.
    pub gbps: Bandwidth,
}

/// Time of one `access()` call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AccessTiming {
    /// Where the buffer lives.
    pub location: String,
    /// Where it is accessed (always the host here).
    pub accessor: String,
    /// "in-place" or "cached replica".
    pub case: String,
    /// Buffer size.
    pub bytes: u64,
    /// Median time per access in microseconds.
    pub median_us: f64,
}

/// Everything a run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Format version.
    pub version: u32,
    /// When (seconds since the Unix epoch).
    pub unix_time: u64,
    /// The machine.
    pub machine: Machine,
    /// Sizes swept.
    pub sizes: Vec<u64>,
    /// Budget per measurement.
    pub cell_seconds: f64,
    /// memcpy per size.
    pub memcpy: Vec<MemcpyResult>,
    /// The matrix.
    pub cells: Vec<Cell>,
    /// Access latencies.
    pub access: Vec<AccessTiming>,
    /// Host memory as a dimension, in the CUDA samples' bandwidthTest shape: pageable,
    /// huge-page and each page-locked or host-visible host memory to and from every
    /// device, device to device, and between devices of one technology (empty in reports
    /// made before it existed).
    #[serde(default)]
    pub bandwidth_test: Vec<bandwidth_test::BandwidthCell>,
    /// Both directions of each pair at once (`--bidirectional`; empty otherwise).
    #[serde(default)]
    pub bidirectional: Vec<together::DuplexCell>,
    /// Copies at once (`--concurrent`; empty otherwise).
    #[serde(default)]
    pub concurrent: Vec<together::ConcurrentRun>,
    /// Many small copies per pair, one by one, batched and raw (`--batch`; empty
    /// otherwise).
    #[serde(default)]
    pub batch: Vec<batch::BatchCell>,
    /// The faces of a grid and a box at every pair, four ways (`--regions`; empty
    /// otherwise).
    #[serde(default)]
    pub regions: Vec<regions::RegionCell>,
    /// BabelStream's kernels per location and precision, and the host's own loop
    /// (`--stream`; empty otherwise).
    #[serde(default)]
    pub stream: Vec<stream::StreamRun>,
    /// The Copy kernel reading another location's memory in place, beside the API's
    /// copy between the two (`--stream`; empty otherwise).
    #[serde(default)]
    pub kernel_copies: Vec<kernel_copies::KernelCopy>,
    /// The command line that made the report (empty in reports made before it was
    /// recorded, and where the run was not made by the `locus` command).
    #[serde(default)]
    pub command: String,
    /// Wall time of the run.
    pub seconds: f64,
    /// Anything left out, and why.
    pub notes: Vec<String>,
}

/// The legs a route's bytes take.
fn legs(kind: RouteKind, src: Location, dst: Location, bytes: u64) -> Vec<String> {
    let size = format_size(bytes);
    match kind {
        RouteKind::InPlace => vec![],
        RouteKind::Staged => vec![
            format!("{src} -> host chunks: {size}"),
            format!("host chunks -> {dst}: {size}"),
        ],
        _ => vec![format!("{src} -> {dst}: {size}")],
    }
}

/// Progress of a run: (cells done, cells in all, what is being measured).
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize, &str);

/// Runs the benchmark.
pub fn run(registry: &Registry, config: &Config, progress: Progress<'_>) -> Result<Report> {
    let started = Instant::now();
    for l in &config.locations {
        registry.device(*l)?;
    }
    if let Some(s) = &config.stream {
        stream::check(registry, &config.locations, s)?;
    }
    if !config.matrix {
        return only_extras(registry, config, started, progress);
    }
    let max = *config
        .sizes
        .iter()
        .max()
        .ok_or_else(|| Error::Invalid("no sizes to run".into()))?;
    check_memory(registry, &config.locations, max)?;
    together::check(config)?;
    let mut notes = Vec::new();
    // The raw baselines use the same native allocations.
    let memories = pair_memories(registry, &config.locations, max, &mut notes)?;
    let host_src = vec![0x5Au8; max as usize];
    let mut host_dst = vec![0u8; max as usize];
    let mut scratch = vec![0u8; max as usize];
    let mut memcpy = Vec::new();
    for &size in &config.sizes {
        let n = size as usize;
        let stats = measure(config.cell_seconds, config.min_runs, || {
            host_dst[..n].copy_from_slice(std::hint::black_box(&host_src[..n]));
            std::hint::black_box(&mut host_dst);
            Ok(())
        })?;
        memcpy.push(MemcpyResult {
            bytes: size,
            gbps: Bandwidth::of(size, &stats),
            stats,
        });
    }
    let total = config.sizes.len() * memories.len() * memories.len();
    let mut done = 0;
    let mut cells = Vec::new();
    'sizes: for &size in &config.sizes {
        let n = size as usize;
        for (src_loc, src, _) in &memories {
            for (dst_loc, _, dst) in &memories {
                if let Some(limit) = config.max_seconds {
                    if started.elapsed().as_secs_f64() > limit {
                        notes.push(format!(
                            "stopped after {limit} s (--max-seconds): {} of {total} cells measured",
                            cells.len()
                        ));
                        break 'sizes;
                    }
                }
                progress(
                    done,
                    total,
                    &format!("{src_loc} -> {dst_loc}, {}", format_size(size)),
                );
                done += 1;
                if n > src.len() || n > dst.len() {
                    continue;
                }
                let counted = TransferStats::default();
                let mut route = None;
                let (api, mut raw_copy) = raw_baseline(src, dst);
                // Small copies are many per budget: a quarter of it is plenty.
                let budget = if size < 1 << 20 {
                    config.cell_seconds / 4.0
                } else {
                    config.cell_seconds
                };
                let measured = measure_together(
                    budget,
                    config.min_runs,
                    &mut [
                        &mut || {
                            route = Some(src.copy_to_with(
                                0,
                                dst,
                                0,
                                n,
                                locus::CopyOptions::counted(&counted),
                            )?);
                            Ok(())
                        },
                        &mut || raw_copy(n, &mut scratch),
                        &mut || {
                            host_dst[..n].copy_from_slice(std::hint::black_box(&host_src[..n]));
                            std::hint::black_box(&mut host_dst);
                            Ok(())
                        },
                    ],
                )?;
                let (stats, raw_stats, memcpy_stats) = (measured[0], measured[1], measured[2]);
                let route = route.ok_or_else(|| Error::Invalid("no copy was made".into()))?;
                let copies = (stats.runs + 1) as f64;
                let totals = counted.totals();
                let counters = RouteKind::ALL
                    .iter()
                    .filter(|k| totals.calls_of(**k) > 0)
                    .map(|k| Counter {
                        route: k.to_string(),
                        calls: totals.calls_of(*k) as f64 / copies,
                        bytes: totals.bytes_of(*k) as f64 / copies,
                    })
                    .collect();
                let gbps = Bandwidth::of(size, &stats);
                // memcpy of the same size, timed in rotation with this cell.
                let memcpy_gbps = Stats::gbps(size, memcpy_stats.median_s);
                cells.push(Cell {
                    src: src_loc.to_string(),
                    dst: dst_loc.to_string(),
                    bytes: size,
                    route: route.kind.to_string(),
                    reason: route.reason.to_string(),
                    legs: legs(route.kind, *src_loc, *dst_loc, size),
                    counters,
                    latency_us: stats.median_s * 1e6,
                    efficiency_vs_memcpy: gbps.median / memcpy_gbps,
                    memcpy_gbps,
                    overhead_vs_raw: Some(stats.median_s / raw_stats.median_s - 1.0),
                    raw: Some(RawResult {
                        api,
                        gbps: Bandwidth::of(size, &raw_stats),
                        stats: raw_stats,
                    }),
                    gbps,
                    stats,
                });
            }
        }
    }
    let mut bidirectional = Vec::new();
    if config.bidirectional {
        bidirectional = together::bidirectional(
            &memories,
            &config.sizes,
            config.cell_seconds,
            config.min_runs,
            &mut |what| progress(total, total, what),
        )?;
    }
    drop((memories, host_src, host_dst, scratch));
    let concurrent = match config.concurrent {
        Some(shape) => together::contention(registry, config, shape, &mut notes)?,
        None => Vec::new(),
    };
    let batch = if config.batch {
        batch::run(registry, config, &mut |what| progress(total, total, what))?
    } else {
        Vec::new()
    };
    let (stream, kernel_copies) = match &config.stream {
        Some(s) => stream_runs(registry, config, s, &mut notes, &mut |what| {
            progress(total, total, what)
        })?,
        None => Default::default(),
    };
    let regions = region_runs(registry, config, &mut |what| progress(total, total, what))?;
    let access = access::latency(registry, config)?;
    let bandwidth_test = bandwidth_test::run(registry, config, &mut notes)?;
    progress(total, total, "done");
    Ok(Report {
        version: 1,
        unix_time: unix_time(),
        machine: machine(registry),
        sizes: config.sizes.clone(),
        cell_seconds: config.cell_seconds,
        memcpy,
        cells,
        access,
        bandwidth_test,
        bidirectional,
        concurrent,
        batch,
        regions,
        stream,
        kernel_copies,
        command: String::new(),
        seconds: started.elapsed().as_secs_f64(),
        notes,
    })
}

/// `--stream` or `--regions` alone: BabelStream's kernels, the region copies, no matrix.
fn only_extras(
    registry: &Registry,
    config: &Config,
    started: Instant,
    progress: Progress<'_>,
) -> Result<Report> {
    let mut notes = Vec::new();
    let (stream, kernel_copies) = match &config.stream {
        Some(s) => stream_runs(registry, config, s, &mut notes, &mut |what| {
            progress(0, 1, what)
        })?,
        None => Default::default(),
    };
    let regions = region_runs(registry, config, &mut |what| progress(0, 1, what))?;
    progress(1, 1, "done");
    Ok(Report {
        version: 1,
        unix_time: unix_time(),
        machine: machine(registry),
        sizes: Vec::new(),
        cell_seconds: config.cell_seconds,
        memcpy: Vec::new(),
        cells: Vec::new(),
        access: Vec::new(),
        bandwidth_test: Vec::new(),
        bidirectional: Vec::new(),
        concurrent: Vec::new(),
        batch: Vec::new(),
        regions,
        stream,
        kernel_copies,
        command: String::new(),
        seconds: started.elapsed().as_secs_f64(),
        notes,
    })
}

/// BabelStream at every location, then the kernel copies across locations.
fn stream_runs(
    registry: &Registry,
    config: &Config,
    s: &stream::StreamConfig,
    notes: &mut Vec<String>,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<stream::StreamRun>, Vec<kernel_copies::KernelCopy>)> {
    let runs = stream::run(registry, &config.locations, s, notes, progress)?;
    let copies = kernel_copies::run(registry, &config.locations, s, notes, progress)?;
    Ok((runs, copies))
}

/// `--regions`: the faces of grids and boxes at every pair, where asked.
fn region_runs(
    registry: &Registry,
    config: &Config,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<regions::RegionCell>> {
    match config.regions {
        Some(n) => regions::run(registry, config, (n, (n / 16).max(8)), progress),
        None => Ok(Vec::new()),
    }
}

/// Now, in seconds since the Unix epoch.
fn unix_time() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The raw native transfer for a pair: one native call for host <-> device and within
/// a device, or a native read into a host buffer plus a native write for the rest.
/// Returns the API names and the copy (bytes, host scratch buffer).
fn raw_baseline<'a>(
    src: &'a Memory,
    dst: &'a Memory,
) -> (String, impl FnMut(usize, &mut [u8]) -> Result<()> + 'a) {
    let api = src.native_calls_to(dst);
    let copy = move |n: usize, host: &mut [u8]| src.native_copy_to(dst, n, host);
    (api, copy)
}
