//! CUDA through `cudarc` (driver API and NVRTC) with run-time loading: the build needs
//! no CUDA toolkit and the binary links no libcuda. cudarc panics when libcuda is
//! missing, so every entry point first probes `is_culib_present()`, and discovery
//! reports "libcuda.so not found" instead.
//!
//! Not run on a GPU where it was written (no NVIDIA GPU there): built, probed, and
//! covered by the conformance suite wherever `LOCUS_REQUIRE` names cuda.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys};

use super::cuda_hip::{self, GpuApi, GpuDevice, GpuError, GpuFacts, GpuMemory};
use crate::core::device::Discovery;
use crate::core::location::Technology;
use crate::core::native::Native;

mod calls;
mod device;
mod kernels;
mod work;

pub use device::CudaDevice;

use calls::err;

/// The CUDA driver, with one primary context and one stream per device.
pub struct CudaApi {
    contexts: Vec<sys::CUcontext>,
    streams: Vec<sys::CUstream>,
    current: Mutex<HashMap<std::thread::ThreadId, u32>>,
    modules: Mutex<Vec<sys::CUmodule>>,
}

// SAFETY: CUDA contexts, streams and modules may be used from any thread once made
// current there (`activate` does that before every call).
unsafe impl Send for CudaApi {}
// SAFETY: as for `Send`; the only mutable state is behind mutexes.
unsafe impl Sync for CudaApi {}

/// A driver error's name and text, for discovery's reasons.
fn text(e: result::DriverError) -> String {
    err("")(e).name
}

pub(crate) fn discover() -> Result<Discovery, String> {
    // SAFETY: only checks whether the library can be opened.
    if !unsafe { sys::is_culib_present() } {
        return Err(
            "libcuda.so not found (the NVIDIA driver library); install the NVIDIA driver on a machine with an NVIDIA GPU"
                .into(),
        );
    }
    result::init().map_err(|e| format!("cuInit failed: {}", text(e)))?;
    let count =
        result::device::get_count().map_err(|e| format!("cuDeviceGetCount failed: {}", text(e)))?;
    if count == 0 {
        return Err("the CUDA driver loaded but reports no device".into());
    }
    let mut contexts = Vec::new();
    let mut streams = Vec::new();
    let mut facts = Vec::new();
    for i in 0..count {
        let dev = result::device::get(i).map_err(|e| format!("cuDeviceGet({i}): {}", text(e)))?;
        // SAFETY: a valid device handle; the primary context is retained for the
        // process's lifetime (the registry is never dropped).
        let ctx = unsafe { result::primary_ctx::retain(dev) }
            .map_err(|e| format!("cuDevicePrimaryCtxRetain: {}", text(e)))?;
        // SAFETY: `ctx` was just retained.
        unsafe { result::ctx::set_current(ctx) }
            .map_err(|e| format!("cuCtxSetCurrent: {}", text(e)))?;
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(|e| format!("cuStreamCreate: {}", text(e)))?;
        let name = result::device::get_name(dev).unwrap_or_else(|_| format!("CUDA device {i}"));
        // SAFETY: valid device handle and attribute.
        let (memory, managed) = unsafe {
            (
                result::device::total_mem(dev).unwrap_or(0) as u64,
                result::device::get_attribute(
                    dev,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
                )
                .unwrap_or(0)
                    != 0,
            )
        };
        contexts.push(ctx);
        streams.push(stream);
        facts.push(GpuFacts {
            name,
            memory_bytes: memory,
            concurrent_managed_access: managed,
            notes: vec![format!(
                "CUDA device {i}, primary context, one non-blocking stream"
            )],
        });
    }
    let api = Arc::new(CudaApi {
        contexts,
        streams,
        current: Mutex::new(HashMap::new()),
        modules: Mutex::new(Vec::new()),
    });
    let devices: Vec<Arc<CudaDevice>> = facts
        .into_iter()
        .enumerate()
        .map(|(i, f)| Arc::new(GpuDevice::new(Arc::clone(&api), i as u32, f)))
        .collect();
    cuda_hip::enable_peers(&devices);
    Ok(Discovery {
        devices: devices
            .into_iter()
            .map(|d| d as Arc<dyn crate::core::device::Device>)
            .collect(),
        skipped: vec![],
        paths: cuda_hip::paths::<CudaApi>(),
    })
}

impl CudaApi {
    fn stream(&self) -> sys::CUstream {
        let ordinal = self
            .current
            .lock()
            .map(|m| m.get(&std::thread::current().id()).copied().unwrap_or(0))
            .unwrap_or(0);
        self.streams[ordinal as usize]
    }
}
