//! The trace (issue 68): a pipeline at every location, written as a user writes one, is
//! traced copy by copy with its route and bytes, every allocation is matched by its
//! free, and the file parses as the Chrome trace event format defines it (a JSON array
//! of events, each with `name`, `ph`, `pid`, `tid` and, but for metadata, `ts`). A
//! process that dies mid-run leaves a readable file; an unwritable path is a warning and
//! the program runs on; statistics scopes nest as RMM's do; the `tracing` ecosystem gets
//! the same events.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use locus::trace::{ChromeTrace, StatisticsScope};
use locus::{Location, Memory};
use serde_json::Value;

fn temp_file(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("locus-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs this test binary again as the child of `test`, in `mode`
/// (`LOCUS_TRACE_CHILD`), with `env`: its status, stdout and stderr.
fn run_child(test: &str, mode: &str, env: &[(&str, &std::ffi::OsStr)]) -> (bool, String, String) {
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", test, "--nocapture"])
        .env("LOCUS_TRACE_CHILD", mode);
    for (k, v) in env {
        child.env(k, v);
    }
    let out = child.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The events of a Chrome trace file, parsed strictly (`]` present) or, with `truncated`,
/// as the format allows a file cut short (the closing `]` missing).
fn events(path: &Path, truncated: bool) -> Vec<Value> {
    let mut text = std::fs::read_to_string(path).unwrap();
    if truncated {
        let trimmed = text.trim_end().trim_end_matches(',').to_string();
        text = if trimmed.ends_with(']') {
            trimmed
        } else {
            trimmed + "]"
        };
    }
    let value: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not a JSON array of events: {e}", path.display()));
    let events = value.as_array().expect("the JSON array format").clone();
    for e in &events {
        let ph = e["ph"].as_str().expect("every event has a phase");
        assert!(e["name"].is_string() && e["pid"].is_u64(), "{e}");
        if ph != "M" {
            assert!(e["ts"].is_number() && e["tid"].is_u64(), "{e}");
        }
        if ph == "X" {
            assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
        }
    }
    events
}

/// The copies in `events`: (src, dst, bytes, route, queued).
fn copies(events: &[Value]) -> Vec<(String, String, u64, String, bool)> {
    events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"].as_str().unwrap_or("").starts_with("copy,"))
        .map(|e| {
            let a = &e["args"];
            (
                a["src"].as_str().unwrap().to_string(),
                a["dst"].as_str().unwrap().to_string(),
                a["bytes"].as_u64().unwrap(),
                a["route"].as_str().unwrap().to_string(),
                a["queued"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_pipeline_at_every_location_is_traced_copy_by_copy_and_every_allocation_is_freed() {
    let _serial = common::serial();
    let locations = common::required_locations();
    let path = temp_file("pipeline.json");
    let trace = ChromeTrace::create(&path).unwrap();
    let mut expected: Vec<(String, String, u64, String)> = Vec::new();
    {
        let n = 1 << 16;
        let source = Memory::from_vec(common::pattern_u8(n, 3));
        let mut previous = Arc::new(source);
        // host -> a -> b -> ... -> host, each hop on the planner's route.
        for &at in locations.iter().chain([&Location::Host]) {
            let next = Arc::new(Memory::new(at, n).unwrap());
            let route = previous.copy_to(0, &next, 0, n).unwrap();
            expected.push((
                previous.location().to_string(),
                at.to_string(),
                n as u64,
                route.kind.name().to_string(),
            ));
            // One asynchronous copy within each location too, not waited for here: the
            // read below orders after it, as a user's code does.
            let other = Arc::new(Memory::new(at, n).unwrap());
            let event = next.copy_to_async(0, &other, 0, n, &[]).unwrap();
            event.wait().unwrap();
            previous = next;
        }
        let mut back = vec![0u8; n];
        previous.read(0, &mut back).unwrap();
        assert_eq!(back, common::pattern_u8(n, 3));
    }
    // A queued copy's event is traced when locus sees it done, on a locus thread.
    std::thread::sleep(std::time::Duration::from_millis(200));
    trace.finish().unwrap();

    let events = events(&path, false);
    let traced = copies(&events);
    for (src, dst, bytes, route) in &expected {
        assert!(
            traced
                .iter()
                .any(|(s, d, b, r, _)| s == src && d == dst && b == bytes && r == route),
            "the copy {src} -> {dst} of {bytes} B on the {route} route is not in the trace:\n{traced:?}"
        );
    }
    for &at in locations.iter().chain([&Location::Host]) {
        let at = at.to_string();
        assert!(
            traced.iter().any(|(s, d, _, _, _)| *s == at && *d == at),
            "the asynchronous copy within {at} is not in the trace:\n{traced:?}"
        );
    }
    assert!(
        traced
            .iter()
            .any(|c| c.0 != "host" && c.1 == "host" && c.3 == "direct")
            || locations.iter().all(|l| l.is_host()),
        "the read back is in the trace"
    );
    let ids = |name: &str| -> HashMap<u64, Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "i" && e["name"] == name)
            .map(|e| (e["args"]["id"].as_u64().unwrap(), e["args"].clone()))
            .collect()
    };
    let (allocated, freed) = (ids("allocate"), ids("free"));
    assert!(allocated.len() > 2 * locations.len());
    for (id, args) in &allocated {
        let free = freed
            .get(id)
            .unwrap_or_else(|| panic!("allocation {args} was never freed in the trace"));
        assert_eq!(free["bytes"], args["bytes"]);
        assert_eq!(free["location"], args["location"]);
    }
    let at_least: HashSet<&str> = allocated
        .values()
        .map(|a| a["location"].as_str().unwrap())
        .collect();
    for at in &locations {
        assert!(at_least.contains(at.to_string().as_str()), "{at}");
    }
    println!(
        "TRACE: {} events, {} copies, {} allocations at {} locations",
        events.len(),
        traced.len(),
        allocated.len(),
        locations.len()
    );
}

/// The child of `a_process_that_dies_mid_run_leaves_a_readable_trace`.
fn die_mid_run() {
    let a = Memory::new(Location::Host, 4096).unwrap();
    let b = Memory::new(Location::Host, 4096).unwrap();
    a.copy_to(0, &b, 0, 4096).unwrap();
    std::process::abort();
}

#[test]
fn a_process_that_dies_mid_run_leaves_a_readable_trace() {
    if std::env::var("LOCUS_TRACE_CHILD").as_deref() == Ok("die") {
        die_mid_run();
    }
    let path = temp_file("died.json");
    let (ok, _, _) = run_child(
        "a_process_that_dies_mid_run_leaves_a_readable_trace",
        "die",
        &[("LOCUS_TRACE", path.as_os_str())],
    );
    assert!(!ok, "the child aborts");
    let events = events(&path, true);
    assert!(
        copies(&events)
            .iter()
            .any(|c| c.0 == "host" && c.1 == "host" && c.2 == 4096),
        "the copy made before the crash is in the file"
    );
}

#[test]
fn an_unwritable_trace_path_is_a_clear_error_and_a_run_under_it_goes_on() {
    let bad = Path::new("/nonexistent-locus-dir/run.json");
    let e = ChromeTrace::create(bad).unwrap_err().to_string();
    assert!(
        e.contains("/nonexistent-locus-dir/run.json") && e.contains("directory you can write"),
        "{e}"
    );
    if std::env::var("LOCUS_TRACE_CHILD").as_deref() == Ok("unwritable") {
        let a = Memory::new(Location::Host, 64).unwrap();
        let b = Memory::new(Location::Host, 64).unwrap();
        a.copy_to(0, &b, 0, 64).unwrap();
        println!("copied");
        return;
    }
    let (ok, stdout, stderr) = run_child(
        "an_unwritable_trace_path_is_a_clear_error_and_a_run_under_it_goes_on",
        "unwritable",
        &[("LOCUS_TRACE", bad.as_os_str())],
    );
    assert!(ok && stdout.contains("copied"), "{stdout}{stderr}");
    assert_eq!(
        stderr.matches("LOCUS_TRACE").count(),
        1,
        "one warning naming the setting:\n{stderr}"
    );
}

/// The child of `a_disk_that_fills_mid_trace_ends_the_trace_not_the_program`: its files
/// may not grow past 8 KiB (as a full disk), and it copies on.
fn fill_the_disk(path: &Path) {
    // SAFETY: plain libc calls on this process (SIGXFSZ ignored, so a write past the
    // limit fails with EFBIG instead of ending the process, as ENOSPC would on a full
    // disk).
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let limit = libc::rlimit {
            rlim_cur: 8192,
            rlim_max: 8192,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
    }
    let trace = ChromeTrace::create(path).unwrap();
    let a = Memory::from_vec(common::pattern_u8(4096, 7));
    let b = Memory::new(Location::Host, 4096).unwrap();
    for _ in 0..500 {
        a.copy_to(0, &b, 0, 4096).unwrap();
    }
    let mut back = vec![0u8; 4096];
    b.read(0, &mut back).unwrap();
    assert_eq!(
        back,
        common::pattern_u8(4096, 7),
        "the program's own work is whole"
    );
    trace.finish().unwrap();
    println!("copied");
}

#[test]
fn a_disk_that_fills_mid_trace_ends_the_trace_not_the_program() {
    if std::env::var("LOCUS_TRACE_CHILD").as_deref() == Ok("full") {
        let path = std::env::var_os("TRACE_TEST_FILE").expect("the parent names the file");
        return fill_the_disk(Path::new(&path));
    }
    let path = temp_file("full.json");
    let (ok, stdout, stderr) = run_child(
        "a_disk_that_fills_mid_trace_ends_the_trace_not_the_program",
        "full",
        &[("TRACE_TEST_FILE", path.as_os_str())],
    );
    assert!(ok && stdout.contains("copied"), "{stdout}{stderr}");
    assert_eq!(
        stderr.matches("could not be written").count(),
        1,
        "one warning:\n{stderr}"
    );
    assert!(std::fs::metadata(&path).unwrap().len() <= 8192);
    let events = events(&path, true);
    assert!(
        copies(&events).len() > 5,
        "the events before the disk filled are readable"
    );
}

#[test]
fn locus_trace_covers_a_whole_run_and_closes_its_array_at_exit() {
    if std::env::var("LOCUS_TRACE_CHILD").as_deref() == Ok("whole") {
        let a = Memory::new(Location::Host, 256).unwrap();
        let b = Memory::new(Location::Host, 256).unwrap();
        a.copy_to(0, &b, 0, 256).unwrap();
        return;
    }
    let path = temp_file("whole.json");
    let (ok, stdout, stderr) = run_child(
        "locus_trace_covers_a_whole_run_and_closes_its_array_at_exit",
        "whole",
        &[("LOCUS_TRACE", path.as_os_str())],
    );
    assert!(ok, "{stdout}{stderr}");
    let events = events(&path, false);
    assert!(copies(&events).iter().any(|c| c.2 == 256));
}

#[test]
fn statistics_scopes_nest_as_rmm_counts_them() {
    let _serial = common::serial();
    locus::available();
    let outer = StatisticsScope::new();
    let a = Memory::new(Location::Host, 1000).unwrap();
    let inner = StatisticsScope::new();
    let b = Memory::new(Location::Host, 500).unwrap();
    let c = Memory::new(Location::Host, 500).unwrap();
    b.copy_to(0, &c, 0, 500).unwrap();
    drop(b);
    drop(a); // allocated in the outer scope, freed in the inner one: negative, as in RMM
    let counted = inner.finish();
    assert_eq!(counted.total_count, 2);
    assert_eq!(counted.total_bytes, 1000);
    assert_eq!(counted.current_bytes, 500 - 1000);
    assert_eq!(counted.peak_bytes, 1000);
    assert_eq!(counted.copies.iter().sum::<u64>(), 1);
    assert_eq!(counted.copied_bytes.iter().sum::<u64>(), 500);
    // The inner scope added to the outer one (RMM's add_counters_from_tracked_sub_block).
    let total = outer.statistics();
    assert_eq!(total.total_count, 3);
    assert_eq!(total.total_bytes, 2000);
    assert_eq!(total.current_bytes, 500);
    assert_eq!(
        total.peak_bytes, 2000,
        "1000 held when the inner scope peaked at 1000"
    );
    drop(c);
    assert_eq!(outer.finish().current_bytes, 0);
    assert!(
        locus::trace::pop_statistics().is_none(),
        "no scope left open"
    );
}

/// A `tracing` subscriber of the application's own, as a user plugs one in (here a
/// minimal one that keeps each event's message and fields as text).
struct Collect(std::sync::Mutex<Vec<String>>);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl tracing::Subscriber for Collect {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.target() == "locus"
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn a_tracing_subscriber_gets_the_events() {
    let collect = Arc::new(Collect(std::sync::Mutex::new(Vec::new())));
    let at = *common::required_locations().last().unwrap();
    // As an application installs its subscriber (`tracing_subscriber::fmt::init()`): the
    // global default, here after locus's discovery ran.
    tracing::subscriber::set_global_default(Arc::clone(&collect)).unwrap();
    {
        let a = Memory::new(Location::Host, 1024).unwrap();
        let b = Memory::new(at, 1024).unwrap();
        a.copy_to(0, &b, 0, 1024).unwrap();
    }
    let seen = collect.0.lock().unwrap().join("\n");
    assert!(
        seen.contains("message=allocated") && seen.contains("message=freed"),
        "{seen}"
    );
    assert!(
        seen.contains("message=copied")
            && seen.contains(&format!("dst={at}"))
            && seen.contains("bytes=1024"),
        "{seen}"
    );
}

#[test]
fn handles_opened_and_closed_are_in_the_trace_by_what_they_are() {
    let _serial = common::serial();
    let path = temp_file("handles.json");
    let trace = ChromeTrace::create(&path).unwrap();
    {
        let shared = Memory::new_shared(Location::Host, 4096).unwrap();
        let handle = shared.ipc_handle().unwrap();
        let opened = Memory::open_ipc(&handle).unwrap();
        drop((opened, shared));
        let _vector = Memory::from_vec(vec![1u8; 64]);
    }
    trace.finish().unwrap();
    let events = events(&path, false);
    let sources: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["ph"] == "i")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["args"]["source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (what, source) in [
        ("allocate", "ipc handle"),
        ("free", "ipc handle"),
        ("allocate", "host vector"),
    ] {
        assert!(
            sources.iter().any(|(w, s)| w == what && s == source),
            "{what} of {source} missing: {sources:?}"
        );
    }
}

/// The child of `queued_copies_carry_the_device_s_times_under_locus_trace`.
fn queued_copy_times() {
    let queues = [locus::Technology::OpenCl, locus::Technology::Sycl]
        .into_iter()
        .flat_map(common::required_of);
    for at in queues {
        let a = Arc::new(Memory::new(at, 1 << 20).unwrap());
        let b = Arc::new(Memory::new(at, 1 << 20).unwrap());
        let event = a.copy_to_async(0, &b, 0, 1 << 20, &[]).unwrap();
        event.wait().unwrap();
        let traced = std::env::var_os("LOCUS_TRACE").is_some();
        match event.device_times() {
            Some(t) => {
                assert!(
                    traced,
                    "{at}: device times only on a queue made for a trace"
                );
                assert!(
                    t.queued_ns <= t.started_ns && t.started_ns <= t.ended_ns,
                    "{at}: {t:?}"
                );
                println!("{at}: device times {t:?}");
            }
            None => assert!(!traced, "{at}: no device times under LOCUS_TRACE"),
        }
    }
    println!("checked");
}

#[test]
fn queued_copies_carry_the_device_s_times_under_locus_trace() {
    if std::env::var("LOCUS_TRACE_CHILD").as_deref() == Ok("times") {
        return queued_copy_times();
    }
    let path = temp_file("times.json");
    for traced in [true, false] {
        let env: &[(&str, &std::ffi::OsStr)] = if traced {
            &[("LOCUS_TRACE", path.as_os_str())]
        } else {
            &[]
        };
        let (ok, stdout, stderr) = run_child(
            "queued_copies_carry_the_device_s_times_under_locus_trace",
            "times",
            env,
        );
        assert!(ok && stdout.contains("checked"), "{stdout}{stderr}");
    }
    let queued: Vec<_> = copies(&events(&path, false))
        .into_iter()
        .filter(|c| c.4)
        .collect();
    assert!(
        !queued.is_empty() || common::required_of(locus::Technology::OpenCl).is_empty(),
        "the queued copies are in the trace"
    );
    if common::required_of(locus::Technology::Sycl)
        .iter()
        .any(|l| l.ordinal() == 0)
    {
        assert!(queued.iter().any(|c| c.0 == "sycl:0"), "{queued:?}");
    }
}
