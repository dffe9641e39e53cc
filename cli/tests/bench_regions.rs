//! `locus bench --regions` end to end: a row face, a column face, a tile and a box face at every
//! pair of the locations this machine must have, each timed four ways with every figure
//! positive and finite, the route named, the runtime's own rectangle call measured where
//! one exists between the two; bad options refused before anything runs.

#[path = "../../tests/common/mod.rs"]
mod common;
mod tool;

use tool::locus;

use serde_json::Value;

#[test]
fn every_pair_moves_the_four_shapes_four_ways() {
    let list: Vec<String> = common::required_locations()
        .iter()
        .map(|l| l.to_string())
        .collect();
    let out = locus()
        .args([
            "bench",
            "--regions",
            "--region-grid",
            "128",
            "--budget",
            "0.002",
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
        "--regions alone runs no matrix"
    );
    let cells = report["regions"].as_array().unwrap();
    assert_eq!(
        cells.len(),
        list.len() * list.len() * 4,
        "four shapes per pair"
    );
    for c in cells {
        let what = format!("{} -> {} {}", c["src"], c["dst"], c["shape"]);
        for timing in ["locus", "run_loop", "contiguous"] {
            let s = c[timing]["median_s"].as_f64().unwrap();
            assert!(s.is_finite() && s > 0.0, "{what}: {timing} {s}");
        }
        let route = c["route"].as_str().unwrap();
        let runs = c["runs"].as_u64().unwrap();
        match c["shape"].as_str().unwrap() {
            "row face" => assert!(route.starts_with("contiguous"), "{what}: {route}"),
            "column face" => assert_eq!(runs, 128, "{what}"),
            "half tile" => assert_eq!(runs, 64, "{what}"),
            _ => assert_eq!(runs, 8 * 8, "{what}: a box of 8 per side"),
        }
        let same_opencl = c["src"] == c["dst"] && c["src"].as_str().unwrap().starts_with("opencl");
        if same_opencl && runs > 1 {
            assert_eq!(
                c["raw_call"],
                "clEnqueueCopyBufferRect at opencl:0, one call"
                    .replace("opencl:0", c["src"].as_str().unwrap()),
                "{what}"
            );
            // The planner's own route: one rectangle, by the runtime's call or (a CPU
            // device's memory the host maps in place) a memcpy per row.
            assert!(route.starts_with("rect"), "{what}: {route}");
        }
    }
}

#[test]
fn bad_region_options_are_refused_before_anything_runs() {
    for (args, expect) in [
        (vec!["--regions", "--region-grid", "1"], "at least 2"),
        (
            vec!["--regions", "--region-grid", "9000000000"],
            "within usize",
        ),
        (vec!["--region-grid", "64"], "goes with --regions"),
    ] {
        let out = locus().arg("bench").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed a report");
    }
}
