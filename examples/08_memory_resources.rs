//! 08: Memory resources (RMM's model, at any location). The raw allocation against a
//! pool, adaptors that count, limit and log, the default resource that buffers allocate
//! through, and a replay of the log.
//!
//! `cargo run --release --example 08_memory_resources -- webgpu:0`

mod common;

use std::sync::Arc;
use std::time::Instant;

use locus::resource::{self, Limiting, Logging, MemoryResource, Pool, Statistics};
use locus::Buffer;

/// Allocates and frees `rounds` x 64 blocks of 1..64 KiB from `r`; returns nanoseconds
/// per allocation + free.
fn churn(r: &dyn MemoryResource, rounds: usize) -> locus::Result<f64> {
    let start = Instant::now();
    for round in 0..rounds {
        let blocks = (0..64)
            .map(|i| r.allocate(1024 * (1 + (i * 7 + round) % 64), 64))
            .collect::<locus::Result<Vec<_>>>()?;
        for b in blocks {
            r.deallocate(b);
        }
    }
    Ok(start.elapsed().as_secs_f64() * 1e9 / (rounds * 64) as f64)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let at = common::location_from_args()?;

    // 1. The upstream resource is the backend's own allocation call; a pool takes large
    //    blocks from it once and hands out ranges of them.
    //    (Each is run once untimed first: the pool's first chunk and the first touch of
    //    fresh memory are paid there, as a long-running program pays them once.)
    let upstream = resource::upstream(at)?;
    let pool = Arc::new(Pool::new(Arc::clone(&upstream), 8 << 20, 1 << 30));
    churn(upstream.as_ref(), 5)?;
    churn(pool.as_ref(), 5)?;
    let raw_ns = churn(upstream.as_ref(), 50)?;
    let pool_ns = churn(pool.as_ref(), 50)?;
    println!(
        "{}: {raw_ns:.0} ns per allocation + free",
        upstream.describe()
    );
    println!(
        "{}: {pool_ns:.0} ns ({:.0}x faster), holding {} MiB from upstream",
        pool.describe(),
        raw_ns / pool_ns,
        pool.held_bytes() >> 20
    );

    // 2. Adaptors wrap any resource. Make the counted pool the default at `at`: every
    //    buffer made there now allocates through it.
    let counted = Arc::new(Statistics::new(pool.clone()));
    let previous = resource::set_default(at, counted.clone())?;
    {
        let a = Buffer::filled(at, 1 << 20, 1.0f32)?;
        let b = Buffer::filled(at, 1 << 18, 2u32)?;
        let t = counted.totals();
        println!(
            "two buffers at {at}: {} allocations, {} bytes live",
            t.current_count, t.current_bytes
        );
        assert_eq!(t.current_bytes, a.len() * 4 + b.len() * 4);
    }
    let t = counted.totals();
    println!(
        "after they are dropped: {} bytes live, peak {} bytes, {} allocations in all",
        t.current_bytes, t.peak_bytes, t.total_count
    );
    resource::set_default(at, previous)?;

    // 3. A budget: over it, a clear error instead of an out-of-memory crash.
    let limited = Limiting::new(pool.clone(), 1 << 20);
    let first = limited.allocate(768 << 10, 64)?;
    match limited.allocate(512 << 10, 64) {
        Ok(_) => unreachable!("the budget holds 1 MiB"),
        Err(e) => println!("over budget: {e}"),
    }
    limited.deallocate(first);

    // 4. A log of every allocation and free (CSV), replayed against another resource.
    let log = std::env::temp_dir().join(format!("locus-08-{}.csv", std::process::id()));
    let logging = Logging::new(pool.clone(), Box::new(std::fs::File::create(&log)?))?;
    churn(&logging, 4)?;
    drop(logging);
    let text = std::fs::read_to_string(&log)?;
    let report = locus_cli::replay(&text, upstream.as_ref())?;
    println!(
        "replayed {} operations from {} on {}: {:.3} ms, peak {} KiB live",
        report.operations,
        log.display(),
        upstream.describe(),
        report.seconds * 1e3,
        report.peak_live_bytes >> 10
    );
    std::fs::remove_file(&log)?;
    println!("(`locus replay LOG.csv --location {at} --resource pool` does the same from the command line)");

    // 5. Wholly free chunks go back to upstream.
    println!("release(): {} MiB given back", pool.release() >> 20);
    Ok(())
}
