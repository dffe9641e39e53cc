//! `locus bench`: its options and what it prints or writes.

use std::process::ExitCode;

use clap::Args;
use locus_cli::bench;

use crate::{location_list, progress_bar, seconds};

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Three small sizes and a short budget.
    #[arg(long)]
    quick: bool,
    /// The whole run traced into FILE (the Chrome trace format: open it in
    /// https://ui.perfetto.dev, or `locus trace summary FILE`), after a table of what
    /// tracing costs a 4 KiB copy (off, a statistics scope, a trace file).
    #[arg(long, value_name = "FILE.json")]
    trace: Option<String>,
    /// Only these locations, e.g. host,opencl:0,webgpu:0 (default: all found).
    #[arg(long, value_name = "L")]
    locations: Option<String>,
    /// Sizes, e.g. 4KiB,1MiB,64MiB (default: 4KiB,64KiB,1MiB,16MiB,256MiB).
    #[arg(long, value_name = "S")]
    sizes: Option<String>,
    /// Time per measurement of one cell, in seconds (default 0.15, quick 0.01).
    #[arg(long, value_name = "SEC", value_parser = seconds)]
    budget: Option<f64>,
    /// Start no new cell after N seconds (default 110).
    #[arg(long, value_name = "N", value_parser = seconds)]
    max_seconds: Option<f64>,
    /// The whole report as JSON: `--json` to stdout, `--json=FILE` to a file.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    json: Option<String>,
    /// One CSV row per cell: `--csv` to stdout, `--csv=FILE` to a file.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    csv: Option<String>,
    /// The report as a Markdown record (the command, the date, the machine, a table per
    /// size and mode): `--markdown` to stdout, `--markdown=FILE` to a file.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    markdown: Option<String>,
    /// An SVG heat map of the matrix with bandwidth-against-size curves.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<String>,
    /// Between MPI ranks (run as `mpirun -np 2 locus bench --mpi`; needs a build with
    /// the `mpi` feature): every pair of locations, rank 0's x rank 1's, against MPI's
    /// own host-to-host send / receive in the same run (default sizes 4KiB,64KiB,1MiB,64MiB,256MiB).
    #[arg(long)]
    mpi: bool,
    /// Per-cell bandwidth ratios of two --json reports, each change marked when it is
    /// beyond the two cells' own spread (runs nothing else).
    #[arg(long, num_args = 2, value_names = ["OLD.json", "NEW.json"])]
    compare: Option<Vec<String>>,
    /// Also both directions of every pair at once (a -> b while b -> a), each direction
    /// and the sum, against the raw native calls doing the same.
    #[arg(long)]
    bidirectional: bool,
    /// Also copies at once: from each location to all others, from all into each, or
    /// every pair (nvbandwidth's shapes), per copy and in aggregate, at the largest size
    /// up to 64 MiB.
    #[arg(long, value_name = "SHAPE", value_enum)]
    concurrent: Option<bench::together::Shape>,
    /// Also many small copies per pair (1000 of 4 KiB): one by one through locus, as one
    /// copy_batch, and one by one through the raw native calls.
    #[arg(long)]
    batch: bool,
    /// BabelStream's kernels (Copy, Mul, Add, Triad, Dot) at every location through
    /// locus's codelets, in f32 and f64, beside the API's own copy and the host's own loop;
    /// alone it runs nothing else.
    #[arg(long)]
    stream: bool,
    /// Elements per array for --stream (BabelStream's --arraysize; default 2^25, with
    /// --all 2^22).
    #[arg(long, value_name = "N")]
    stream_elements: Option<usize>,
    /// Runs of each kernel for --stream (BabelStream's --numtimes; default 100, with
    /// --all 10).
    #[arg(long, value_name = "N")]
    stream_times: Option<usize>,
    /// The faces a grid program moves at every pair (a row face, a column face and the
    /// middle N/2 x N/2 tile of an N x N grid of f64, the x-face of a box of N/16 per
    /// side), through
    /// copy_region_to, as a loop of one copy per run, with the runtime's own rectangle
    /// call, and as one contiguous copy of the same bytes; alone it runs nothing else.
    #[arg(long)]
    regions: bool,
    /// N for --regions (default 4096).
    #[arg(long, value_name = "N")]
    region_grid: Option<usize>,
    /// Every mode in one run: the matrix and host memory kinds (always), and
    /// --bidirectional, --concurrent all, --batch and --stream.
    #[arg(long)]
    all: bool,
    /// Small copies, where the time per copy is the measure: sizes 1 B to 4 KiB
    /// (unless --sizes says), the median and 99th percentile per copy.
    #[arg(long)]
    latency: bool,
}

/// Writes a `--json` / `--csv` / `--markdown` output: to stdout for `-` (the flag alone), else to the file.
fn emit(sink: &str, text: &str) -> Result<(), String> {
    if sink == "-" {
        print!("{text}");
        Ok(())
    } else {
        std::fs::write(sink, text).map_err(|e| format!("writing {sink}: {e}"))
    }
}

fn load(path: &str) -> Result<bench::Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path} is not a locus bench JSON report: {e}"))
}

pub(crate) fn bench(args: BenchArgs) -> Result<ExitCode, String> {
    if let Some(files) = &args.compare {
        let (old, new) = (load(&files[0])?, load(&files[1])?);
        print!("{}", bench::compare(&old, &new).map_err(|e| e.to_string())?);
        return Ok(ExitCode::SUCCESS);
    }
    if args.mpi {
        return bench_mpi(&args);
    }
    let registry = locus::registry();
    let mut config = if args.quick {
        bench::Config::quick(registry)
    } else {
        bench::Config::default_for(registry)
    };
    if let Some(v) = &args.locations {
        config.locations = location_list(v)?;
    }
    if args.latency {
        config.sizes = vec![1, 8, 64, 512, 4 << 10];
    }
    if let Some(v) = &args.sizes {
        config.sizes = bench::parse_sizes(v).map_err(|e| e.to_string())?;
    }
    config.bidirectional = args.bidirectional || args.all;
    config.concurrent = if args.all {
        Some(bench::together::Shape::All)
    } else {
        args.concurrent
    };
    config.batch = args.batch || args.all;
    if args.stream || args.all {
        let defaults = if args.all {
            bench::stream::StreamConfig {
                elements: 1 << 22,
                times: 10,
            }
        } else {
            bench::stream::StreamConfig::default()
        };
        config.stream = Some(bench::stream::StreamConfig {
            elements: args.stream_elements.unwrap_or(defaults.elements),
            times: args.stream_times.unwrap_or(defaults.times),
        });
        config.matrix = args.all;
    } else if args.stream_elements.is_some() || args.stream_times.is_some() {
        return Err("--stream-elements and --stream-times go with --stream (or --all)".into());
    }
    if args.regions || args.all {
        let n = args.region_grid.unwrap_or(4096);
        if n < 2 || n.checked_mul(n).and_then(|c| c.checked_mul(8)).is_none() {
            return Err(format!(
                "--region-grid {n}: a grid of N x N f64 needs N of at least 2 and N * N * 8 bytes within usize"
            ));
        }
        config.regions = Some(n);
        config.matrix = args.all || (config.matrix && !args.regions);
    } else if args.region_grid.is_some() {
        return Err("--region-grid goes with --regions (or --all)".into());
    }
    if let Some(v) = args.budget {
        config.cell_seconds = v;
    }
    if let Some(v) = args.max_seconds {
        config.max_seconds = Some(v);
    }
    let machine_output = [&args.json, &args.csv, &args.markdown]
        .iter()
        .any(|sink| sink.as_deref() == Some("-"));
    // Said on stderr when stdout carries a machine-readable report.
    let say = |text: &str| {
        if machine_output {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    };
    let trace = match &args.trace {
        Some(path) => {
            let costs = bench::trace_cost::measure(&config.locations).map_err(|e| e.to_string())?;
            say(&bench::trace_cost::table(&costs));
            Some(locus::trace::ChromeTrace::create(path).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    let mut progress = progress_bar();
    let mut report = bench::run(registry, &config, &mut progress).map_err(|e| e.to_string())?;
    if let Some(trace) = trace {
        let path = trace.path();
        trace.finish().map_err(|e| e.to_string())?;
        say(&format!(
            "trace written to {} (open it in https://ui.perfetto.dev, or `locus trace summary {}`)\n",
            path.display(),
            path.display()
        ));
    }
    report.command = std::iter::once("locus".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    if !machine_output {
        print!("{}", bench::table(&report));
    }
    if let Some(sink) = &args.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        emit(sink, &format!("{text}\n"))?;
    }
    if let Some(sink) = &args.csv {
        emit(sink, &bench::csv(&report))?;
    }
    if let Some(sink) = &args.markdown {
        emit(sink, &bench::markdown(&report, &report.command))?;
    }
    if let Some(path) = args.plot {
        std::fs::write(&path, bench::plot(&report)).map_err(|e| format!("writing {path}: {e}"))?;
        if !machine_output {
            println!("plot written to {path}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "mpi")]
fn bench_mpi(args: &BenchArgs) -> Result<ExitCode, String> {
    let mpi = locus::mpi::Mpi::init().map_err(|e| e.to_string())?;
    let world = mpi.world().map_err(|e| e.to_string())?;
    let locations = match &args.locations {
        Some(v) => location_list(v)?,
        None => locus::available(),
    };
    let sizes = bench::parse_sizes(
        args.sizes
            .as_deref()
            .unwrap_or("4KiB,64KiB,1MiB,64MiB,256MiB"),
    )
    .map_err(|e| e.to_string())?;
    // A location one rank lacks stops both, each saying which.
    world
        .agree(
            locations
                .iter()
                .try_for_each(|&l| locus::registry().device(l).map(drop)),
        )
        .map_err(|e| e.to_string())?;
    let report =
        bench::mpi::run(&world, &locations, &sizes, mpi.library()).map_err(|e| e.to_string())?;
    let Some(report) = report else {
        return Ok(ExitCode::SUCCESS);
    };
    if args.json.as_deref() != Some("-") {
        print!("{}", bench::mpi::table(&report));
    }
    if let Some(sink) = &args.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        emit(sink, &format!("{text}\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "mpi"))]
fn bench_mpi(_: &BenchArgs) -> Result<ExitCode, String> {
    Err("this locus was built without the `mpi` feature: build it with \
         `cargo build --release --features mpi`, then run `mpirun -np 2 target/release/locus bench --mpi`"
        .into())
}
