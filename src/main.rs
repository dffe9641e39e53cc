//! `locus`: what this machine has, and how data moves between its locations.
//!
//! ```text
//! locus info [--require host,opencl,...]
//! ```

use std::process::ExitCode;

use locus::{access, transfer, Registry};

const USAGE: &str = "usage: locus info [--require LIST]

  info       the locations found, their devices, the reason each missing backend is
             absent, the accessibility table and the route of every ordered pair
  --require  comma-separated technologies or locations (as in LOCUS_REQUIRE) that must
             be present; exits with status 2 if any is missing";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("info") => info(&args[1..]),
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
