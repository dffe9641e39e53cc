//! The HIP device: [`HipDevice`], the device type CUDA and HIP share (`cuda_hip`) over this
//! backend's calls ([`HipApi`]). Its `Device` implementation is `cuda_hip/device.rs`.

use super::*;

/// The HIP device at one location: `locus::device_as::<HipDevice>(location)`.
pub type HipDevice = GpuDevice<HipApi>;
