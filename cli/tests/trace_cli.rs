//! End to end: `locus bench --trace` writes a trace with its cost table, and
//! `locus trace summary` reads it back; a file that is no trace is a clear error.

mod tool;

use tool::locus;

#[test]
fn bench_trace_then_trace_summary() {
    let dir = std::env::temp_dir().join(format!("locus-trace-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bench.json");
    let at = locus::available().last().unwrap().to_string();
    let out = locus()
        .args(["bench", "--quick", "--sizes", "4KiB", "--locations"])
        .arg(format!("host,{at}"))
        .arg("--trace")
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Tracing cost") && stdout.contains(&format!("host -> {at}")),
        "{stdout}"
    );
    assert!(stdout.contains("trace written to"), "{stdout}");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).expect("a JSON array");
    assert!(trace.as_array().unwrap().len() > 10);

    let out = locus()
        .args(["trace", "summary"])
        .arg(&file)
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{summary}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(summary.contains("Copies, by time"), "{summary}");
    assert!(summary.contains(&format!("host -> {at}")), "{summary}");
    assert!(
        summary.contains("Memory, by the most held at once"),
        "{summary}"
    );

    let not_a_trace = dir.join("not.json");
    std::fs::write(&not_a_trace, "{\"hello\": 1}").unwrap();
    let out = locus()
        .args(["trace", "summary"])
        .arg(&not_a_trace)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("Chrome trace event format") && stderr.contains("not.json"),
        "{stderr}"
    );
}
