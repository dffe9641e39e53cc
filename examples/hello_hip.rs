//! Hello world on HIP: add an array made on the device (`hip:0`) to one made on the
//! host with `shaders/vec_add.hip`, compiled at run time (hiprtc),
//! then print the result on the host. Where the runtime or the GPU is missing it prints
//! "hip unavailable: <reason>" and exits with status 1.
//!
//! ```text
//! cargo run --release --example hello_hip
//! ```

mod common;

fn main() -> Result<(), common::AnyError> {
    common::hello_codelet("hip:0".parse()?)
}
