//! CUDA through `cudarc` (driver API and NVRTC) with run-time loading: the build needs
//! no CUDA toolkit and the binary links no libcuda. cudarc panics when libcuda is
//! missing, so every entry point first probes `is_culib_present()`, and discovery
//! reports "libcuda.so not found" instead.
//!
//! The conformance suite and the rest run on CUDA wherever `LOCUS_REQUIRE` names cuda
//! (`scripts/run-offline.sh` on a node without a toolchain; the backends table in docs/guide/backends.md
//! says where they ran); on machines without a GPU the shared logic runs against the
//! strict simulated driver (`cuda_hip/simulated.rs`).

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use cudarc::driver::{result as cudarc_result, sys};

use super::cuda_hip::{self, GpuApi, GpuDevice, GpuError, GpuFacts, GpuMemory};
use crate::core::device::{Device, Direction};
use crate::core::discovery::{Discovery, Unavailable};
use crate::core::error::{Error, Result};
use crate::core::location::Technology;
use crate::core::memory::Memory;
use crate::core::native::Native;
use entry_points::{CudaDriver, LoadedDriver};

mod device;
pub mod entry_points;
mod result;

/// The old name of [`entry_points`], for one release.
#[deprecated(
    note = "renamed `entry_points`: cudarc's layer names (sys, result, entry points) in every vendor folder"
)]
pub mod driver {
    pub use super::entry_points::*;
}
#[cfg(test)]
mod driver_tests;
mod errors;
mod kernels;
#[cfg(test)]
mod simulated;

pub use device::{CudaDevice, RawCopy};

use errors::err;

/// The CUDA driver, with one primary context and one stream per device.
pub struct CudaApi {
    /// The driver's entry points (libcuda through cudarc; a simulated one in tests).
    driver: Box<dyn CudaDriver>,
    contexts: Vec<sys::CUcontext>,
    streams: Vec<sys::CUstream>,
    /// Each device's compute capability (major, minor): kernels are compiled for it.
    archs: Vec<(i32, i32)>,
    modules: Mutex<Vec<sys::CUmodule>>,
    /// The driver exports `cuMemcpyBatchAsync` (CUDA 12.8 and later).
    copy_batch: bool,
}

// SAFETY: CUDA contexts, streams and modules may be used from any thread once made
// current there (`activate` does that before every call).
unsafe impl Send for CudaApi {}
// SAFETY: as for `Send`; the only mutable state is behind mutexes.
unsafe impl Sync for CudaApi {}

/// A driver error's name and text, for discovery's reasons.
fn text(e: cudarc_result::DriverError) -> String {
    err("")(e).name
}

pub(crate) fn discover() -> Result<Discovery, Unavailable> {
    // SAFETY: only checks whether the library can be opened.
    if !unsafe { sys::is_culib_present() } {
        return Err(
            "libcuda.so not found (the NVIDIA driver library); install the NVIDIA driver on a machine with an NVIDIA GPU"
                .into(),
        );
    }
    cudarc_result::init().map_err(|e| format!("cuInit failed: {}", text(e)))?;
    let count = cudarc_result::device::get_count()
        .map_err(|e| format!("cuDeviceGetCount failed: {}", text(e)))?;
    if count == 0 {
        return Err("the CUDA driver loaded but reports no device".into());
    }
    let (opened, skipped) = cuda_hip::open_each("CUDA", count, open_device)?;
    // Indexed by the driver's ordinal; a skipped device has null handles, which
    // `activate` refuses.
    let slots = count.max(0) as usize;
    let mut contexts = vec![std::ptr::null_mut(); slots];
    let mut streams = vec![std::ptr::null_mut(); slots];
    let mut archs = vec![(0, 0); slots];
    let mut facts = Vec::new();
    for (i, (ctx, stream, arch, f)) in opened {
        contexts[i as usize] = ctx;
        streams[i as usize] = stream;
        archs[i as usize] = arch;
        facts.push((i, f));
    }
    let api = Arc::new(CudaApi {
        driver: Box::new(LoadedDriver),
        contexts,
        streams,
        archs,
        modules: Mutex::new(Vec::new()),
        copy_batch: driver_version_number().is_some_and(|v| v >= 12080),
    });
    Ok(cuda_hip::discovery(api, facts, skipped))
}

/// Device `i`'s primary context (retained), its non-blocking stream, its compute
/// capability and its facts. On a failure part-way the context is released again.
fn open_device(
    i: i32,
) -> Result<(sys::CUcontext, sys::CUstream, (i32, i32), GpuFacts), Unavailable> {
    let dev = cudarc_result::device::get(i).map_err(|e| format!("cuDeviceGet: {}", text(e)))?;
    // SAFETY: a valid device handle; the primary context is retained for the process's
    // lifetime (the registry is never dropped) unless this function fails.
    let ctx = unsafe { cudarc_result::primary_ctx::retain(dev) }
        .map_err(|e| format!("cuDevicePrimaryCtxRetain: {}", text(e)))?;
    let release = |why: String| {
        // SAFETY: retained above, released once, on this failure path only.
        let _ = unsafe { cudarc_result::primary_ctx::release(dev) };
        why
    };
    // SAFETY: `ctx` was just retained.
    unsafe { cudarc_result::ctx::set_current(ctx) }
        .map_err(|e| release(format!("cuCtxSetCurrent: {}", text(e))))?;
    let stream = cudarc_result::stream::create(cudarc_result::stream::StreamKind::NonBlocking)
        .map_err(|e| release(format!("cuStreamCreate: {}", text(e))))?;
    let name = cudarc_result::device::get_name(dev).unwrap_or_else(|_| format!("CUDA device {i}"));
    let attribute = |a| {
        // SAFETY: a valid device handle and attribute.
        unsafe { cudarc_result::device::get_attribute(dev, a) }.unwrap_or(0)
    };
    let arch = (
        attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
        attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
    );
    // SAFETY: a valid device handle.
    let memory = unsafe { cudarc_result::device::total_mem(dev) }.unwrap_or(0) as u64;
    let managed =
        attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 0;
    // A driver older than 11.2 does not know the attribute (0: no pools), and only a
    // driver that has pools exports cuMemAllocAsync, which cudarc loads on first use.
    let pools = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
    let pageable =
        attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) != 0;
    let facts = GpuFacts {
        name,
        memory_bytes: memory,
        concurrent_managed_access: managed,
        stream_ordered_pools: pools,
        pageable_memory_access: pageable,
        version: driver_version(),
        notes: vec![format!(
            "CUDA device {i}, compute capability {}.{}, primary context, one non-blocking stream; kernels compiled by NVRTC to sm_{}{} cubins",
            arch.0, arch.1, arch.0, arch.1
        )],
    };
    Ok((ctx, stream, arch, facts))
}

/// The CUDA driver's version as a number (12080 for 12.8), if it says.
fn driver_version_number() -> Option<i32> {
    let mut version = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .ok()
        .map(|()| version)
}

/// The CUDA driver's version, e.g. "CUDA driver 12.8" (`cuDriverGetVersion`).
fn driver_version() -> String {
    let mut version = 0;
    // SAFETY: the driver is loaded and initialised; it writes one int.
    match unsafe { sys::cuDriverGetVersion(&mut version) }.result() {
        Ok(()) => format!("CUDA driver {}.{}", version / 1000, version % 1000 / 10),
        Err(e) => format!("CUDA driver version unknown ({})", text(e)),
    }
}

thread_local! {
    /// The device `activate` made current on this thread (one `CudaApi` per process: the
    /// driver's). A thread-local, so that no lock is taken on every call and nothing is
    /// kept for threads that ended.
    static CURRENT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl CudaApi {
    /// A CudaApi over a simulated driver with one device (made-up context and stream
    /// handles): the call layer tested without an NVIDIA GPU.
    #[cfg(test)]
    fn simulated(driver: Box<dyn CudaDriver>) -> CudaApi {
        CudaApi {
            driver,
            contexts: vec![0x7000 as sys::CUcontext],
            streams: vec![0x7100 as sys::CUstream],
            archs: vec![(9, 0)],
            modules: Mutex::new(Vec::new()),
            copy_batch: false,
        }
    }

    /// The device `activate` made current on this thread.
    fn current_ordinal(&self) -> usize {
        CURRENT.with(std::cell::Cell::get) as usize
    }

    fn stream(&self) -> sys::CUstream {
        self.streams[self.current_ordinal()]
    }
}
