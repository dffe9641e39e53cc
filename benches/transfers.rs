//! Transfer benchmarks, each against its baseline in the same run:
//!
//! 1. host <-> opencl, 256 MiB: locus (`Buffer::copy_from`) vs raw opencl3
//!    `clEnqueueWriteBuffer` / `clEnqueueReadBuffer`;
//! 2. host -> webgpu, 256 MiB: locus (reused mapped staging) vs one `queue.write_buffer`;
//! 3. in-place host access (`access(Location::Host)`) of 1 KiB vs 256 MiB;
//! 4. first vs second read access of a 64 MiB webgpu buffer on the host (replica cache);
//! 5. opencl -> webgpu, 256 MiB, vs host memcpy of the same size;
//! 6. host <-> sycl and sycl -> opencl / webgpu, vs raw dpctl;
//! 7. asynchronous copies of 4 KiB: one `copy_to_async` + `wait`, and a burst of 1000
//!    started before any is waited for, against the synchronous `copy_to`.
//!
//! Run: `cargo bench --bench transfers` (set LOCUS_BENCH_REPS to change repetitions).
//! Timings are printed, never asserted: the targets are shown next to the ratios.

use std::hint::black_box;
use std::time::{Duration, Instant};

use locus::{Buffer, Device, Location, Memory};
use locus_cli::bench::timing;
use locus_cli::bench::timing::gbps;

const MIB: usize = 1 << 20;

fn reps() -> usize {
    timing::reps(9)
}

fn line(name: &str, bytes: usize, t: Duration) {
    println!(
        "{name:<52} {:>10.3} ms {:>8.2} GB/s",
        t.as_secs_f64() * 1e3,
        gbps(bytes, t)
    );
}

fn verdict(what: &str, ratio: f64, target: &str, ok: bool) {
    println!(
        "  => {what}: {ratio:.2} (target {target}) {}",
        if ok { "met" } else { "NOT met" }
    );
}

fn memcpy_baseline(bytes: usize) -> Duration {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let t = timing::median(reps(), || {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    });
    line("host memcpy", bytes, t);
    t
}

fn opencl_vs_raw(bytes: usize) -> Result<(), Box<dyn std::error::Error>> {
    let cl = Location::OpenCl(0);
    let dev = locus::device_as::<locus::backends::opencl::OpenClDevice>(cl)?;
    println!("opencl:0 is {} ({})", dev.info().name, dev.info().platform);
    let n = bytes / 4;
    let host = Buffer::from_vec(vec![3.0f32; n]);
    let mut device = Buffer::<f32>::zeroed(cl, n)?;
    let mut back = Buffer::<f32>::zeroed(Location::Host, n)?;
    // The raw side: clEnqueueWriteBuffer / clEnqueueReadBuffer on a plain cl_mem, as
    // `locus bench` does (`Memory::native_write` / `native_read`).
    let raw = Memory::new(cl, bytes)?;
    let src = vec![3u8; bytes];
    let mut dst = vec![0u8; bytes];
    let (write, raw_write) = timing::interleaved(
        reps(),
        || {
            device.copy_from(0, &host, 0..n).expect("locus write");
        },
        || raw.native_write(&src).expect("raw write"),
    );
    line("host -> opencl:0, locus Buffer::copy_from", bytes, write);
    line(
        "host -> opencl:0, raw clEnqueueWriteBuffer",
        bytes,
        raw_write,
    );
    let (read, raw_read) = timing::interleaved(
        reps(),
        || {
            back.copy_from(0, &device, 0..n).expect("locus read");
        },
        || raw.native_read(&mut dst).expect("raw read"),
    );
    line("opencl:0 -> host, locus Buffer::copy_from", bytes, read);
    line("opencl:0 -> host, raw clEnqueueReadBuffer", bytes, raw_read);
    let (w, r) = (
        raw_write.as_secs_f64() / write.as_secs_f64(),
        raw_read.as_secs_f64() / read.as_secs_f64(),
    );
    verdict("locus / raw bandwidth, write", w, ">= 0.95", w >= 0.95);
    verdict("locus / raw bandwidth, read", r, ">= 0.95", r >= 0.95);
    Ok(())
}

fn webgpu_upload(bytes: usize) -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Location::WebGpu(0);
    let n = bytes / 4;
    let host = Buffer::from_vec(vec![5.0f32; n]);
    let mut device = Buffer::<f32>::zeroed(gpu, n)?;
    // The raw side: one queue.write_buffer and a wait per call, as `locus bench` does
    // (`Memory::native_write` / `native_read`).
    let target = Memory::new(gpu, bytes)?;
    let data = vec![5u8; bytes];
    let (staged, naive) = timing::interleaved(
        reps(),
        || {
            device.copy_from(0, &host, 0..n).expect("locus upload");
        },
        || target.native_write(&data).expect("raw upload"),
    );
    line(
        "host -> webgpu:0, locus (reused mapped staging)",
        bytes,
        staged,
    );
    line(
        "host -> webgpu:0, one queue.write_buffer per call",
        bytes,
        naive,
    );
    let x = naive.as_secs_f64() / staged.as_secs_f64();
    verdict("locus speed-up over write_buffer", x, ">= 3", x >= 3.0);
    Ok(())
}

fn in_place_access() -> Result<(), Box<dyn std::error::Error>> {
    for location in locus::available() {
        let in_place =
            locus::access::location_accessibility(locus::registry(), location, Location::Host)?.0;
        if !in_place {
            continue;
        }
        let mut times = Vec::new();
        for bytes in [1024, 256 * MIB] {
            let b = Buffer::<u8>::zeroed(location, bytes)?;
            let t = timing::median(reps(), || {
                let g = b.access(Location::Host).expect("access");
                black_box(g.as_slice().expect("slice")[bytes - 1]);
            });
            println!(
                "{:<52} {:>10.3} us",
                format!("in-place host access of {location}, {} KiB", bytes / 1024),
                t.as_secs_f64() * 1e6
            );
            times.push(t);
        }
        let ratio = times[1].as_secs_f64() / times[0].as_secs_f64();
        verdict(
            &format!("{location}: time(256 MiB) / time(1 KiB)"),
            ratio,
            "<= 2",
            ratio <= 2.0,
        );
    }
    Ok(())
}

fn replica_cache(bytes: usize) -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Location::WebGpu(0);
    let mut b = Buffer::<u8>::filled(gpu, bytes, 7)?;
    let mut first = Vec::new();
    let mut second = Vec::new();
    for _ in 0..reps() {
        drop(b.access_mut(gpu)?); // invalidates the host replica, moves nothing
        let t = Instant::now();
        drop(b.access(Location::Host)?);
        first.push(t.elapsed());
        let t = Instant::now();
        drop(b.access(Location::Host)?);
        second.push(t.elapsed());
    }
    first.sort();
    second.sort();
    let (f, s) = (first[first.len() / 2], second[second.len() / 2]);
    line(
        "webgpu:0 64 MiB, first host read (makes the replica)",
        bytes,
        f,
    );
    println!(
        "{:<52} {:>10.3} us",
        "webgpu:0 64 MiB, second host read (cached)",
        s.as_secs_f64() * 1e6
    );
    let x = f.as_secs_f64() / s.as_secs_f64();
    verdict("first / second read", x, ">= 100", x >= 100.0);
    Ok(())
}

fn opencl_to_webgpu(bytes: usize, memcpy: Duration) -> Result<(), Box<dyn std::error::Error>> {
    let n = bytes / 4;
    let src = Buffer::filled(Location::OpenCl(0), n, 9.0f32)?;
    let mut dst = Buffer::<f32>::zeroed(Location::WebGpu(0), n)?;
    let mut route = None;
    let t = timing::median(reps(), || {
        route = Some(dst.copy_from(0, &src, 0..n).expect("copy"));
    });
    line("opencl:0 -> webgpu:0, locus", bytes, t);
    if let Some(route) = route {
        println!("  route: {route}");
    }
    let x = memcpy.as_secs_f64() / t.as_secs_f64();
    verdict("fraction of memcpy bandwidth", x, ">= 0.5", x >= 0.5);
    Ok(())
}

fn sycl_vs_raw(bytes: usize, memcpy: Duration) -> Result<(), Box<dyn std::error::Error>> {
    let sy = Location::Sycl(0);
    let n = bytes / 4;
    let host = Buffer::from_vec(vec![3.0f32; n]);
    let mut device = Buffer::<f32>::zeroed(sy, n)?;
    let mut back = Buffer::<f32>::zeroed(Location::Host, n)?;
    // The raw side: DPCTLQueue_Memcpy to and from a USM device allocation, waited for,
    // as `locus bench` does (`Memory::native_write` / `native_read`).
    let usm = Memory::new(sy, bytes)?;
    let src = vec![3u8; bytes];
    let mut dst = vec![0u8; bytes];
    let (write, raw_write) = timing::interleaved(
        reps(),
        || {
            device.copy_from(0, &host, 0..n).expect("locus write");
        },
        || usm.native_write(&src).expect("raw write"),
    );
    line("host -> sycl:0, locus Buffer::copy_from", bytes, write);
    line("host -> sycl:0, raw DPCTLQueue_Memcpy", bytes, raw_write);
    let (read, raw_read) = timing::interleaved(
        reps(),
        || {
            back.copy_from(0, &device, 0..n).expect("locus read");
        },
        || usm.native_read(&mut dst).expect("raw read"),
    );
    line("sycl:0 -> host, locus Buffer::copy_from", bytes, read);
    line("sycl:0 -> host, raw DPCTLQueue_Memcpy", bytes, raw_read);
    let (w, r) = (
        raw_write.as_secs_f64() / write.as_secs_f64(),
        raw_read.as_secs_f64() / read.as_secs_f64(),
    );
    verdict("locus / raw bandwidth, write", w, ">= 0.95", w >= 0.95);
    verdict("locus / raw bandwidth, read", r, ">= 0.95", r >= 0.95);
    for (other, target) in [(Location::OpenCl(0), 0.7), (Location::WebGpu(0), 0.0)] {
        if !locus::registry().has(other) {
            continue;
        }
        let mut to = Buffer::<f32>::zeroed(other, n)?;
        let mut route = None;
        let t = timing::median(reps(), || {
            route = Some(to.copy_from(0, &device, 0..n).expect("copy"));
        });
        line(&format!("sycl:0 -> {other}, locus"), bytes, t);
        if let Some(route) = route {
            println!("  route: {route}");
        }
        let x = memcpy.as_secs_f64() / t.as_secs_f64();
        if target > 0.0 {
            verdict("fraction of memcpy bandwidth", x, ">= 0.7", x >= target);
        } else {
            println!("  => fraction of memcpy bandwidth: {x:.2}");
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(()); // `cargo test --benches` probes with --list
    }
    println!(
        "locations: {:?}; {} repetitions, median shown",
        locus::available(),
        reps()
    );
    let big = 256 * MIB;
    println!("\n# baseline");
    let memcpy = memcpy_baseline(big);
    let has = |l| locus::registry().has(l);
    if has(Location::OpenCl(0)) {
        println!("\n# 1. host <-> opencl:0, 256 MiB");
        opencl_vs_raw(big)?;
    }
    if has(Location::WebGpu(0)) {
        println!("\n# 2. host -> webgpu:0 upload, 256 MiB");
        webgpu_upload(big)?;
    }
    println!("\n# 3. in-place access cost does not grow with size");
    in_place_access()?;
    if has(Location::WebGpu(0)) {
        println!("\n# 4. replica cache");
        replica_cache(64 * MIB)?;
    }
    if has(Location::OpenCl(0)) && has(Location::WebGpu(0)) {
        println!("\n# 5. opencl:0 -> webgpu:0, 256 MiB");
        opencl_to_webgpu(big, memcpy)?;
    }
    if has(Location::Sycl(0)) {
        println!("\n# 6. host <-> sycl:0, sycl:0 -> opencl:0 / webgpu:0, 256 MiB");
        sycl_vs_raw(big, memcpy)?;
    }
    println!("\n# 7. asynchronous copies, 4 KiB: per copy");
    for to in locus::available() {
        async_overhead(to)?;
    }
    Ok(())
}

/// 4 KiB host -> `to`: synchronous, one async copy waited for at once, and a burst of
/// 1000 async copies waited for at the end (per copy).
fn async_overhead(to: Location) -> Result<(), Box<dyn std::error::Error>> {
    use std::sync::Arc;
    let n = 4096;
    let src = Arc::new(locus::Memory::new(Location::Host, n)?);
    let dst = Arc::new(locus::Memory::new(to, n)?);
    let sync = timing::median(reps(), || {
        for _ in 0..100 {
            src.copy_to(0, &dst, 0, n).expect("copy");
        }
    }) / 100;
    let one = timing::median(reps(), || {
        for _ in 0..100 {
            let e = src.copy_to_async(0, &dst, 0, n, &[]).expect("start");
            e.wait().expect("copy");
        }
    }) / 100;
    let mut native = false;
    let burst = timing::median(reps(), || {
        let events: Vec<_> = (0..1000)
            .map(|_| src.copy_to_async(0, &dst, 0, n, &[]).expect("start"))
            .collect();
        native = events[0].is_native();
        for e in events {
            e.wait().expect("copy");
        }
    }) / 1000;
    println!(
        "  host -> {:<9} sync {:>7.1} us   async+wait {:>7.1} us   burst of 1000 {:>7.1} us   ({})",
        to.to_string(),
        sync.as_secs_f64() * 1e6,
        one.as_secs_f64() * 1e6,
        burst.as_secs_f64() * 1e6,
        if native {
            "native queue"
        } else {
            "locus worker pool"
        }
    );
    Ok(())
}
