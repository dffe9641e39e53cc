//! The same pipeline on a location chosen at run time: from the first argument, else
//! `LOCUS_LOCATION`, else the last location this machine has.
//!
//! ```text
//! cargo run --release --example choose_backend -- opencl:0
//! LOCUS_LOCATION=webgpu:0 cargo run --release --example choose_backend
//! ```

mod common;

use locus::Location;

fn main() -> Result<(), common::AnyError> {
    let chosen = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("LOCUS_LOCATION").ok());
    let device: Location = match chosen {
        Some(text) => text.parse()?,
        None => *locus::available().last().unwrap_or(&Location::Host),
    };
    println!(
        "available here: {:?}",
        locus::available()
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
    );
    if !locus::registry().has(device) {
        common::unavailable(device);
    }
    println!("running at {device}");
    let c = common::hello(device, 100_000)?;
    common::print_and_check(&c)
}
