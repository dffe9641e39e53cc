//! `locus calibrate`: measures every candidate path of every ordered pair of locations
//! at one size per size class, so that the planner chooses routes by what they cost on
//! this machine. Candidates of one pair and size are timed in rotation (drift on a busy
//! machine hits all alike). The result is kept in the cache directory, keyed by the
//! machine's devices and driver versions, and installed in the running process.

use std::time::Instant;

use super::timing::measure_together;
use locus::core::route::Endpoint;
use locus::transfer::cost::{self, Calibration, PairCosts, PathCost};
use locus::{Error, Result};
use locus::{Location, Registry};

/// What to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// Locations (every ordered pair of them).
    pub locations: Vec<Location>,
    /// One size per size class, ascending.
    pub sizes: Vec<u64>,
    /// Seconds per candidate per size (after one warm-up copy).
    pub budget: f64,
    /// Timed copies per candidate per size, at least.
    pub min_runs: usize,
}

impl Config {
    /// Every location found, the default sizes ([`cost::SIZES`]), 10 ms per candidate.
    pub fn default_for(registry: &Registry) -> Config {
        Config {
            locations: registry.locations(),
            sizes: cost::SIZES.to_vec(),
            budget: 0.01,
            min_runs: 3,
        }
    }
}

/// Measures, and returns the calibration (not yet saved or installed).
pub fn run(
    registry: &Registry,
    config: &Config,
    progress: super::Progress<'_>,
) -> Result<Calibration> {
    let started = Instant::now();
    let mut sizes = config.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let max = *sizes
        .last()
        .ok_or_else(|| Error::Invalid("calibrate: no sizes to measure".into()))?;
    // Sizes above a device's largest allocation are left unmeasured (`None`).
    let memories = super::pair_memories(registry, &config.locations, max, &mut Vec::new())?;
    let total = memories.len() * memories.len();
    let mut pairs = Vec::new();
    for (src_loc, src, _) in &memories {
        for (dst_loc, _, dst) in &memories {
            progress(pairs.len(), total, &format!("{src_loc} -> {dst_loc}"));
            let candidates = registry
                .matrix()
                .candidates(Endpoint::of(src), Endpoint::of(dst));
            let names: Vec<&'static str> = candidates.iter().map(|(_, p)| p.name()).collect();
            let mut paths: Vec<PathCost> = candidates
                .iter()
                .map(|(r, p)| PathCost {
                    path: p.name().to_string(),
                    kind: r.kind.to_string(),
                    seconds: vec![None; sizes.len()],
                })
                .collect();
            for (i, &size) in sizes.iter().enumerate() {
                let n = size as usize;
                if n > src.len() || n > dst.len() {
                    continue;
                }
                // Candidates that copy at all at this size, timed together.
                let working: Vec<usize> = (0..names.len())
                    .filter(|&c| {
                        src.copy_to_with(
                            0,
                            dst,
                            0,
                            n,
                            locus::CopyOptions::via(locus::Via::Path(names[c])),
                        )
                        .is_ok()
                    })
                    .collect();
                if working.is_empty() {
                    continue;
                }
                let mut copies: Vec<Box<dyn FnMut() -> Result<()> + '_>> = working
                    .iter()
                    .map(|&c| {
                        let name = names[c];
                        Box::new(move || {
                            src.copy_to_with(
                                0,
                                dst,
                                0,
                                n,
                                locus::CopyOptions::via(locus::Via::Path(name)),
                            )
                            .map(|_| ())
                        }) as Box<dyn FnMut() -> Result<()>>
                    })
                    .collect();
                let mut fns: Vec<&mut dyn FnMut() -> Result<()>> =
                    copies.iter_mut().map(|f| &mut **f as _).collect();
                let measured = measure_together(config.budget, config.min_runs, &mut fns)?;
                for (&c, stats) in working.iter().zip(measured) {
                    paths[c].seconds[i] = Some(stats.median_s);
                }
            }
            pairs.push(PairCosts {
                src: src_loc.to_string(),
                dst: dst_loc.to_string(),
                paths,
            });
        }
    }
    progress(total, total, "done");
    let machine = cost::machine_facts(registry.devices());
    Ok(Calibration {
        version: cost::VERSION,
        machine_key: cost::machine_key(&machine),
        machine,
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        seconds: started.elapsed().as_secs_f64(),
        sizes,
        pairs,
    })
}

/// The planner's choice per pair and size class, as `locus info` and `locus calibrate`
/// print it: a line per pair and per size from which the choice changes.
pub fn choices(registry: &Registry, locations: &[Location]) -> String {
    let matrix = registry.matrix();
    let sizes = matrix
        .calibration()
        .map_or_else(|| cost::SIZES.to_vec(), |c| c.sizes.clone());
    let mut out = String::new();
    for &s in locations {
        for &d in locations {
            let mut last = None;
            for &bytes in &sizes {
                let Ok(route) = locus::transfer::copy_route_for(registry, s, d, bytes as usize)
                else {
                    continue;
                };
                let base = route
                    .reason
                    .split("; measured at")
                    .next()
                    .map(str::to_owned);
                if last.as_ref() == Some(&(route.kind, base.clone())) {
                    continue;
                }
                out.push_str(&format!(
                    "  {s} -> {d}, from {}: {} ({})\n",
                    cost::format_size(bytes),
                    route.kind,
                    route.reason
                ));
                last = Some((route.kind, base));
            }
        }
    }
    out
}
