//! The CUDA device: [`CudaDevice`], the device type CUDA and HIP share (`cuda_hip`) over this
//! backend's calls ([`CudaApi`]). Its `Device` implementation is `cuda_hip/device.rs`.

use super::*;

/// The CUDA device at one location: `locus::device_as::<CudaDevice>(location)`.
pub type CudaDevice = GpuDevice<CudaApi>;
