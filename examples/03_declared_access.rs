//! 03: Declared access: in place where the consumer can reach the data, otherwise a
//! cached replica. The transfer counters show what moved.
//!
//! `cargo run --example 03_declared_access`

use locus::{Buffer, Location};

fn main() -> Result<(), locus::Error> {
    for device in locus::available().into_iter().filter(|l| !l.is_host()) {
        println!("== a buffer made at {device}, read on the host");
        let mut b = Buffer::from_slice(device, &[1.0f32, 2.0, 3.0])?;
        {
            let view = b.access(Location::Host)?;
            println!(
                "  first read:  {} ({}) -> {:?}",
                if view.is_in_place() {
                    "in place"
                } else {
                    "replica made"
                },
                view.route().reason,
                view.as_slice()?
            );
        }
        println!("  counters: {}", b.stats());
        drop(b.access(Location::Host)?);
        println!("  second read, served from the cache: {}", b.stats());
        // A write on the host makes the host copy the only valid one...
        b.access_mut(Location::Host)?.as_mut_slice()?[0] = 100.0;
        println!(
            "  after a host write, replicas (location, valid): {:?}",
            b.replicas()
        );
        // ...and the device sees it the next time it reads.
        let seen = b.access(device)?;
        println!(
            "  read at {device}: {} ({})",
            if seen.is_in_place() {
                "in place"
            } else {
                "copied"
            },
            seen.route().reason
        );
        drop(seen);
        println!("  counters: {}\n", b.stats());
    }
    Ok(())
}
