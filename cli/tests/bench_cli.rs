//! End to end: `locus bench --quick` with every output, parsed back and checked.

mod tool;

use std::collections::BTreeSet;

use tool::{locus, positive};

#[test]
fn quick_json_csv_plot_and_compare() {
    let dir = std::env::temp_dir().join(format!("locus-bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("matrix.svg");
    let csv = dir.join("matrix.csv");
    let out = locus()
        .args(["bench", "--quick", "--json"])
        .arg(format!("--csv={}", csv.display()))
        .arg("--plot")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let report: serde_json::Value = serde_json::from_str(&text).expect("stdout is the JSON report");

    // Every available pair at every size, with every figure positive and finite.
    let locations: Vec<String> = locus::available().iter().map(|l| l.to_string()).collect();
    let sizes: Vec<u64> = report["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert_eq!(sizes.len(), 3, "--quick sweeps three sizes");
    let cells = report["cells"].as_array().unwrap();
    let mut seen = BTreeSet::new();
    for c in cells {
        let key = (
            c["src"].as_str().unwrap().to_string(),
            c["dst"].as_str().unwrap().to_string(),
            c["bytes"].as_u64().unwrap(),
        );
        for f in ["median_s", "min_s", "max_s"] {
            positive(&c["stats"][f], f);
        }
        for f in ["median", "best", "worst"] {
            positive(&c["gbps"][f], f);
        }
        positive(&c["latency_us"], "latency_us");
        positive(&c["memcpy_gbps"], "memcpy_gbps");
        positive(&c["efficiency_vs_memcpy"], "efficiency_vs_memcpy");
        assert!(c["overhead_vs_raw"].as_f64().unwrap().is_finite());
        let raw = &c["raw"];
        assert!(
            !raw["api"].as_str().unwrap().is_empty(),
            "a raw baseline for {key:?}"
        );
        positive(&raw["gbps"]["median"], "raw bandwidth");
        assert!(!c["route"].as_str().unwrap().is_empty());
        assert!(
            !c["counters"].as_array().unwrap().is_empty(),
            "counters for {key:?}"
        );
        seen.insert(key);
    }
    for s in &locations {
        for d in &locations {
            for &b in &sizes {
                assert!(
                    seen.contains(&(s.clone(), d.clone(), b)),
                    "missing cell {s} -> {d} at {b}"
                );
            }
        }
    }
    // memcpy baseline per size, the machine, access latencies.
    let memcpy = report["memcpy"].as_array().unwrap();
    assert_eq!(memcpy.len(), sizes.len());
    for m in memcpy {
        positive(&m["gbps"]["median"], "memcpy");
    }
    assert_eq!(
        report["machine"]["devices"].as_array().unwrap().len(),
        locations.len()
    );
    for a in report["access"].as_array().unwrap() {
        positive(&a["median_us"], "access latency");
    }
    // Host memory as a dimension: for every device, pageable and huge-page host memory
    // and each page-locked or host-visible kind it offers (SYCL USM host and OpenCL
    // host-visible here; CUDA / HIP pinned on a GPU machine), both directions, and
    // device to device; a device without a page-locked kind named in a note.
    let shaped = report["bandwidth_test"].as_array().unwrap();
    for l in locus::available().into_iter().filter(|l| !l.is_host()) {
        let kinds = locus::registry().device(l).unwrap().memory_kinds();
        let locked: Vec<String> = kinds
            .iter()
            .filter(|k| {
                matches!(
                    k,
                    locus::MemoryKind::PinnedHost
                        | locus::MemoryKind::UsmHost
                        | locus::MemoryKind::HostVisible
                )
            })
            .map(|k| k.to_string())
            .collect();
        let mut rows: Vec<(String, String)> = shaped
            .iter()
            .filter(|c| c["location"] == l.to_string().as_str())
            .map(|c| {
                positive(&c["gbps"]["median"], "host memory cell");
                (
                    c["direction"].as_str().unwrap().to_string(),
                    c["host_memory"].as_str().unwrap().to_string(),
                )
            })
            .filter(|(d, _)| !d.starts_with("to "))
            .collect();
        rows.sort();
        let hosts = ["pageable".to_string(), "huge-pages".to_string()]
            .into_iter()
            .chain(locked.iter().cloned());
        let mut want: Vec<(String, String)> = hosts
            .flat_map(|h| {
                [
                    ("host-to-device".to_string(), h.clone()),
                    ("device-to-host".to_string(), h),
                ]
            })
            .chain([("device-to-device".to_string(), "-".to_string())])
            .collect();
        want.sort();
        assert_eq!(rows, want, "{l}");
        if locked.is_empty() {
            let notes = report["notes"].as_array().unwrap();
            assert!(notes.iter().any(|n| {
                let n = n.as_str().unwrap();
                n.contains("no page-locked") && n.contains(&l.to_string())
            }));
        }
    }

    // CSV: a header and one row per cell.
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.starts_with("src,dst,bytes,route,"));
    assert_eq!(rows.lines().count(), cells.len() + 1);

    // SVG: well-formed XML with one heat-map cell per pair.
    let picture = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&picture).expect("the plot is well-formed XML");
    let rects: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("class") == Some("cell"))
        .collect();
    assert_eq!(rects.len(), locations.len() * locations.len());
    for s in &locations {
        for d in &locations {
            assert!(rects
                .iter()
                .any(|r| r.attribute("data-src") == Some(s) && r.attribute("data-dst") == Some(d)));
        }
    }

    // --compare of a report with itself: every ratio 1.00, no regression.
    let json = dir.join("run.json");
    std::fs::write(&json, &text).unwrap();
    let cmp = locus()
        .args(["bench", "--compare"])
        .arg(&json)
        .arg(&json)
        .output()
        .unwrap();
    assert!(cmp.status.success());
    let cmp = String::from_utf8(cmp.stdout).unwrap();
    assert!(
        cmp.contains(&format!("{} cells compared: 0 slower", cells.len())),
        "{cmp}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments_are_clear_errors() {
    for (args, needle) in [
        (vec!["bench", "--sizes", "4XB"], "bad size"),
        (vec!["bench", "--locations", "gpu:0"], "unknown location"),
        (
            vec!["bench", "--locations", "opencl:99"],
            "opencl:99 is not available",
        ),
        (
            vec!["bench", "--frobnicate"],
            "unexpected argument '--frobnicate'",
        ),
        // Each of these was accepted on the code before: an empty matrix measured with
        // exit 0, a NaN budget measured (issue: no silent input).
        (vec!["bench", "--locations", ""], "names no location"),
        (vec!["bench", "--locations", " , "], "names no location"),
        (vec!["calibrate", "--locations", ""], "names no location"),
        (vec!["bench", "--budget", "nan"], "not a number of seconds"),
        (vec!["bench", "--budget=-1"], "not a number of seconds"),
        (
            vec!["bench", "--max-seconds", "inf"],
            "not a number of seconds",
        ),
        (
            vec!["calibrate", "--budget", "0"],
            "not a number of seconds",
        ),
        // Beyond the host's memory: refused before anything is allocated (the code
        // before was killed by the kernel, exit 137, with 24 GB resident).
        (
            vec!["bench", "--locations", "host", "--sizes", "4KiB,64TiB"],
            "pass --sizes no larger than",
        ),
        (
            vec![
                "bench",
                "--compare",
                "/nonexistent.json",
                "/nonexistent.json",
            ],
            "reading /nonexistent.json",
        ),
    ] {
        let out = locus().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// A `LOCUS_BACKENDS` naming no technology is not a quiet machine without GPUs: a
/// warning names the bad item and the valid names, and every technology it left
/// unprobed says why. (Before, `nonsense` probed nothing and said nothing.)
#[test]
fn a_misspelt_locus_backends_says_so() {
    let out = locus()
        .arg("info")
        .env("LOCUS_BACKENDS", "host,opencl,vulkan")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stderr.contains("`vulkan` names no technology")
            && stderr.contains("host, cuda, hip, openmp, opencl, sycl, webgpu"),
        "{stderr}"
    );
    assert!(
        stdout.contains("opencl     not probed: LOCUS_BACKENDS=\"host,opencl,vulkan\""),
        "{stdout}"
    );
}

/// `locus info` lists the `LOCUS_*` variables in effect, with their meaning, and a
/// value a variable does not accept is a warning naming it and what it takes.
#[test]
fn locus_info_lists_the_variables_in_effect() {
    let out = locus()
        .arg("info")
        .env("LOCUS_BACKENDS", "host,webgpu")
        .env("LOCUS_WEBGPU_MAPPABLE", "maybe")
        .env("LOCUS_WEBGPU_CONVERT", "device")
        .env_remove("LOCUS_REQUIRE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("Environment (LOCUS_* variables set"),
        "{stdout}"
    );
    assert!(
        stdout.contains("LOCUS_BACKENDS=\"host,webgpu\": which technologies are probed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("LOCUS_WEBGPU_CONVERT=\"device\""),
        "{stdout}"
    );
    if !stdout.contains("webgpu:0") {
        println!("SKIPPED: no WebGPU adapter here, so LOCUS_WEBGPU_MAPPABLE is never read");
        return;
    }
    assert!(
        stderr.contains("LOCUS_WEBGPU_MAPPABLE=\"maybe\" is not accepted (it takes `1`, `0`)"),
        "{stderr}"
    );
}

/// `locus info | head -0`: the reader goes away before the CLI prints (it spends its
/// first second finding the backends), and the CLI ends quietly (by SIGPIPE, as `cat`
/// does) instead of panicking with "failed printing to stdout: Broken pipe", which it
/// did before it restored SIGPIPE's default.
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_the_cli_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let mut child = locus()
        .arg("info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{:?}: {stderr}",
        out.status
    );
}

/// A calibration the planner cannot use is said on stderr, not only in `locus info`'s
/// status line: a path in `LOCUS_CALIBRATION` that names no file, an empty file, and
/// one that is not a calibration (NaN costs, written as JSON `null`, are not numbers).
/// On the code before each was taken in silence by every program but `locus info`.
#[test]
fn a_calibration_that_cannot_be_used_is_a_warning() {
    let dir = std::env::temp_dir().join(format!("locus-bad-calibration-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let nan = dir.join("nan.json");
    std::fs::write(&nan, r#"{"version": 1, "pairs": [{"cost": null}]}"#).unwrap();
    for (value, needle) in [
        (dir.join("missing.json"), "names no file"),
        (empty, "is not a calibration file"),
        (nan, "calibration"),
    ] {
        let out = locus()
            .arg("info")
            .env("LOCUS_CALIBRATION", &value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("warning") && stderr.contains(needle),
            "{}: {stderr}",
            value.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `locus info` reports the alignment every location's allocations and resource blocks
/// keep (RMM's 256 bytes), once per location.
#[test]
fn info_reports_each_location_s_alignment() {
    let out = locus().arg("info").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines = stdout
        .lines()
        .filter(|l| l.contains("alignment: 256 bytes for allocations and resource blocks"))
        .count();
    assert_eq!(lines, locus::available().len(), "{stdout}");
}
