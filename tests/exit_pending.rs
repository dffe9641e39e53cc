//! A process may end with locus work pending and exits with its own status: 4 MiB
//! asynchronous copies between every pair of locations started, then the process ends
//! without waiting (returning from `main`, `std::process::exit`, with the memories kept
//! or dropped and the events forgotten). On the code before, 2-5 of 8 such runs died
//! with SIGSEGV or SIGABRT after their output (`locus-reaper` panicked at
//! `clReleaseEvent: -59`, or "Pure virtual function called!" from a runtime already
//! shut down) where OpenCL, SYCL and WebGPU are present together.
//!
//! Each run is this test binary started again as a child (`LOCUS_EXIT_CHILD` says how
//! it ends); `LOCUS_EXIT_RUNS` sets the runs per way (20 by default).

use std::process::Command;
use std::sync::Arc;

use locus::{Event, Location, Memory};

const WAYS: [&str; 4] = ["return", "exit", "drop", "forget"];

/// Starts the copies and ends the way `how` says.
fn child(how: &str) {
    let locations: Vec<Location> = locus::available();
    let n = 4 << 20;
    let mut kept: Vec<(Arc<Memory>, Arc<Memory>, Event)> = Vec::new();
    for &a in &locations {
        for &b in &locations {
            let (Ok(src), Ok(dst)) = (Memory::new(a, n), Memory::new(b, n)) else {
                continue;
            };
            let (src, dst) = (Arc::new(src), Arc::new(dst));
            if let Ok(e) = src.copy_to_async(0, &dst, 0, n, &[]) {
                kept.push((src, dst, e));
            }
        }
    }
    println!("started {} copies", kept.len());
    match how {
        "exit" => std::process::exit(0),
        "drop" => drop(kept),
        "forget" => {
            for (src, dst, e) in kept {
                drop((src, dst));
                std::mem::forget(e);
            }
        }
        _ => std::mem::forget(kept),
    }
}

#[test]
fn a_process_ends_cleanly_with_copies_pending() {
    if let Ok(how) = std::env::var("LOCUS_EXIT_CHILD") {
        child(&how);
        return;
    }
    let runs: usize = std::env::var("LOCUS_EXIT_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let me = std::env::current_exe().unwrap();
    // Every runtime at once (the old failures needed OpenCL, SYCL and WebGPU together),
    // then each pair of them with the host, a quarter as often.
    let combos = [
        (None, runs),
        (Some("host,opencl,sycl"), runs.div_ceil(4)),
        (Some("host,opencl,webgpu"), runs.div_ceil(4)),
        (Some("host,sycl,webgpu"), runs.div_ceil(4)),
        (Some("host,openmp,opencl"), runs.div_ceil(4)),
    ];
    let mut failures = Vec::new();
    let mut total = 0;
    for (backends, runs) in combos {
        for how in WAYS {
            for run in 0..runs {
                total += 1;
                let mut child = Command::new(&me);
                child
                    .args(["--exact", "a_process_ends_cleanly_with_copies_pending"])
                    .arg("--nocapture")
                    .env("LOCUS_EXIT_CHILD", how);
                if let Some(list) = backends {
                    child.env("LOCUS_BACKENDS", list);
                }
                let out = child.output().unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout);
                if !out.status.success() || !stdout.contains("started") {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    let head: Vec<&str> = stderr
                        .lines()
                        .filter(|l| !l.trim_start().starts_with("at "))
                        .take(12)
                        .collect();
                    failures.push(format!(
                        "{backends:?} {how} run {run}: {:?}\n{}",
                        out.status,
                        head.join("\n")
                    ));
                }
            }
        }
    }
    println!(
        "EXIT: {total} runs ({runs} per way with every runtime at {:?}, a quarter as many \
         per pair of runtimes): {} failed",
        locus::available(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}
