//! `locus bench --stream` end to end: BabelStream's five kernels and the API copy at
//! every location this machine must have, in f32 and in f64 where the location has f64,
//! beside the host's own loop, and the Copy kernel over another location's memory in
//! place against the API's copy; every figure positive and finite, the report's shape
//! BabelStream's; bad options refused before anything runs.

#[path = "../../tests/common/mod.rs"]
mod common;
mod tool;

use tool::{locus, positive};

use serde_json::Value;

#[test]
fn every_location_runs_the_five_kernels_in_both_precisions() {
    let required = common::required_locations();
    let list: Vec<String> = required.iter().map(|l| l.to_string()).collect();
    let out = locus()
        .args([
            "bench",
            "--stream",
            "--stream-elements",
            "10007",
            "--stream-times",
            "3",
            "--locations",
            &list.join(","),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["cells"].as_array().unwrap().len(),
        0,
        "--stream alone runs no matrix"
    );
    // The record names the command and each runtime's version where it reports one.
    assert!(report["command"]
        .as_str()
        .unwrap()
        .starts_with("locus bench --stream"));
    for d in report["machine"]["devices"].as_array().unwrap() {
        let at = d["location"].as_str().unwrap();
        let technology = at.split(':').next().unwrap();
        if ["opencl", "sycl", "webgpu", "cuda", "hip"].contains(&technology) {
            let version = d["version"].as_str().unwrap_or_default();
            assert!(!version.is_empty(), "{at} reports no version: {d}");
        }
    }
    let runs = report["stream"].as_array().unwrap();
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for at in list.iter().map(String::as_str).chain(["host loop"]) {
        for precision in ["f32", "f64"] {
            let run = runs
                .iter()
                .find(|r| r["location"] == at && r["precision"] == precision);
            let Some(run) = run else {
                // Only a location without f64 may leave a run out, and it says why.
                assert_eq!(precision, "f64", "no {precision} run at {at}");
                let why = notes
                    .iter()
                    .find(|n| n.starts_with(&format!("stream: {at} f64 skipped")))
                    .unwrap_or_else(|| {
                        panic!("no f64 run at {at} and no note saying why: {notes:?}")
                    });
                eprintln!("{why}");
                continue;
            };
            assert_eq!(run["elements"], 10007);
            assert_eq!(run["times"], 3);
            let kernels: Vec<&str> = run["kernels"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k["kernel"].as_str().unwrap())
                .collect();
            assert_eq!(
                kernels,
                ["Copy", "Mul", "Add", "Triad", "Dot", "API copy"],
                "{at}"
            );
            let element = if precision == "f64" { 8 } else { 4 };
            for (k, arrays) in run["kernels"]
                .as_array()
                .unwrap()
                .iter()
                .zip([2, 2, 3, 3, 2, 2])
            {
                let what = format!("{at} {precision} {}", k["kernel"]);
                assert_eq!(k["bytes"], arrays * element * 10007, "{what}");
                positive(&k["mbytes_per_sec"], &what);
                let min = positive(&k["min_s"], &what);
                let avg = positive(&k["avg_s"], &what);
                let max = positive(&k["max_s"], &what);
                assert!(
                    min <= avg && avg <= max,
                    "{what}: min {min} avg {avg} max {max}"
                );
            }
        }
    }
    // The Copy kernel over another location's memory in place, beside the API's copy:
    // host memory is usable in place by code at every location that maps it.
    let copies = report["kernel_copies"].as_array().unwrap();
    for c in copies {
        let what = format!("kernel copy {} -> {}", c["memory"], c["by"]);
        positive(&c["kernel"]["mbytes_per_sec"], &what);
        positive(&c["api"]["mbytes_per_sec"], &what);
        assert_eq!(c["bytes"], 4 * 10007, "{what}");
    }
    if list.iter().any(|l| l == "host") && list.iter().any(|l| l == "openmp:0") {
        assert!(
            copies
                .iter()
                .any(|c| c["memory"] == "host" && c["by"] == "openmp:0"),
            "no kernel copy from host memory at openmp:0: {copies:?}"
        );
    }
    // The text report has BabelStream's table.
    let text = locus()
        .args([
            "bench",
            "--stream",
            "--stream-elements",
            "1000",
            "--stream-times",
            "2",
            "--locations",
            &list[0],
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Function    MBytes/sec  Min (sec)   Max         Average"),
        "{text}"
    );
}

#[test]
fn bad_stream_options_are_refused_before_anything_runs() {
    for (args, expect) in [
        (vec!["--stream", "--stream-times", "1"], "at least 2"),
        (
            vec!["--stream", "--stream-elements", "0"],
            "--stream-elements 0",
        ),
        (
            vec!["--stream", "--stream-elements", "4294967295"],
            "32 bits",
        ),
        // Far more than any machine of this project holds: refused, nothing allocated.
        (
            vec!["--stream", "--stream-elements", "4000000000"],
            "pass fewer elements",
        ),
        (vec!["--stream-times", "5"], "go with --stream"),
    ] {
        let out = locus().arg("bench").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed a report");
    }
}
