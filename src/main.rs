//! `locus`: what this machine has, and how data moves between its locations.
//!
//! ```text
//! locus info [--require host,opencl,...]
//! locus bench [--quick] [--locations L] [--sizes S] [--max-seconds N] [--json[=FILE]] [--csv[=FILE]] [--plot FILE.svg]
//! locus bench --compare OLD.json NEW.json
//! ```

use std::process::ExitCode;

use locus::{access, bench, transfer, Registry};

const USAGE: &str = "usage: locus info [--require LIST]
       locus bench [OPTIONS]
       locus bench --compare OLD.json NEW.json
       locus replay LOG.csv [--location L] [--resource upstream|pool|binning]

  info             the locations found, their devices, the reason each missing backend
                   is absent, the accessibility table and the route of every pair
    --require L    technologies or locations (as in LOCUS_REQUIRE) that must be
                   present; exits with status 2 if any is missing

  bench            the transfer matrix: every ordered pair of locations at several
                   sizes, through locus, against memcpy and each raw native API
    --quick        three small sizes and a short budget (seconds)
    --locations L  only these, e.g. host,opencl:0,webgpu:0 (default: all found)
    --sizes S      e.g. 4KiB,1MiB,64MiB (default: 4KiB,64KiB,1MiB,16MiB,256MiB)
    --budget SEC   time per measurement of one cell (default 0.15, quick 0.01)
    --max-seconds N  start no new cell after N seconds (default 110)
    --json[=FILE]  the whole report as JSON (to stdout, or FILE)
    --csv[=FILE]   one CSV row per cell (to stdout, or FILE)
    --plot FILE    an SVG heat map of the matrix with bandwidth-against-size curves
    --compare OLD NEW  per-cell bandwidth ratios of two --json reports

  replay           replays an allocation log written by the logging resource adaptor
    --location L   where to allocate (default host)
    --resource R   upstream (the raw backend allocation, default), pool or binning";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("info") => info(&args[1..]),
        Some("bench") => match bench(&args[1..]) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("locus bench: {e}");
                ExitCode::from(2)
            }
        },
        Some("replay") => match replay(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("locus replay: {e}");
                ExitCode::from(2)
            }
        },
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("locus: unknown command `{other}`\n\n{USAGE}");
            ExitCode::from(2)
        }
        None => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn info(args: &[String]) -> ExitCode {
    let mut require = std::env::var("LOCUS_REQUIRE").ok();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--require" => match it.next() {
                Some(list) => require = Some(list.clone()),
                None => {
                    eprintln!("locus info: --require needs a list, e.g. --require host,opencl");
                    return ExitCode::from(2);
                }
            },
            other => {
                eprintln!("locus info: unknown option `{other}`\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let registry: &Registry = locus::registry();
    println!("Locations found:");
    for device in registry.devices() {
        let info = device.info();
        println!(
            "  {:<10} {} [{}; {}]",
            device.location().to_string(),
            info.name,
            info.kind,
            info.platform
        );
        println!(
            "  {:<10} memory {}, max allocation {}, shares host memory: {}",
            "",
            info.memory_bytes.map_or("unknown".into(), gib),
            gib(info.max_allocation),
            if info.shares_host_memory { "yes" } else { "no" }
        );
        for note in &info.notes {
            println!("  {:<10} {note}", "");
        }
    }
    println!("\nMissing:");
    if registry.missing().is_empty() {
        println!("  nothing");
    }
    for (technology, reason) in registry.missing() {
        println!("  {:<10} {reason}", technology.name());
    }
    for (technology, skipped) in registry.skipped() {
        for why in skipped {
            println!("  {:<10} skipped device: {why}", technology.name());
        }
    }
    println!("\nAccessibility (can code at the column use memory of the row in place?):");
    print!("{}", indent(&access::accessibility_table(registry)));
    println!("\nRoutes (data at the left, consumed at the right):");
    print!("{}", indent(&transfer::route_table(registry)));
    println!("\nCopy paths registered by backends (tried before the generic same-device, host-side and staged paths):");
    let mut any = false;
    for (src, dst, name) in registry.matrix().registered() {
        println!("  {src} -> {dst}: {name}");
        any = true;
    }
    if !any {
        println!("  none");
    }
    if let Some(list) = require {
        if let Err(e) = registry.require(&list) {
            eprintln!("\nlocus info: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// Where a `--json` / `--csv` output goes.
enum Sink {
    Stdout,
    File(String),
}

fn sink(arg: &str, flag: &str) -> Option<Sink> {
    if arg == flag {
        Some(Sink::Stdout)
    } else {
        arg.strip_prefix(&format!("{flag}="))
            .map(|f| Sink::File(f.to_string()))
    }
}

fn emit(sink: &Sink, text: &str) -> Result<(), String> {
    match sink {
        Sink::Stdout => {
            print!("{text}");
            Ok(())
        }
        Sink::File(path) => std::fs::write(path, text).map_err(|e| format!("writing {path}: {e}")),
    }
}

fn load(path: &str) -> Result<bench::Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path} is not a locus bench JSON report: {e}"))
}

fn bench(args: &[String]) -> Result<ExitCode, String> {
    use std::io::IsTerminal;
    let registry = locus::registry();
    let mut config = bench::Config::default_for(registry);
    let (mut json, mut csv, mut plot) = (None, None, None);
    let mut it = args.iter();
    let value = |it: &mut std::slice::Iter<String>, flag: &str| {
        it.next()
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value\n\n{USAGE}"))
    };
    let mut quick = false;
    let mut overrides: Vec<(String, String)> = Vec::new();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--compare" => {
                let old = load(&value(&mut it, "--compare")?)?;
                let new = load(&value(&mut it, "--compare")?)?;
                print!("{}", bench::compare(&old, &new).map_err(|e| e.to_string())?);
                return Ok(ExitCode::SUCCESS);
            }
            "--quick" => quick = true,
            "--locations" | "--sizes" | "--budget" | "--max-seconds" | "--plot" => {
                overrides.push((arg.clone(), value(&mut it, arg)?));
            }
            other => {
                if let Some(s) = sink(other, "--json") {
                    json = Some(s);
                } else if let Some(s) = sink(other, "--csv") {
                    csv = Some(s);
                } else {
                    return Err(format!("unknown option `{other}`\n\n{USAGE}"));
                }
            }
        }
    }
    if quick {
        config = bench::Config::quick(registry);
    }
    for (flag, v) in overrides {
        match flag.as_str() {
            "--locations" => {
                config.locations = locus::parse_locations(&v).map_err(|e| e.to_string())?;
            }
            "--sizes" => config.sizes = bench::parse_sizes(&v).map_err(|e| e.to_string())?,
            "--budget" => {
                config.cell_seconds = v
                    .parse()
                    .map_err(|_| format!("--budget takes seconds, e.g. 0.1; got `{v}`"))?;
            }
            "--max-seconds" => {
                config.max_seconds = Some(
                    v.parse()
                        .map_err(|_| format!("--max-seconds takes seconds, e.g. 60; got `{v}`"))?,
                );
            }
            _ => plot = Some(v),
        }
    }
    let show_progress = std::io::stderr().is_terminal();
    let mut progress = |done: usize, total: usize, what: &str| {
        if show_progress {
            let width = 30;
            let filled = (done * width).checked_div(total).unwrap_or(width);
            eprint!(
                "\r[{}{}] {done}/{total} {what:<40}",
                "#".repeat(filled),
                " ".repeat(width - filled)
            );
            if done == total {
                eprintln!();
            }
        }
    };
    let report = bench::run(registry, &config, &mut progress).map_err(|e| e.to_string())?;
    let machine_output = matches!(json, Some(Sink::Stdout)) || matches!(csv, Some(Sink::Stdout));
    if !machine_output {
        print!("{}", bench::table(&report));
    }
    if let Some(sink) = &json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        emit(sink, &format!("{text}\n"))?;
    }
    if let Some(sink) = &csv {
        emit(sink, &bench::csv(&report))?;
    }
    if let Some(path) = plot {
        std::fs::write(&path, bench::plot(&report)).map_err(|e| format!("writing {path}: {e}"))?;
        if !machine_output {
            println!("plot written to {path}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn replay(args: &[String]) -> Result<(), String> {
    use locus::resource::{self, Binning, MemoryResource, Pool, Statistics};
    use std::sync::Arc;
    let mut file = None;
    let mut location = locus::Location::Host;
    let mut kind = "upstream".to_string();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--location" => {
                location = it
                    .next()
                    .ok_or("--location needs a location, e.g. opencl:0")?
                    .parse()
                    .map_err(|e: locus::Error| e.to_string())?;
            }
            "--resource" => {
                kind = it
                    .next()
                    .ok_or("--resource needs upstream, pool or binning")?
                    .clone()
            }
            other if file.is_none() && !other.starts_with("--") => file = Some(other.to_string()),
            other => return Err(format!("unexpected `{other}`\n\n{USAGE}")),
        }
    }
    let file = file.ok_or(format!("replay needs the log file\n\n{USAGE}"))?;
    let log = std::fs::read_to_string(&file).map_err(|e| format!("reading {file}: {e}"))?;
    let upstream = resource::upstream(location).map_err(|e| e.to_string())?;
    let counted = Arc::new(Statistics::new(Arc::clone(&upstream)));
    let footprint: Arc<dyn MemoryResource> = counted.clone();
    let target: Arc<dyn MemoryResource> = match kind.as_str() {
        "upstream" => footprint,
        "pool" => Arc::new(Pool::new(footprint, 16 << 20, usize::MAX / 2)),
        "binning" => Arc::new(
            Binning::new(
                Arc::clone(&footprint),
                Arc::new(Pool::new(footprint, 16 << 20, usize::MAX / 2)),
                256,
                1 << 20,
                64,
            )
            .map_err(|e| e.to_string())?,
        ),
        other => {
            return Err(format!(
                "unknown resource `{other}`: use upstream, pool or binning"
            ))
        }
    };
    let report = resource::replay(&log, target.as_ref()).map_err(|e| e.to_string())?;
    println!(
        "replayed {} operations from {file} on {} ({}) in {:.3} ms; peak live {} bytes, peak footprint {} bytes ({:.2}x)",
        report.operations,
        location,
        target.describe(),
        report.seconds * 1e3,
        report.peak_live_bytes,
        counted.totals().peak_bytes,
        counted.totals().peak_bytes as f64 / report.peak_live_bytes.max(1) as f64
    );
    Ok(())
}
