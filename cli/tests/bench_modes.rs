//! `locus bench`'s modes beyond the matrix, end to end at every location this machine
//! must have: both directions at once (`--bidirectional`), copies at once in
//! nvbandwidth's shapes (`--concurrent`), the latency sweep (`--latency`) with each
//! cell's spread, and `--compare` judging changes against that spread.

#[path = "../../tests/common/mod.rs"]
mod common;
mod tool;

use tool::{locus, positive};

use serde_json::Value;

/// The first required location of each technology.
fn one_per_technology() -> Vec<String> {
    let mut list: Vec<String> = Vec::new();
    for l in common::required_locations() {
        if !list
            .iter()
            .any(|s| s.split(':').next() == Some(l.technology().name()))
        {
            list.push(l.to_string());
        }
    }
    list
}

/// A timing's figures: positive and finite, the 99th percentile at or above the median,
/// a coefficient of variation finite and not negative.
fn check_stats(s: &Value, what: &str) {
    let median = positive(&s["median_s"], &format!("{what} median"));
    let p99 = positive(&s["p99_s"], &format!("{what} p99"));
    assert!(p99 >= median, "{what}: p99 {p99} below the median {median}");
    let cv = s["cv"].as_f64().unwrap();
    assert!(cv.is_finite() && cv >= 0.0, "{what}: cv {cv}");
    assert!(s["runs"].as_u64().unwrap() >= 2, "{what}: {s}");
}

fn run(args: &[&str]) -> Value {
    let out = locus().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "locus {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is the JSON report")
}

#[test]
fn bidirectional_concurrent_and_latency_report_every_pair() {
    let required = common::required_locations();
    if required.len() < 2 {
        println!("SKIPPED: one location only ({required:?})");
        return;
    }
    let list: Vec<String> = required.iter().map(|l| l.to_string()).collect();
    let k = list.len();
    let locations = list.join(",");
    let report = run(&[
        "bench",
        "--locations",
        &locations,
        "--latency",
        "--sizes",
        "64,4KiB",
        "--bidirectional",
        "--concurrent",
        "all",
        "--budget",
        "0.002",
        "--json",
    ]);

    // The matrix's cells carry their spread.
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2 * k * k);
    for c in cells {
        check_stats(&c["stats"], &format!("{} -> {}", c["src"], c["dst"]));
    }

    // Both directions of every unordered pair at each size, through locus and raw.
    let duplex = report["bidirectional"].as_array().unwrap();
    assert_eq!(duplex.len(), 2 * k * (k - 1) / 2, "{duplex:?}");
    let mut pairs = std::collections::BTreeSet::new();
    for c in duplex {
        let what = format!("{} <-> {} at {}", c["a"], c["b"], c["bytes"]);
        assert_ne!(c["a"], c["b"]);
        pairs.insert((c["a"].to_string(), c["b"].to_string(), c["bytes"].as_u64()));
        check_stats(&c["a_to_b"], &what);
        check_stats(&c["b_to_a"], &what);
        for key in ["a_to_b_gbps", "b_to_a_gbps", "sum_gbps"] {
            positive(&c[key], &format!("{what} {key}"));
        }
        for (i, g) in c["raw_gbps"].as_array().unwrap().iter().enumerate() {
            positive(g, &format!("{what} raw {i}"));
        }
        assert!(
            c["raw_api"][0].as_str().is_some_and(|s| !s.is_empty()),
            "{what}"
        );
    }
    assert_eq!(pairs.len(), duplex.len(), "each pair once per size");

    // one-to-all and all-to-one: a run per location with a copy to or from each other
    // one; all-pairs: one run with every ordered pair.
    let runs = report["concurrent"].as_array().unwrap();
    let of = |shape: &str| {
        runs.iter()
            .filter(|r| r["shape"] == shape)
            .collect::<Vec<_>>()
    };
    assert_eq!(of("one-to-all").len(), k);
    assert_eq!(of("all-to-one").len(), k);
    assert_eq!(of("all-pairs").len(), 1);
    for r in runs {
        let shape = r["shape"].as_str().unwrap();
        let copies = r["copies"].as_array().unwrap();
        let expected = if shape == "all-pairs" {
            k * (k - 1)
        } else {
            k - 1
        };
        assert_eq!(copies.len(), expected, "{shape}: {r}");
        assert_eq!(r["bytes"], 4096, "the largest size");
        let center = r["center"].as_str();
        for c in copies {
            let what = format!("{shape} {} -> {}", c["src"], c["dst"]);
            assert_ne!(c["src"], c["dst"], "{what}");
            match shape {
                "one-to-all" => assert_eq!(c["src"].as_str(), center, "{what}"),
                "all-to-one" => assert_eq!(c["dst"].as_str(), center, "{what}"),
                _ => assert!(center.is_none()),
            }
            check_stats(&c["stats"], &what);
            positive(&c["gbps"], &what);
        }
        check_stats(&r["wall"], shape);
        positive(&r["aggregate_gbps"], shape);
    }

    // A report compared with itself: every change within the spread.
    let dir = std::env::temp_dir().join(format!("locus-bench-modes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("report.json");
    std::fs::write(&file, report.to_string()).unwrap();
    let out = locus()
        .args(["bench", "--compare"])
        .args([&file, &file])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "{} cells compared: 0 slower and 0 faster beyond their spread",
            cells.len()
        )),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn modes_with_one_location_or_an_unknown_shape_are_refused_before_anything_runs() {
    for (args, needle) in [
        (
            vec!["bench", "--locations", "host", "--bidirectional"],
            "--bidirectional: copies between locations need two or more, and 1 was given",
        ),
        (
            vec!["bench", "--locations", "host", "--concurrent", "all-pairs"],
            "--concurrent: copies between locations need two or more",
        ),
        (
            vec!["bench", "--concurrent", "sideways"],
            "possible values: one-to-all, all-to-one, all-pairs, all",
        ),
    ] {
        let out = locus().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing measured");
    }
}

#[test]
fn markdown_records_the_command_the_machine_and_every_cell() {
    let required = common::required_locations();
    if required.len() < 2 {
        println!("SKIPPED: one location only ({required:?})");
        return;
    }
    let list: Vec<String> = required.iter().map(|l| l.to_string()).collect();
    let locations = list.join(",");
    let out = locus()
        .args([
            "bench",
            "--locations",
            &locations,
            "--sizes",
            "4KiB,64KiB",
            "--budget",
            "0.002",
        ])
        .args(["--bidirectional", "--markdown"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("# locus bench on "), "{text}");
    assert!(
        text.contains("Made by `locus bench --locations"),
        "the command is recorded: {text}"
    );
    for l in &list {
        assert!(
            text.contains(&format!("| `{l}` |")),
            "{l} is described: {text}"
        );
    }
    // The small-copy rule's verdict over the 4 KiB cells (whichever way it went: a
    // timing is not asserted), one per ordered pair.
    let k = list.len();
    assert!(
        text.contains(&format!(
            "small-copy rule (at 4 KiB and below, locus within 10% or 2 us of the raw calls): holds in all {} cells",
            k * k
        )) || text.contains(&format!(" of {} cells", k * k)),
        "{text}"
    );
    // Two bandwidth matrices and the two comparisons, each with a row per source and a
    // positive number per destination.
    let rows: Vec<&str> = text
        .lines()
        .filter(|line| list.iter().any(|l| line.starts_with(&format!("| {l} |"))))
        .collect();
    assert_eq!(rows.len(), 4 * list.len(), "{text}");
    for row in &rows[..2 * list.len()] {
        for v in row
            .split('|')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .skip(1)
        {
            let x: f64 = v.parse().unwrap_or_else(|_| panic!("{v} in {row}"));
            assert!(x.is_finite() && x > 0.0, "{row}");
        }
    }
    let duplex = text.lines().filter(|line| line.contains(" <-> ")).count();
    assert_eq!(
        duplex,
        2 * list.len() * (list.len() - 1) / 2,
        "a row per pair and size: {text}"
    );
}

#[test]
fn batch_times_small_copies_three_ways_at_every_pair() {
    // One location per technology (every pair of those: a round is 1000 copies).
    let list = one_per_technology();
    let locations = list.join(",");
    let report = run(&[
        "bench",
        "--quick",
        "--locations",
        &locations,
        "--sizes",
        "4KiB",
        "--budget",
        "0.002",
        "--batch",
        "--json",
    ]);
    let cells = report["batch"].as_array().unwrap();
    assert_eq!(
        cells.len(),
        list.len() * list.len(),
        "a cell per ordered pair"
    );
    for c in cells {
        let what = format!("{} -> {}", c["src"], c["dst"]);
        assert_eq!(c["copies"], 1000, "{what}");
        assert_eq!(c["bytes"], 4096, "{what}");
        for (i, way) in ["one by one", "batch", "raw"].iter().enumerate() {
            positive(&c["us_per_copy"][i], &format!("{what}: {way}"));
        }
        for way in ["one_by_one", "batch", "raw"] {
            check_stats(&c[way], &format!("{what}: {way}"));
        }
    }
}

#[test]
fn all_runs_every_mode_in_one_report() {
    let list = one_per_technology();
    if list.len() < 2 {
        println!("SKIPPED: one location only ({list:?})");
        return;
    }
    let locations = list.join(",");
    let report = run(&[
        "bench",
        "--quick",
        "--locations",
        &locations,
        "--sizes",
        "4KiB",
        "--budget",
        "0.002",
        "--all",
        "--stream-elements",
        "4096",
        "--stream-times",
        "2",
        "--region-grid",
        "64",
        "--json",
    ]);
    for part in [
        "cells",
        "bandwidth_test",
        "bidirectional",
        "concurrent",
        "batch",
        "regions",
        "stream",
    ] {
        let n = report[part].as_array().map_or(0, Vec::len);
        assert!(n > 0, "--all ran no {part}");
    }
}
