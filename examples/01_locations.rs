//! 01: What this machine has, and why the rest is missing.
//!
//! locus finds its backends at run time: the same binary runs on a laptop with nothing
//! installed and on a GPU node. Every technology without a device says why.
//!
//! `cargo run --example 01_locations`

fn main() {
    let registry = locus::registry();
    println!("Locations found on this machine:");
    for device in registry.devices() {
        let info = device.info();
        println!(
            "  {:<10} {} ({}, {}); shares host memory: {}",
            device.location().to_string(),
            info.name,
            info.kind,
            info.platform,
            info.shares_host_memory
        );
    }
    println!("\nTechnologies without a device, and why:");
    for (technology, reason) in registry.missing() {
        println!("  {:<8} {reason}", technology.name());
    }
    println!("\nLocations print and parse as text, for command lines and environment variables:");
    for text in ["host", "opencl:1", "webgpu"] {
        match text.parse::<locus::Location>() {
            Ok(l) => println!("  {text:>9} -> {l:?} -> {l}"),
            Err(e) => println!("  {text:>9} -> error: {e}"),
        }
    }
    if let Err(e) = "gpu:0".parse::<locus::Location>() {
        println!("  a bad name explains itself: {e}");
    }
}
