//! Hello world on CUDA: add an array made on the device (`cuda:0`) to one made on the
//! host with `shaders/vec_add.cu`, compiled at run time (NVRTC),
//! then print the result on the host. Where the runtime or the GPU is missing it prints
//! "cuda unavailable: <reason>" and exits with status 1.
//!
//! ```text
//! cargo run --release --example hello_cuda
//! ```

mod common;

fn main() -> Result<(), common::AnyError> {
    common::hello_codelet("cuda:0".parse()?)
}
