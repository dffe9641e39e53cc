//! 02: Buffers: typed arrays made at a location, copied and moved anywhere.
//!
//! `cargo run --example 02_buffers`

use locus::{Buffer, Location};

fn main() -> Result<(), locus::Error> {
    // The last location found: a device if there is one, else the host.
    let device = *locus::available().last().unwrap_or(&Location::Host);
    println!("using {device}");

    // Four ways to make a buffer.
    let zeros = Buffer::<f32>::zeroed(device, 4)?;
    let sevens = Buffer::filled(device, 4, 7u32)?;
    let from_slice = Buffer::from_slice(device, &[1.0f32, 2.0, 3.0, 4.0])?;
    let adopted = Buffer::from_vec(vec![10.0f32, 20.0, 30.0, 40.0]); // host, zero-copy
    println!("zeroed:     {:?} at {}", zeros.to_vec()?, zeros.location());
    println!(
        "filled:     {:?} at {}",
        sevens.to_vec()?,
        sevens.location()
    );
    println!(
        "from_slice: {:?} at {}",
        from_slice.to_vec()?,
        from_slice.location()
    );
    println!(
        "from_vec:   {:?} at {} (the Vec's own memory)",
        adopted.to_vec()?,
        adopted.location()
    );

    // Copy a sub-range between two locations: bounds-checked, on the planner's route.
    let mut target = Buffer::<f32>::zeroed(device, 6)?;
    let route = target.copy_from(1, &adopted, 1..4)?;
    println!("copy_from:  {:?} via {route}", target.to_vec()?);
    match target.copy_from(5, &adopted, 0..4) {
        Err(e) => println!("out of range is an error, nothing written: {e}"),
        Ok(_) => unreachable!("6 elements cannot take 4 at offset 5"),
    }

    // Resize keeps the prefix; move_to relocates the data and frees the old copy.
    target.resize(8)?;
    println!("resized:    {:?}", target.to_vec()?);
    target.move_to(Location::Host)?;
    println!("moved to:   {} {:?}", target.location(), target.replicas());
    Ok(())
}
