//! Shared by the test binaries: which locations run, and LOCUS_REQUIRE.
#![allow(dead_code)]

pub mod groups;
#[cfg(feature = "mpi")]
pub mod mpi_job;

use std::sync::{Mutex, MutexGuard};

use locus::{Buffer, Location};

/// The location named `text` when this machine has it. When it is missing and
/// `LOCUS_REQUIRE` names its technology (or the exact location), the test FAILS with
/// the reason; otherwise it is skipped with the reason printed.
pub fn location(text: &str) -> Option<Location> {
    let location: Location = text.parse().expect("test location names parse");
    let registry = locus::registry();
    if registry.has(location) {
        return Some(location);
    }
    let why = registry.why_missing(location);
    let required = required();
    let named = required.split(',').map(str::trim).any(|item| {
        item == text || (location.ordinal() == 0 && item == location.technology().name())
    });
    assert!(
        !named,
        "{text} is required by LOCUS_REQUIRE={required} but missing: {why}"
    );
    eprintln!("SKIPPED on this machine: {text}: {why}");
    None
}

/// `LOCUS_REQUIRE`, each item checked: a technology (`opencl`) or a location
/// (`opencl:1`); anything else FAILS the test (a typo would otherwise require nothing).
pub fn required() -> String {
    let required = std::env::var("LOCUS_REQUIRE").unwrap_or_default();
    for item in required.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        if let Err(e) = item.parse::<Location>() {
            panic!(
                "LOCUS_REQUIRE={required}: `{item}` is neither a technology nor a location: {e}"
            );
        }
    }
    required
}

/// The locations a suite runs over: each one the machines of this project can have,
/// kept when this machine has it, a FAILURE when `LOCUS_REQUIRE` names it and it is
/// missing, else skipped with a SKIPPED line ([`location`]). Unlike looping over
/// `locus::available()`, a machine that lost a runtime does not pass vacuously.
pub fn required_locations() -> Vec<Location> {
    [
        "host", "openmp:0", "opencl:0", "opencl:1", "opencl:2", "sycl:0", "webgpu:0", "cuda:0",
        "cuda:1", "hip:0",
    ]
    .iter()
    .filter_map(|t| location(t))
    .collect()
}

/// The required locations ([`required_locations`]) of one technology; a SKIPPED line
/// when this machine has none.
pub fn required_of(technology: locus::Technology) -> Vec<Location> {
    let found: Vec<Location> = required_locations()
        .into_iter()
        .filter(|l| l.technology() == technology)
        .collect();
    if found.is_empty() {
        eprintln!("SKIPPED: no {} location on this machine", technology.name());
    }
    found
}

/// Serialises the tests of one binary under `cargo test` (threads), so that
/// live-allocation counts are not disturbed by a neighbour. Under nextest each test has
/// its own process anyway.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Deterministic test data.
pub fn pattern_u8(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Deterministic f32 data.
pub fn pattern_f32(n: usize, seed: f32) -> Vec<f32> {
    (0..n).map(|i| i as f32 * 0.5 + seed).collect()
}

/// xorshift64*: a small deterministic random generator (one per thread), for the stress
/// and fuzz tests.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 for `n` = 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The elements of `b` as read at `at` (in place where the host reaches that memory,
/// else read out of it).
pub fn contents(b: &Buffer<u32>, at: Location) -> Vec<u32> {
    let guard = b
        .access(at)
        .unwrap_or_else(|e| panic!("access at {at}: {e}"));
    match guard.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => {
            let mut out = vec![0u32; b.len()];
            guard
                .memory()
                .read(0, bytemuck::cast_slice_mut(&mut out))
                .unwrap_or_else(|e| panic!("read at {at}: {e}"));
            out
        }
    }
}

/// One module per location, each running the calling file's `suite!` of tests at that
/// location (skipped, with the reason, where this machine lacks it, unless
/// LOCUS_REQUIRE names it); `ignore = "..."` marks the GPU locations that only
/// `LOCUS_REQUIRE=host,cuda scripts/test.sh` and kin run. Files that use it declare
/// `#[macro_use] mod common;`.
#[allow(unused_macros)]
macro_rules! conformance {
    ($($name:ident => $text:literal $(, ignore = $why:literal)?;)*) => {$(
        mod $name {
            use super::*;

            fn run(test: fn(Location)) {
                let _serial = common::serial();
                if let Some(l) = common::location($text) {
                    eprintln!("running on {l}");
                    test(l);
                }
            }

            suite!($(#[ignore = $why])?);
        }
    )*};
}

/// [`conformance!`] over every location a suite runs at: the CPU runtimes CI has, and the
/// GPU locations, ignored unless LOCUS_REQUIRE names them.
#[allow(unused_macros)]
macro_rules! at_every_location {
    () => {
        conformance! {
            host => "host";
            openmp_0 => "openmp:0";
            opencl_0 => "opencl:0";
            opencl_1 => "opencl:1";
            opencl_2 => "opencl:2";
            sycl_0 => "sycl:0";
            webgpu_0 => "webgpu:0";
            cuda_0 => "cuda:0", ignore = "needs an NVIDIA GPU: LOCUS_REQUIRE=host,cuda scripts/test.sh";
            cuda_1 => "cuda:1", ignore = "needs two NVIDIA GPUs: LOCUS_REQUIRE=host,cuda:1 scripts/test.sh";
            hip_0 => "hip:0", ignore = "needs an AMD GPU: LOCUS_REQUIRE=host,hip scripts/test.sh";
            hip_1 => "hip:1", ignore = "needs two AMD GPUs: LOCUS_REQUIRE=host,hip:1 scripts/test.sh";
        }
    };
}

/// What the destination holds after copying region `sr` of `src` to region `dr` of
/// `dst`: the copy made byte by byte from the regions' addressing.
pub fn region_copied(src: &[u8], sr: &locus::Region, dst: &[u8], dr: &locus::Region) -> Vec<u8> {
    let mut out = dst.to_vec();
    let at = |r: &locus::Region, x: usize, y: usize, z: usize| {
        (r.origin[0] + x) + (r.origin[1] + y) * r.row_pitch + (r.origin[2] + z) * r.slice_pitch
    };
    for z in 0..sr.extent[2] {
        for y in 0..sr.extent[1] {
            for x in 0..sr.extent[0] {
                out[at(dr, x, y, z)] = src[at(sr, x, y, z)];
            }
        }
    }
    out
}
