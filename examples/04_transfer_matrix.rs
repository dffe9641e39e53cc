//! 04: The transfer matrix: a route for every ordered pair, with its reason.
//!
//! `cargo run --example 04_transfer_matrix`

use locus::{transfer, CopyOptions, Location, Memory, RouteKind, Via};

fn main() -> Result<(), locus::Error> {
    let registry = locus::registry();
    let locations = registry.locations();
    println!("How data at the left reaches code at the right:");
    for &src in &locations {
        for &dst in &locations {
            println!("  {}", transfer::access_route(registry, src, dst)?);
        }
    }
    // Copies follow the planner; a route can also be forced, e.g. to compare.
    let a = Memory::new(*locations.last().unwrap_or(&Location::Host), 1 << 20)?;
    let b = Memory::new(Location::Host, 1 << 20)?;
    a.fill(0..a.len(), &[7])?;
    println!("\ncopy_to:           {}", a.copy_to(0, &b, 0, 1 << 20)?);
    let staged = CopyOptions::via(Via::Kind(RouteKind::Staged));
    println!(
        "copy_to_with staged: {}",
        a.copy_to_with(0, &b, 0, 1 << 20, staged)?
    );
    println!("\nCopy paths the backends registered:");
    for (s, d, name) in registry.matrix().registered() {
        println!("  {s} -> {d}: {name}");
    }
    println!(
        "process-wide counters: {}",
        transfer::global_stats().totals()
    );
    Ok(())
}
