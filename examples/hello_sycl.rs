//! Hello world on SYCL: add an array made on the device (`sycl:0`) to one made on the
//! host, with `shaders/vec_add.cl` compiled through the SYCL runtime's kernel bundles
//! and submitted on the SYCL queue, then print the result on the host.
//!
//! ```text
//! . scripts/sycl-env.sh && cargo run --release --example hello_sycl
//! ```

mod common;

use locus::Location;

fn main() -> Result<(), common::AnyError> {
    let device: Location = "sycl:0".parse()?;
    if !locus::registry().has(device) {
        common::unavailable(device);
    }
    let c = common::hello(device, 1 << 16)?;
    common::print_and_check(&c)
}
