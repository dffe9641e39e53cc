//! RMM's `random_allocations` shape on every available location: 2N random operations,
//! 73% allocations (while anything is allocated), sizes uniform up to a maximum; the
//! raw backend allocation (upstream) against the pool, in the same run. Reports time
//! and, for the pool, the footprint (bytes taken from upstream) against peak live bytes.
//!
//! `cargo bench --bench allocations`

use std::sync::Arc;
use std::time::Instant;

use locus::resource::{self, Binning, MemoryResource, Pool};
use locus::Location;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Runs the operation sequence; returns (seconds, peak live bytes).
fn run(
    r: &dyn MemoryResource,
    n: usize,
    max: usize,
    seed: u64,
) -> Result<(f64, usize), locus::Error> {
    let mut rng = Rng(seed);
    let mut live = Vec::new();
    let (mut bytes, mut peak) = (0usize, 0usize);
    let start = Instant::now();
    for _ in 0..2 * n {
        if live.is_empty() || rng.next() % 100 < 73 {
            let size = 1 + (rng.next() as usize % max);
            live.push(r.allocate(size, 64)?);
            bytes += size;
            peak = peak.max(bytes);
        } else {
            let i = rng.next() as usize % live.len();
            let b = live.swap_remove(i);
            bytes -= b.bytes();
            r.deallocate(b);
        }
    }
    for b in live.drain(..) {
        r.deallocate(b);
    }
    Ok((start.elapsed().as_secs_f64(), peak))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    println!(
        "{:<10} {:>6} {:>9} {:>12} {:>12} {:>9} {:>14}",
        "location", "N", "max", "raw ms", "pool ms", "speed-up", "footprint/peak"
    );
    for l in locus::available() {
        for (n, max) in [
            (1000usize, 64usize << 10),
            (4000, 16 << 10),
            (1000, 1 << 20),
        ] {
            let upstream = resource::upstream(l)?;
            let raw = run(upstream.as_ref(), n, max, 42);
            let pool = Pool::new(Arc::clone(&upstream), 8 << 20, 8 << 30);
            let pooled = run(&pool, n, max, 42);
            let binning = Pool::new(Arc::clone(&upstream), 8 << 20, 8 << 30);
            let binned = Binning::new(Arc::clone(&upstream), Arc::new(binning), 256, 64 << 10, 256)
                .and_then(|b| run(&b, n, max, 42));
            let binned = binned.map_or_else(|e| format!("{e}"), |(s, _)| format!("{:.3}", s * 1e3));
            match (raw, pooled) {
                (Ok((raw_s, peak)), Ok((pool_s, _))) => {
                    let footprint = pool.held_bytes() as f64 / peak as f64;
                    println!(
                        "{:<10} {n:>6} {:>8}K {:>10.3} {:>10.3} {:>8.1}x {:>14.2} {binned:>11}",
                        l.to_string(),
                        max >> 10,
                        raw_s * 1e3,
                        pool_s * 1e3,
                        raw_s / pool_s,
                        footprint
                    );
                }
                (Ok((raw_s, _)), Err(e)) => println!(
                    "{:<10} {n:>6} {:>8}K {:>10.3}   pool: {e}",
                    l.to_string(),
                    max >> 10,
                    raw_s * 1e3
                ),
                (Err(e), _) => {
                    println!("{:<10} {n:>6} {:>8}K   raw: {e}", l.to_string(), max >> 10)
                }
            }
            pool.release();
        }
    }
    let _ = Location::Host;
    Ok(())
}
