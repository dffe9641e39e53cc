//! `locus`: what this machine has, and how data moves between its locations.
//!
//! `locus --help` and `locus <command> --help` print the usage; it is written once, in
//! the argument definitions below (clap's derive API).
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use locus::core::config;
use locus::{access, transfer, Registry};
use locus_cli::bench;

mod bench_command;
use bench_command::{bench, BenchArgs};

/// What this machine has, and how data moves between its locations.
#[derive(Parser)]
#[command(name = "locus", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The locations found, their devices, the reason each missing backend is absent,
    /// the accessibility table and the route of every pair.
    Info(InfoArgs),
    /// The transfer matrix: every ordered pair of locations at several sizes, through
    /// locus, against memcpy and each raw native API.
    Bench(Box<BenchArgs>),
    /// Measures every candidate route of every pair of locations (seconds), keeps the
    /// costs in the cache directory for this machine, and prints the planner's choices.
    Calibrate(CalibrateArgs),
    /// Replays an allocation log written by the logging resource adaptor.
    Replay(ReplayArgs),
    /// Reads a trace file locus wrote (LOCUS_TRACE=run.json, `locus bench --trace`).
    Trace(TraceArgs),
}

#[derive(Args)]
struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Subcommand)]
enum TraceCommand {
    /// The copy routes that took the most time, with their bytes and rates; the memory
    /// each location's sources held; the kernels and the waits.
    Summary(TraceSummaryArgs),
    /// The trace drawn as a timeline (SVG): one row per host thread and device queue,
    /// copies coloured by route, kernel launches and waits.
    Svg(TraceSvgArgs),
}

#[derive(Args)]
struct TraceSvgArgs {
    /// The trace file.
    #[arg(value_name = "TRACE.json")]
    file: String,
    /// Where to write the picture (default: standard output).
    #[arg(long, short, value_name = "FILE.svg")]
    output: Option<String>,
    /// The largest file read, in bytes (4096, 64MiB, 4GiB).
    #[arg(long, default_value = "4GiB", value_name = "BYTES", value_parser = parse_bytes)]
    max_bytes: u64,
}

#[derive(Args)]
struct TraceSummaryArgs {
    /// The trace file (the Chrome trace format; one cut short by a crash is read as far
    /// as it goes).
    #[arg(value_name = "TRACE.json")]
    file: String,
    /// How many copy routes and kernels to list.
    #[arg(long, default_value = "10", value_name = "N")]
    top: usize,
    /// The largest file read, in bytes (4096, 64MiB, 4GiB).
    #[arg(long, default_value = "4GiB", value_name = "BYTES", value_parser = parse_bytes)]
    max_bytes: u64,
}

fn trace(args: TraceArgs) -> Result<ExitCode, String> {
    match args.command {
        TraceCommand::Summary(a) => {
            let text = read_text(&a.file, a.max_bytes, "--max-bytes")?;
            let summary = locus_cli::trace_summary::summarize(&text)
                .map_err(|e| format!("{}: {e}", a.file))?;
            print!("{}", summary.report(a.top));
            Ok(ExitCode::SUCCESS)
        }
        TraceCommand::Svg(a) => {
            let text = read_text(&a.file, a.max_bytes, "--max-bytes")?;
            let picture =
                locus_cli::trace_svg::svg(&text).map_err(|e| format!("{}: {e}", a.file))?;
            match &a.output {
                Some(path) => {
                    std::fs::write(path, picture).map_err(|e| format!("writing {path}: {e}"))?
                }
                None => print!("{picture}"),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[derive(Args)]
struct InfoArgs {
    /// Technologies or locations (as in LOCUS_REQUIRE, which is the default) that must
    /// be present; exits with status 2 if any is missing.
    #[arg(long, value_name = "LIST")]
    require: Option<String>,
}

#[derive(Args)]
struct CalibrateArgs {
    /// Only these locations, e.g. host,opencl:0,webgpu:0 (default: all found).
    #[arg(long, value_name = "L")]
    locations: Option<String>,
    /// One size per size class (default: 4KiB,64KiB,1MiB,128MiB).
    #[arg(long, value_name = "S")]
    sizes: Option<String>,
    /// Seconds per candidate and size (default 0.01).
    #[arg(long, value_name = "SEC", value_parser = seconds)]
    budget: Option<f64>,
    /// Measure and print, but keep nothing (the cache stays as it is).
    #[arg(long)]
    dry_run: bool,
}

/// The resource a replay allocates from.
#[derive(Clone, Copy, ValueEnum)]
enum ReplayResource {
    /// The raw backend allocation.
    Upstream,
    /// A pool over it.
    Pool,
    /// Bins for small sizes, a pool for the rest.
    Binning,
}

#[derive(Args)]
struct ReplayArgs {
    /// The CSV log (see the `Logging` adaptor).
    #[arg(value_name = "LOG.csv")]
    log: String,
    /// Where to allocate.
    #[arg(long, default_value = "host", value_name = "L")]
    location: locus::Location,
    /// What to allocate from.
    #[arg(long, value_enum, default_value = "upstream")]
    resource: ReplayResource,
    /// The largest log read, in bytes (4096, 64MiB, 4GiB): a bigger file (or an endless
    /// one such as /dev/zero) is an error, not a process that reads until memory runs out.
    #[arg(long, default_value = "4GiB", value_name = "BYTES", value_parser = parse_bytes)]
    max_log_bytes: u64,
}

fn parse_bytes(text: &str) -> Result<u64, String> {
    bench::parse_size(text).map_err(|e| e.to_string())
}

/// Reads a text file of at most `max` bytes, stopping at the first NUL byte (so that a
/// binary file, or /dev/zero, is refused at once rather than after `max` bytes).
fn read_text(path: &str, max: u64, flag: &str) -> Result<String, String> {
    use std::io::Read;
    let fail = |e: std::io::Error| format!("reading {path}: {e}");
    let mut file = std::fs::File::open(path).map_err(fail)?;
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match file.read(&mut chunk) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            read => read.map_err(fail)?,
        };
        if n == 0 {
            break;
        }
        if chunk[..n].contains(&0) {
            return Err(format!(
                "reading {path}: it holds NUL bytes, so it is not a text file"
            ));
        }
        bytes.extend_from_slice(&chunk[..n]);
        if bytes.len() as u64 > max {
            return Err(format!(
                "reading {path}: it is longer than {max} bytes ({flag}); pass a larger limit for a file that big"
            ));
        }
    }
    String::from_utf8(bytes).map_err(|e| format!("reading {path}: not UTF-8 text ({e})"))
}

fn main() -> ExitCode {
    default_sigpipe();
    quiet_mesa();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout and succeed; misuse exits with 2.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let (name, outcome) = match cli.command {
        Command::Info(args) => ("info", info(args)),
        Command::Bench(args) => ("bench", bench(*args)),
        Command::Calibrate(args) => ("calibrate", calibrate(args)),
        Command::Replay(args) => ("replay", replay(args)),
        Command::Trace(args) => ("trace", trace(args)),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("locus {name}: {e}");
            ExitCode::from(2)
        }
    }
}

/// Mesa (lavapipe, WebGPU's CPU device) prints "XDG_RUNTIME_DIR is invalid or not set"
/// when the variable is missing, on every run of a fresh shell: give the process a
/// private runtime directory instead (only when none is set, before any thread starts).
fn quiet_mesa() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("locus-runtime-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_ok() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        }
        // SAFETY: called first thing in `main`, before any other thread exists, so no
        // other thread reads the environment concurrently.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    }
}

/// Lets a closed stdout end the process quietly, as it does `cat` or `ls`
/// (`locus info | head`), instead of Rust's ignored SIGPIPE turning the next print into
/// a "failed printing to stdout: Broken pipe" panic.
fn default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; setting a
    // signal's disposition to its default installs no handler code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn info(args: InfoArgs) -> Result<ExitCode, String> {
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
        let kinds: Vec<&str> = device.memory_kinds().iter().map(|k| k.name()).collect();
        let free = match device.available_memory() {
            Ok((free, _)) => gib(free),
            Err(_) => "not reported".into(),
        };
        println!(
            "  {:<10} memory kinds: {}; available now: {free}",
            "",
            kinds.join(", ")
        );
        // RMM's CUDA_ALLOCATION_ALIGNMENT, for every allocation and every resource's blocks.
        println!(
            "  {:<10} alignment: {} bytes for allocations and resource blocks (sub-allocations keep {})",
            "",
            locus::ALIGNMENT,
            device.sub_alignment()
        );
        if let Some(version) = &info.version {
            println!("  {:<10} version: {version}", "");
        }
        for note in &info.notes {
            println!("  {:<10} {note}", "");
        }
    }
    println!("\nPhysical devices (locations of different technologies on the same hardware):");
    for (physical, locations) in registry.physical_devices() {
        let names: Vec<String> = locations.iter().map(|l| l.to_string()).collect();
        println!("  {physical}: {}", names.join(", "));
    }
    let unnamed: Vec<String> = registry
        .devices()
        .filter(|d| d.info().physical.is_none())
        .map(|d| d.location().to_string())
        .collect();
    if !unnamed.is_empty() {
        println!("  not named by their runtime: {}", unnamed.join(", "));
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
    println!("\nMemory both use in place (`Memory::reachable_from`), for each pair:");
    let locations = registry.locations();
    for (i, &a) in locations.iter().enumerate() {
        for &b in &locations[i + 1..] {
            let answer = match locus::reachable_kind(&[a, b]) {
                Ok(reach) => format!("{} memory at {}", reach.kind, reach.location),
                Err(_) => "none (a Buffer moves the data between them)".into(),
            };
            println!("  {:<24} {answer}", format!("{a} + {b}"));
        }
    }
    println!("\nRoutes (data at the left, consumed at the right):");
    print!("{}", indent(&transfer::route_table(registry)));
    println!();
    print_planner(registry, &registry.locations());
    println!("\nCopy paths registered by backends (candidates besides the generic ones: same device, either side's runtime through the other's host view, memcpy between mappings, staged):");
    let mut any = false;
    for (src, dst, name) in registry.matrix().registered() {
        println!("  {src} -> {dst}: {name}");
        any = true;
    }
    if !any {
        println!("  none");
    }
    let set = config::set_variables();
    println!("\nEnvironment (LOCUS_* variables set; `docs/environment.md` lists them all):");
    if set.is_empty() {
        println!("  none");
    }
    for (variable, value) in set {
        println!("  {}={value:?}: {}", variable.name, variable.meaning);
    }
    if let Some(list) = args.require.or_else(|| config::text("LOCUS_REQUIRE")) {
        if let Err(e) = registry.require(&list) {
            return Err(e.to_string());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

fn progress_bar() -> impl FnMut(usize, usize, &str) {
    use std::io::IsTerminal;
    let show = std::io::stderr().is_terminal();
    move |done: usize, total: usize, what: &str| {
        if show {
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
    }
}

/// The planner's status and its chosen route per pair and size class among `locations`.
fn print_planner(registry: &locus::Registry, locations: &[locus::Location]) {
    println!("Planner: {}", registry.matrix().status());
    println!("Chosen copy route per pair and size class (where the choice changes):");
    print!("{}", bench::calibrate::choices(registry, locations));
}

/// A time option: a finite number of seconds above zero (`nan`, `inf`, `0` and
/// negative numbers are refused, naming the value).
fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "`{text}` is not a number of seconds above zero (e.g. 0.15)"
        )),
    }
}

/// `--locations`: one location or more (an empty list is refused, not run as an empty
/// matrix).
fn location_list(text: &str) -> Result<Vec<locus::Location>, String> {
    let list = locus::parse_locations(text).map_err(|e| e.to_string())?;
    if list.is_empty() {
        return Err(format!(
            "--locations `{text}` names no location; give one or more, e.g. host,opencl:0 \
             (leave the option out for every location found)"
        ));
    }
    Ok(list)
}

fn calibrate(args: CalibrateArgs) -> Result<ExitCode, String> {
    let registry = locus::registry();
    let mut config = bench::calibrate::Config::default_for(registry);
    if let Some(v) = &args.locations {
        config.locations = location_list(v)?;
    }
    if let Some(v) = &args.sizes {
        config.sizes = bench::parse_sizes(v).map_err(|e| e.to_string())?;
    }
    if let Some(v) = args.budget {
        config.budget = v;
    }
    let calibration =
        bench::calibrate::run(registry, &config, &mut progress_bar()).map_err(|e| e.to_string())?;
    let seconds = calibration.seconds;
    let status = if args.dry_run {
        format!("calibrated in this run only (--dry-run), {seconds:.1} s")
    } else {
        let path = calibration.save().map_err(|e| e.to_string())?;
        format!(
            "calibrated: {} (measured in {seconds:.1} s)",
            path.display()
        )
    };
    println!(
        "Measured {} pairs x {} sizes in {seconds:.1} s",
        calibration.pairs.len(),
        calibration.sizes.len()
    );
    registry.matrix().install(Some(calibration), status);
    print_planner(registry, &config.locations);
    Ok(ExitCode::SUCCESS)
}

fn replay(args: ReplayArgs) -> Result<ExitCode, String> {
    use locus::resource::{self, Binning, MemoryResource, Pool, Statistics};
    use std::sync::Arc;
    let (file, location) = (args.log, args.location);
    let log = read_text(&file, args.max_log_bytes, "--max-log-bytes")?;
    let upstream = resource::upstream(location).map_err(|e| e.to_string())?;
    let counted = Arc::new(Statistics::new(Arc::clone(&upstream)));
    let footprint: Arc<dyn MemoryResource> = counted.clone();
    let target: Arc<dyn MemoryResource> = match args.resource {
        ReplayResource::Upstream => footprint,
        ReplayResource::Pool => Arc::new(Pool::new(footprint, 16 << 20, usize::MAX / 2)),
        ReplayResource::Binning => Arc::new(
            Binning::new(
                Arc::clone(&footprint),
                Arc::new(Pool::new(footprint, 16 << 20, usize::MAX / 2)),
                256,
                1 << 20,
                64,
            )
            .map_err(|e| e.to_string())?,
        ),
    };
    let report = locus_cli::replay(&log, target.as_ref()).map_err(|e| e.to_string())?;
    println!(
        "replayed {} operations ({} threads, {} streams) from {file} on {} ({}) in {:.3} ms; peak live {} bytes, peak footprint {} bytes ({:.2}x)",
        report.operations,
        report.threads,
        report.streams,
        location,
        target.describe(),
        report.seconds * 1e3,
        report.peak_live_bytes,
        counted.totals().peak_bytes,
        counted.totals().peak_bytes as f64 / report.peak_live_bytes.max(1) as f64
    );
    Ok(ExitCode::SUCCESS)
}
