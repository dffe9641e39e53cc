//! Hello world on opencl: add an array made on the device (`opencl:0`) to one made on the
//! host, with opencl's own kernel, then print the result on the host.
//!
//! ```text
//! cargo run --release --example hello_opencl
//! ```

mod common;

use locus::Location;

fn main() -> Result<(), common::AnyError> {
    let device: Location = "opencl:0".parse()?;
    if !locus::registry().has(device) {
        common::unavailable(device);
    }
    let c = common::hello(device, 1 << 16)?;
    common::print_and_check(&c)
}
