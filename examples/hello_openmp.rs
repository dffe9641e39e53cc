//! Hello world on openmp: add an array made on the device (`openmp:0`) to one made on the
//! host, with openmp's own kernel, then print the result on the host.
//!
//! ```text
//! cargo run --release --example hello_openmp
//! ```

mod common;

use locus::Location;

fn main() -> Result<(), common::AnyError> {
    let device: Location = "openmp:0".parse()?;
    if !locus::registry().has(device) {
        common::unavailable(device);
    }
    let c = common::hello(device, 1 << 16)?;
    common::print_and_check(&c)
}
