//! locus's copies as a vendor profiler's ranges and its allocations as marks (issue 68,
//! item 4), through the profilers' own protocols: NVTX v3's injection (what Nsight
//! Systems does: `NVTX_INJECTION64_PATH` names its library) and ROCTX's library (what
//! rocprof intercepts). Each profiler is a stand-in written as the protocol has tools
//! written (`tests/profiler_tools/`), built here with the C compiler; each run is this
//! test binary started again as the profiled process.

use std::path::{Path, PathBuf};
use std::process::Command;

use locus::{Location, Memory};

/// The profiled child: allocates, copies, frees.
fn profiled_work() {
    let a = Memory::new(Location::Host, 4096).unwrap();
    let b = Memory::new(Location::Host, 4096).unwrap();
    a.copy_to(0, &b, 0, 4096).unwrap();
    println!("worked");
}

fn build(source: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("locus-profiler-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/profiler_tools")
        .join(source);
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("a C compiler (cc) builds the stand-in profilers");
    assert!(status.success(), "building {source}");
    out
}

/// Runs the profiled child with `env`, and returns its profiler's log.
fn run_profiled(test: &str, env: &[(&str, &std::ffi::OsStr)]) -> String {
    let log =
        std::env::temp_dir().join(format!("locus-profiler-{test}-{}.log", std::process::id()));
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", test, "--nocapture"])
        .env("LOCUS_PROFILED_CHILD", "1")
        .env("FAKE_PROFILER_LOG", &log);
    for (k, v) in env {
        child.env(k, v);
    }
    let out = child.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains("worked"),
        "{stdout}{stderr}"
    );
    std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("no profiler log ({e}): {stderr}"))
}

/// Every range the log opened is closed, the copy is a range and the allocations marks.
fn check_ranges(log: &str) {
    let starts: Vec<&str> = log.lines().filter(|l| l.starts_with("start ")).collect();
    assert!(
        starts
            .iter()
            .any(|l| l.contains("locus copy host -> host (4096 B, direct)")),
        "{log}"
    );
    for start in &starts {
        let id = start.split_whitespace().nth(1).unwrap();
        assert!(
            log.lines().any(|l| l == format!("end {id}")),
            "range {id} never ended:\n{log}"
        );
    }
    assert!(log.contains("mark locus allocate 4096 B at host"), "{log}");
    assert!(log.contains("mark locus free 4096 B at host"), "{log}");
}

#[test]
#[cfg(feature = "cuda")]
fn an_nvtx_tool_sees_locus_s_copies_as_ranges() {
    if std::env::var_os("LOCUS_PROFILED_CHILD").is_some() {
        return profiled_work();
    }
    let tool = build("fake_nvtx_tool.c", "libfake_nvtx_tool.so");
    let log = run_profiled(
        "an_nvtx_tool_sees_locus_s_copies_as_ranges",
        &[("NVTX_INJECTION64_PATH", tool.as_os_str())],
    );
    assert!(log.starts_with("attached, 16 core slots"), "{log}");
    check_ranges(&log);
}

#[test]
#[cfg(feature = "hip")]
fn an_amd_profiler_sees_locus_s_copies_as_roctx_ranges() {
    if std::env::var_os("LOCUS_PROFILED_CHILD").is_some() {
        return profiled_work();
    }
    let lib = build("fake_roctx.c", "libroctx64.so.4");
    let dir = lib.parent().unwrap().as_os_str().to_owned();
    // As rocprofv3 runs a process: its tool library named in ROCP_TOOL_LIBRARIES
    // (`auto` attaches ROCTX for it).
    let log = run_profiled(
        "an_amd_profiler_sees_locus_s_copies_as_roctx_ranges",
        &[
            ("LD_LIBRARY_PATH", dir.as_os_str()),
            (
                "ROCP_TOOL_LIBRARIES",
                std::ffi::OsStr::new("/opt/rocm/lib/rocprofiler-sdk/librocprofiler-sdk-tool.so"),
            ),
        ],
    );
    check_ranges(&log);
}

#[test]
#[cfg(feature = "cuda")]
fn ranges_off_calls_no_profiler() {
    if std::env::var_os("LOCUS_PROFILED_CHILD").is_some() {
        return profiled_work();
    }
    let tool = build("fake_nvtx_tool.c", "libfake_nvtx_tool.so");
    let log = std::env::temp_dir().join(format!(
        "locus-profiler-ranges_off_calls_no_profiler-{}.log",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&log);
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "ranges_off_calls_no_profiler", "--nocapture"])
        .env("LOCUS_PROFILED_CHILD", "1")
        .env("FAKE_PROFILER_LOG", &log)
        .env("NVTX_INJECTION64_PATH", &tool)
        .env("LOCUS_PROFILER_RANGES", "off")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!log.exists(), "the tool was never loaded");
}
