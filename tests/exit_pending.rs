//! A process may end with locus work pending and exits with its own status: 4 MiB
//! asynchronous copies between every pair of locations started, then the process ends
//! without waiting (returning from `main`, `std::process::exit`, with the memories kept
//! or dropped and the events forgotten). On the code before, 2-5 of 8 such runs died
//! with SIGSEGV or SIGABRT after their output (`locus-reaper` panicked at
//! `clReleaseEvent: -59`, or "Pure virtual function called!" from a runtime already
//! shut down) where OpenCL, SYCL and WebGPU are present together.
//!
//! Each run is this test binary started again as a child (`LOCUS_EXIT_CHILD` says how
//! it ends, `LOCUS_BACKENDS` which technologies it probes), at every combination of the
//! technologies present; `LOCUS_EXIT_RUNS` sets the runs per combination (20 by
//! default).

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use locus::{Event, Location, Memory, Technology};

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
    let runs: usize = std::env::var("LOCUS_EXIT_RUNS").map_or(20, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("LOCUS_EXIT_RUNS={v:?} is not a whole number"))
    });
    // Every combination of the technologies this machine has (the host is always
    // there), `runs` runs each, the ways to end taken in turn; every technology at once
    // (where the old failures were: OpenCL, SYCL and WebGPU together) `runs` per way.
    let mut present: Vec<Technology> = locus::available()
        .iter()
        .map(|l| l.technology())
        .filter(|t| !t.is_host())
        .collect();
    present.sort();
    present.dedup();
    let mut plan: Vec<(String, &str, usize)> = Vec::new();
    for mask in 0u32..1 << present.len() {
        let mut list = vec!["host"];
        list.extend(
            (0..present.len())
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| present[i].name()),
        );
        let every = mask + 1 == 1 << present.len();
        let per_combination = if every { runs * WAYS.len() } else { runs };
        for run in 0..per_combination {
            plan.push((list.join(","), WAYS[run % WAYS.len()], run));
        }
    }
    // Children run side by side (a loaded machine, as a user's is), one per core.
    let me = std::env::current_exe().unwrap();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let width = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    std::thread::scope(|s| {
        for _ in 0..width {
            s.spawn(|| {
                while let Some((backends, how, run)) =
                    plan.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    if let Some(failure) = run_child(&me, backends, how) {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{backends} {how} run {run}: {failure}"));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    println!(
        "EXIT: {} runs ({} combinations of host + {present:?}, {runs} runs each, {runs} per \
         way with every one): {} failed",
        plan.len(),
        1 << present.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

/// Runs this test binary as a child that ends the way `how` says with only `backends`
/// probed; `Some(what went wrong)` unless it exited 0 after starting its copies.
fn run_child(me: &Path, backends: &str, how: &str) -> Option<String> {
    let out = Command::new(me)
        .args([
            "--exact",
            "a_process_ends_cleanly_with_copies_pending",
            "--nocapture",
        ])
        .env("LOCUS_EXIT_CHILD", how)
        .env("LOCUS_BACKENDS", backends)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && stdout.contains("started") {
        return None;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let head: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim_start().starts_with("at "))
        .take(12)
        .collect();
    Some(format!("{:?}\n{}", out.status, head.join("\n")))
}

/// `LOCUS_EXIT_WAIT_S=1e20` with copies pending: a warning naming the variable, and the
/// process still ends cleanly. On the code before, the exit handler panicked converting
/// the value, never set its safety net, and an exit mid-copy then aborted (4 of 26).
#[test]
fn a_huge_exit_wait_is_a_warning_and_the_safety_net_holds() {
    let me = std::env::current_exe().unwrap();
    for how in ["exit", "return"] {
        for _ in 0..3 {
            let out = Command::new(&me)
                .args([
                    "--exact",
                    "a_process_ends_cleanly_with_copies_pending",
                    "--nocapture",
                ])
                .env("LOCUS_EXIT_CHILD", how)
                .env("LOCUS_EXIT_WAIT_S", "1e20")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && String::from_utf8_lossy(&out.stdout).contains("started"),
                "{how}: {:?}\n{stderr}",
                out.status
            );
            assert!(
                stderr.contains("LOCUS_EXIT_WAIT_S=\"1e20\" is not accepted"),
                "{how}: no warning: {stderr}"
            );
        }
    }
}

static KEPT: std::sync::OnceLock<Memory> = std::sync::OnceLock::new();

extern "C" fn copy_out_at_exit() {
    if let Some(m) = KEPT.get() {
        // A copy out to new host memory, as the C program did.
        let copied = Memory::new(Location::Host, 4096).and_then(|h| {
            m.copy_to(0, &h, 0, 4096)?;
            let mut got = [0u8; 2];
            h.read(0, &mut got).map(|()| got)
        });
        match copied {
            Ok(got) => println!("atexit: copied {got:?}"),
            Err(e) => println!("atexit: error: {e}"),
        }
    }
}

/// A program's own `atexit` handler, registered before it first used locus, reads device
/// memory. It runs after the runtimes have shut down (their destructors were registered
/// after it), so the read is a clear error and the process exits 0. On the code before,
/// the read called into Intel's OpenCL runtime after its destructors: "Pure virtual
/// function called!" and SIGABRT (16 of 16).
#[test]
fn an_atexit_handler_registered_first_gets_an_error_not_an_abort() {
    if let Ok(at) = std::env::var("LOCUS_ATEXIT_CHILD") {
        // SAFETY: a plain extern "C" fn that never unwinds (its errors are printed).
        unsafe { libc::atexit(copy_out_at_exit) };
        let at: Location = at.parse().unwrap();
        let m = Memory::new(at, 4096).unwrap();
        m.fill(0..4096, &[5]).unwrap();
        assert!(KEPT.set(m).is_ok());
        println!("made at {at}");
        return;
    }
    let me = std::env::current_exe().unwrap();
    let here = locus::available();
    // OpenCL first: Intel's runtime is the one whose destructors made the old code abort.
    let mut devices: Vec<Location> = here.into_iter().filter(|l| !l.is_host()).collect();
    devices.sort_by_key(|l| l.technology() != locus::Technology::OpenCl);
    if devices.is_empty() {
        println!("SKIPPED: no device location here");
        return;
    }
    for at in devices {
        for _ in 0..3 {
            let out = Command::new(&me)
                .args([
                    "--exact",
                    "an_atexit_handler_registered_first_gets_an_error_not_an_abort",
                    "--nocapture",
                ])
                .env("LOCUS_ATEXIT_CHILD", at.to_string())
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("atexit: "),
                "{at}: {:?}\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                stdout.contains("atexit: error:") && stdout.contains("exiting"),
                "{at}: {stdout}"
            );
        }
    }
}
