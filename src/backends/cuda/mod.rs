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

use super::cuda_hip::{
    self, BatchFailure, GpuApi, GpuDevice, GpuError, GpuFacts, GpuMemory, GpuRect,
};
use crate::core::device::{Device, Direction, PhysicalDevice};
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
mod call_layer_tests;
#[cfg(test)]
mod discovery_tests;
#[cfg(test)]
mod driver_tests;
mod errors;
mod kernels;
pub mod nvtx;
mod pointers;
mod pool;
#[cfg(test)]
mod real_compiler_tests;
mod rect;
#[cfg(test)]
mod rect_tests;
#[cfg(test)]
mod simulated;

pub use device::{CudaDevice, RawCopy};

/// The CUDA driver, with one primary context and one stream per device.
pub struct CudaApi {
    /// The driver's entry points (libcuda through cudarc; a simulated one in tests).
    driver: Box<dyn CudaDriver>,
    contexts: Vec<sys::CUcontext>,
    streams: Vec<sys::CUstream>,
    /// Each device's compute capability (major, minor): kernels are compiled for it.
    archs: Vec<(i32, i32)>,
    modules: Mutex<Vec<sys::CUmodule>>,
    /// Per device: locus's own stream-ordered pool.
    pools: cuda_hip::OwnPools,
    /// The driver exports `cuMemcpyBatchAsync` (CUDA 12.8 and later).
    copy_batch: bool,
    /// Per device: whether it reads registered host memory at its host address
    /// (`CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`), as a batch
    /// names it; where not, such memory stays out of batches.
    host_pointer_for_registered: Vec<bool>,
}

// SAFETY: CUDA contexts, streams and modules may be used from any thread once made
// current there (`activate` does that before every call).
unsafe impl Send for CudaApi {}
// SAFETY: as for `Send`; the only mutable state is behind mutexes.
unsafe impl Sync for CudaApi {}

pub(crate) fn discover() -> Result<Discovery, Unavailable> {
    // SAFETY: only checks whether the library can be opened.
    if !unsafe { sys::is_culib_present() } {
        return Err(
            "libcuda.so not found (the NVIDIA driver library); install the NVIDIA driver on a machine with an NVIDIA GPU"
                .into(),
        );
    }
    discover_on(Box::new(LoadedDriver))
}

/// Discovery through `driver`'s entry points (libcuda's, or a simulated driver's in
/// tests). Whatever context the calling thread had current (the application's, CuPy's,
/// none) is current again when this returns, on every path: opening a device makes its
/// primary context current to create its stream, and leaving the last one current
/// would move the application's next runtime-API call on this thread to that device.
pub(super) fn discover_on(driver: Box<dyn CudaDriver>) -> Result<Discovery, Unavailable> {
    let mut api = CudaApi::unopened(driver);
    let (facts, skipped) = api.open_all_restoring()?;
    Ok(cuda_hip::discovery(Arc::new(api), facts, skipped))
}

/// One retained primary context, its stream, its compute capability, whether it reads
/// registered host memory at its host address, and its facts.
type Opened = (sys::CUcontext, sys::CUstream, (i32, i32), bool, GpuFacts);

impl CudaApi {
    /// An api over `driver` with no device opened yet.
    fn unopened(driver: Box<dyn CudaDriver>) -> CudaApi {
        CudaApi {
            driver,
            contexts: Vec::new(),
            streams: Vec::new(),
            archs: Vec::new(),
            modules: Mutex::new(Vec::new()),
            pools: cuda_hip::OwnPools::default(),
            copy_batch: false,
            host_pointer_for_registered: Vec::new(),
        }
    }

    /// [`CudaApi::open_all`], with whatever context the calling thread had current
    /// current again afterwards, on every path.
    fn open_all_restoring(&mut self) -> Result<cuda_hip::Found, Unavailable> {
        let before = self.current();
        let opened = self.open_all();
        self.restore(before);
        opened
    }

    /// `cuInit`, then every device opened ([`CudaApi::open_device`]) and kept in this
    /// api; the opened devices' facts and the reasons for those skipped.
    fn open_all(&mut self) -> Result<cuda_hip::Found, Unavailable> {
        // SAFETY: a plain call.
        unsafe { self.driver.cuInit(0) }
            .result()
            .map_err(self.refused("cuInit failed"))?;
        let mut count = 0;
        // SAFETY: an out-pointer to a local.
        unsafe { self.driver.cuDeviceGetCount(&mut count) }
            .result()
            .map_err(self.refused("cuDeviceGetCount failed"))?;
        if count <= 0 {
            return Err("the CUDA driver loaded but reports no device".into());
        }
        let version = self.driver_version_number();
        let named = match version {
            Some(v) => format!("CUDA driver {}.{}", v / 1000, v % 1000 / 10),
            None => "CUDA driver version unknown (cuDriverGetVersion failed)".to_string(),
        };
        let (opened, skipped) =
            cuda_hip::open_each("CUDA", count, |i| self.open_device(i, &named))?;
        // Indexed by the driver's ordinal; a skipped device has null handles, which
        // `activate` refuses.
        let slots = count as usize;
        self.contexts = vec![std::ptr::null_mut(); slots];
        self.streams = vec![std::ptr::null_mut(); slots];
        self.archs = vec![(0, 0); slots];
        self.host_pointer_for_registered = vec![false; slots];
        self.pools = cuda_hip::OwnPools::new(slots);
        self.copy_batch = version.is_some_and(|v| v >= 12080);
        let mut facts = Vec::new();
        for (i, (ctx, stream, arch, host_pointer, f)) in opened {
            self.contexts[i as usize] = ctx;
            self.streams[i as usize] = stream;
            self.archs[i as usize] = arch;
            self.host_pointer_for_registered[i as usize] = host_pointer;
            facts.push((i, f));
        }
        Ok((facts, skipped))
    }

    /// Device `i`'s primary context (retained), its non-blocking stream, its compute
    /// capability and its facts. On a failure part-way the context is released again
    /// (the caller makes current again what the thread had).
    fn open_device(&self, i: i32, version: &str) -> Result<Opened, Unavailable> {
        let mut dev: sys::CUdevice = 0;
        // SAFETY: an out-pointer to a local; `i` is below the device count.
        unsafe { self.driver.cuDeviceGet(&mut dev, i) }
            .result()
            .map_err(self.refused("cuDeviceGet"))?;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: a valid device handle; the primary context is retained for the
        // process's lifetime (the registry is never dropped) unless this function fails.
        unsafe { self.driver.cuDevicePrimaryCtxRetain(&mut ctx, dev) }
            .result()
            .map_err(self.refused("cuDevicePrimaryCtxRetain"))?;
        let release = |why: Unavailable| {
            // SAFETY: retained above, released once, on this failure path only.
            let _ = unsafe { self.driver.cuDevicePrimaryCtxRelease_v2(dev) };
            why
        };
        // SAFETY: `ctx` was just retained.
        unsafe { self.driver.cuCtxSetCurrent(ctx) }
            .result()
            .map_err(|e| release(self.refused("cuCtxSetCurrent")(e)))?;
        let mut stream: sys::CUstream = std::ptr::null_mut();
        // SAFETY: the context is current; an out-pointer to a local.
        unsafe {
            self.driver.cuStreamCreate(
                &mut stream,
                sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
            )
        }
        .result()
        .map_err(|e| release(self.refused("cuStreamCreate")(e)))?;
        let mut name = [0 as c_char; 256];
        // SAFETY: the driver writes a NUL-terminated name of at most `len` bytes.
        let named = unsafe {
            self.driver
                .cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev)
        };
        let name = match named {
            sys::CUresult::CUDA_SUCCESS => {
                name[name.len() - 1] = 0;
                // SAFETY: NUL-terminated (the last byte forced to NUL).
                unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
                    .to_string_lossy()
                    .into_owned()
            }
            _ => format!("CUDA device {i}"),
        };
        let attribute = |a| {
            let mut value = 0;
            // SAFETY: a valid device handle and attribute; an out-pointer to a local.
            match unsafe { self.driver.cuDeviceGetAttribute(&mut value, a, dev) } {
                sys::CUresult::CUDA_SUCCESS => value,
                _ => 0,
            }
        };
        use sys::CUdevice_attribute as A;
        let arch = (
            attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
        );
        let mut memory = 0usize;
        // SAFETY: a valid device handle; an out-pointer to a local.
        let _ = unsafe { self.driver.cuDeviceTotalMem_v2(&mut memory, dev) };
        // A driver older than 11.2 does not know the attribute (0: no pools), and only a
        // driver that has pools exports cuMemPoolCreate.
        let facts = GpuFacts {
            name,
            memory_bytes: memory as u64,
            concurrent_managed_access: attribute(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)
                != 0,
            stream_ordered_pools: attribute(A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0,
            pageable_memory_access: attribute(A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) != 0,
            version: version.to_string(),
            pci: Some(PhysicalDevice::Pci {
                domain: attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID) as u32,
                bus: attribute(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) as u32,
                device: attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID) as u32,
                function: 0,
            }),
            notes: vec![format!(
                "CUDA device {i}, compute capability {}.{}, primary context, one non-blocking stream; kernels compiled by NVRTC to sm_{}{} cubins",
                arch.0, arch.1, arch.0, arch.1
            )],
        };
        let host_pointer =
            attribute(A::CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM) != 0;
        Ok((ctx, stream, arch, host_pointer, facts))
    }

    /// The CUDA driver's version as a number (12080 for 12.8), if it says.
    fn driver_version_number(&self) -> Option<i32> {
        let mut version = 0;
        // SAFETY: writes one int.
        match unsafe { self.driver.cuDriverGetVersion(&mut version) } {
            sys::CUresult::CUDA_SUCCESS => Some(version),
            _ => None,
        }
    }

    /// Why discovery could not go on: `what` and the driver's name and text of the code.
    fn refused(
        &self,
        what: &'static str,
    ) -> impl Fn(cudarc_result::DriverError) -> Unavailable + '_ {
        move |e| format!("{what}: {}", self.err(what)(e).name).into()
    }
}

thread_local! {
    /// The device `activate` made current on this thread (one `CudaApi` per process: the
    /// driver's). A thread-local, so that no lock is taken on every call and nothing is
    /// kept for threads that ended.
    static CURRENT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl CudaApi {
    /// A CudaApi over a simulated driver, its devices opened by discovery's own path
    /// (the thread's current context restored): the call layer tested without an
    /// NVIDIA GPU.
    #[cfg(test)]
    fn simulated(driver: Box<dyn CudaDriver>) -> CudaApi {
        let mut api = CudaApi::unopened(driver);
        if let Err(e) = api.open_all_restoring() {
            panic!("the simulated driver's devices did not open: {e}");
        }
        api
    }

    /// The device `activate` made current on this thread.
    fn current_ordinal(&self) -> usize {
        CURRENT.with(std::cell::Cell::get) as usize
    }

    fn stream(&self) -> sys::CUstream {
        self.streams[self.current_ordinal()]
    }
}
