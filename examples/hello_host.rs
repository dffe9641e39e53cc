//! Hello world on host: add an array made on the device (`host`) to one made on the
//! host, with host's own kernel, then print the result on the host.
//!
//! ```text
//! cargo run --release --example hello_host
//! ```

mod common;

use locus::Location;

fn main() -> Result<(), common::AnyError> {
    let device: Location = "host".parse()?;
    if !locus::registry().has(device) {
        common::unavailable(device);
    }
    let c = common::hello(device, 1 << 16)?;
    common::print_and_check(&c)
}
