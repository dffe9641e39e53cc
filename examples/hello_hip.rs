//! Hello world on HIP: add an array made on the device (`hip:0`) to one made on the
//! host with `shaders/vec_add.hip`, compiled at run time (hiprtc),
//! then print the result on the host. Where the runtime or the GPU is missing it prints
//! "hip unavailable: <reason>" and exits with status 1.
//!
//! ```text
//! cargo run --release --example hello_hip
//! ```

mod common;

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::{Buffer, Location};

fn main() -> Result<(), common::AnyError> {
    let device: Location = "hip:0".parse()?;
    if !locus::registry().has(device) {
        common::unavailable(device);
    }
    let n = 1 << 16;
    let a = Buffer::filled(device, n, 1.0f32)?;
    let b = Buffer::from_vec((0..n).map(|i| i as f32).collect());
    let mut c = Buffer::<f32>::zeroed(device, n)?;
    let kernel = kernels::vec_add();
    let codelet = Codelet::new(&kernel, &[device])?;
    codelet.call(
        &mut [
            Arg::buf(&a),
            Arg::buf(&b),
            Arg::buf_mut(&mut c),
            Arg::u32(n as u32),
        ],
        Launch::d1(n),
    )?;
    common::print_and_check(&c)
}
