//! HIP kernels: compiled at run time by hiprtc (`calls.rs`, `GpuApi::compile`), cached
//! and launched on the device's stream by the code CUDA and HIP share
//! (`cuda_hip/kernels.rs`).
