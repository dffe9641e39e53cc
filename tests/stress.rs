//! Stress: for every location, many threads run random operations at once (make, fill,
//! read and write access at random locations, copies between buffers, asynchronous
//! copies chained by events, resizes, pool allocations) for a bounded time, each thread
//! checking every result against its own `Vec` model.
//!
//! Threads: twice the cores, and 16. Time per (location, thread count):
//! `LOCUS_STRESS_MS` (default 1500). The seed of each run is printed, and
//! `LOCUS_STRESS_SEED` replays one.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Rng;
use locus::resource::{MemoryResource, Pool, Upstream};
use locus::{Buffer, Event, Location, Memory};

/// Mostly small lengths, sometimes one that crosses a 4 MiB staging buffer.
fn random_len(rng: &mut Rng) -> usize {
    match rng.below(100) {
        0 => (1 << 20) + rng.below(1 << 19),
        1..=9 => rng.below(1 << 16),
        _ => rng.below(3000),
    }
}

struct Slot {
    buffer: Buffer<u32>,
    model: Vec<u32>,
}

fn check(slot: &Slot, at: Location, what: &str) {
    let got = common::contents(&slot.buffer, at);
    if got != slot.model {
        let first = got
            .iter()
            .zip(&slot.model)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(slot.model.len()));
        panic!(
            "{what}: read at {at} differs from the model at element {first} of {} (got len {})",
            slot.model.len(),
            got.len()
        );
    }
}

/// One thread's work until `deadline`; returns how many operations it ran.
fn worker(
    seed: u64,
    focus: Location,
    locations: &[Location],
    pool: &Arc<dyn MemoryResource>,
    deadline: Instant,
) -> u64 {
    let mut rng = Rng(seed | 1);
    let mut slots: Vec<Slot> = Vec::new();
    let mut ops = 0u64;
    let pick = |rng: &mut Rng| {
        if rng.below(2) == 0 {
            focus
        } else {
            locations[rng.below(locations.len())]
        }
    };
    while Instant::now() < deadline {
        ops += 1;
        let op = rng.below(10);
        if slots.is_empty() || (op == 0 && slots.len() < 6) {
            let n = random_len(&mut rng);
            let at = pick(&mut rng);
            let value = rng.next() as u32;
            let (buffer, model) = match rng.below(3) {
                0 => (Buffer::zeroed(at, n), vec![0; n]),
                1 => (Buffer::filled(at, n, value), vec![value; n]),
                _ => {
                    let data: Vec<u32> = (0..n as u32).map(|i| i ^ value).collect();
                    (Buffer::from_slice(at, &data), data)
                }
            };
            let buffer = buffer.unwrap_or_else(|e| panic!("make {n} at {at}: {e}"));
            slots.push(Slot { buffer, model });
            continue;
        }
        let i = rng.below(slots.len());
        match op {
            // Read at a random location.
            1 | 2 => {
                let at = pick(&mut rng);
                check(&slots[i], at, "read");
            }
            // Write a range at a random location.
            3 | 4 => {
                let at = pick(&mut rng);
                let slot = &mut slots[i];
                if slot.model.is_empty() {
                    continue;
                }
                let start = rng.below(slot.model.len());
                let end = start + rng.below(slot.model.len() - start) + 1;
                let value = rng.next() as u32;
                {
                    let mut w = slot
                        .buffer
                        .access_mut(at)
                        .unwrap_or_else(|e| panic!("access_mut at {at}: {e}"));
                    match w.as_mut_slice() {
                        Ok(s) => s[start..end].fill(value),
                        Err(_) => w
                            .memory()
                            .fill(start * 4..end * 4, &value.to_ne_bytes())
                            .unwrap_or_else(|e| panic!("fill at {at}: {e}")),
                    }
                }
                slot.model[start..end].fill(value);
            }
            // Copy between two of this thread's buffers.
            5 => {
                let j = rng.below(slots.len());
                if i == j {
                    continue;
                }
                let (src_len, dst_len) = (slots[j].model.len(), slots[i].model.len());
                let n = rng.below(src_len.min(dst_len) + 1);
                let s0 = rng.below(src_len - n + 1);
                let d0 = rng.below(dst_len - n + 1);
                let (dst, src) = if i < j {
                    let (a, b) = slots.split_at_mut(j);
                    (&mut a[i], &b[0])
                } else {
                    let (a, b) = slots.split_at_mut(i);
                    (&mut b[0], &a[j])
                };
                dst.buffer
                    .copy_from(d0, &src.buffer, s0..s0 + n)
                    .unwrap_or_else(|e| panic!("copy_from: {e}"));
                dst.model[d0..d0 + n].copy_from_slice(&src.model[s0..s0 + n]);
            }
            // Asynchronous copies chained by events: a -> b -> c, then read c.
            6 => {
                let n = rng.below(1 << 14) * 4;
                let (a, b, c) = (pick(&mut rng), pick(&mut rng), pick(&mut rng));
                let data: Vec<u8> = (0..n).map(|k| (k as u64 ^ seed) as u8).collect();
                let src = Arc::new(Memory::new(a, n).unwrap());
                src.write(0, &data).unwrap();
                let mid = Arc::new(Memory::new(b, n).unwrap());
                let dst = Arc::new(Memory::new(c, n).unwrap());
                let first = src
                    .copy_to_async(0, &mid, 0, n, &[])
                    .unwrap_or_else(|e| panic!("copy_to_async {a} -> {b}: {e}"));
                let second: Event = mid
                    .copy_to_async(0, &dst, 0, n, &[first])
                    .unwrap_or_else(|e| panic!("copy_to_async {b} -> {c}: {e}"));
                second
                    .wait()
                    .unwrap_or_else(|e| panic!("async {a} -> {b} -> {c}: {e}"));
                let mut out = vec![0u8; n];
                dst.read(0, &mut out).unwrap();
                assert!(out == data, "async copy {a} -> {b} -> {c} of {n} bytes");
            }
            // Resize at the home location.
            7 => {
                let n = random_len(&mut rng);
                let slot = &mut slots[i];
                slot.buffer
                    .resize(n)
                    .unwrap_or_else(|e| panic!("resize to {n}: {e}"));
                slot.model.resize(n, 0);
            }
            // A pool allocation shared by every thread: written, read back, given back.
            8 => {
                let n = rng.below(1 << 16) + 1;
                let mem = Memory::from_resource(pool, n)
                    .unwrap_or_else(|e| panic!("pool allocation of {n} at {focus}: {e}"));
                let data: Vec<u8> = (0..n).map(|k| (k as u64 ^ seed) as u8).collect();
                mem.write(0, &data).unwrap();
                let mut out = vec![0u8; n];
                mem.read(0, &mut out).unwrap();
                assert!(out == data, "pool memory of {n} bytes at {focus}");
            }
            // Drop one, or move it.
            _ => {
                if rng.below(2) == 0 {
                    slots.swap_remove(i);
                } else {
                    let at = pick(&mut rng);
                    slots[i]
                        .buffer
                        .move_to(at)
                        .unwrap_or_else(|e| panic!("move_to {at}: {e}"));
                    check(&slots[i], at, "after move_to");
                }
            }
        }
    }
    for slot in &slots {
        check(slot, Location::Host, "at the end");
    }
    ops
}

fn stress(text: &str) {
    let Some(focus) = common::location(text) else {
        return;
    };
    let millis: u64 = std::env::var("LOCUS_STRESS_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let base_seed: u64 = std::env::var("LOCUS_STRESS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    let locations = locus::available();
    let device = Arc::clone(locus::registry().device(focus).unwrap());
    for threads in [2 * cores, 16] {
        let upstream: Arc<dyn MemoryResource> = Arc::new(Upstream::new(Arc::clone(&device)));
        let pool: Arc<dyn MemoryResource> = Arc::new(Pool::new(upstream, 1 << 20, 64 << 20));
        let deadline = Instant::now() + Duration::from_millis(millis);
        let total = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..threads {
                let (locations, pool, total) = (&locations, &pool, &total);
                let seed = base_seed.wrapping_add(t as u64 * 0x9e37_79b9);
                s.spawn(move || {
                    let ops = worker(seed, focus, locations, pool, deadline);
                    total.fetch_add(ops, Ordering::Relaxed);
                });
            }
        });
        eprintln!(
            "STRESS {focus}: {threads} threads, {} operations in {millis} ms (LOCUS_STRESS_SEED={base_seed})",
            total.load(Ordering::Relaxed)
        );
    }
}

macro_rules! stress_tests {
    ($($name:ident => $text:literal),* $(,)?) => {$(
        #[test]
        fn $name() {
            stress($text);
        }
    )*};
}

stress_tests! {
    host => "host",
    openmp_0 => "openmp:0",
    opencl_0 => "opencl:0",
    opencl_1 => "opencl:1",
    opencl_2 => "opencl:2",
    sycl_0 => "sycl:0",
    webgpu_0 => "webgpu:0",
}

#[test]
#[ignore = "needs a CUDA GPU: run with LOCUS_REQUIRE naming cuda"]
fn cuda_0() {
    stress("cuda:0");
}

#[test]
#[ignore = "needs a HIP GPU: run with LOCUS_REQUIRE naming hip"]
fn hip_0() {
    stress("hip:0");
}
