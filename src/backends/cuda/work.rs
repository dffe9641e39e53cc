//! CUDA's queued work: an event recorded on the device's stream after the work
//! (cuMemcpyDtoDAsync / cuEventRecord), as the `StreamEvent` CUDA and HIP share (`cuda_hip/work.rs`). The
//! calls it makes are in `calls.rs`.
