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

use super::cuda_hip::{self, GpuApi, GpuDevice, GpuFacts, GpuMemory};
use crate::core::device::Discovery;
use crate::core::location::Technology;
use crate::core::native::Native;

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

fn text(e: result::DriverError) -> String {
    let name = e
        .error_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let what = e
        .error_string()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}: {what}")
}

/// The CUDA device at `location`.
pub type CudaDevice = GpuDevice<CudaApi>;

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

impl GpuApi for CudaApi {
    const TECHNOLOGY: Technology = Technology::Cuda;

    fn activate(&self, ordinal: u32) -> Result<(), String> {
        let ctx = *self
            .contexts
            .get(ordinal as usize)
            .ok_or("no such CUDA device")?;
        // SAFETY: a retained primary context.
        unsafe { result::ctx::set_current(ctx) }.map_err(text)?;
        if let Ok(mut m) = self.current.lock() {
            m.insert(std::thread::current().id(), ordinal);
        }
        Ok(())
    }

    unsafe fn alloc(&self, kind: GpuMemory, bytes: usize) -> Result<u64, String> {
        // SAFETY: the context is current (caller's contract).
        unsafe {
            match kind {
                GpuMemory::Device => result::malloc_sync(bytes),
                GpuMemory::Pinned => result::malloc_host(bytes, 0).map(|p| p as u64),
                GpuMemory::Managed => {
                    result::malloc_managed(bytes, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL)
                }
            }
        }
        .map_err(text)
    }

    unsafe fn free(&self, kind: GpuMemory, ptr: u64) {
        // SAFETY: per the caller's contract.
        let _ = unsafe {
            match kind {
                GpuMemory::Pinned => result::free_host(ptr as *mut c_void),
                _ => result::free_sync(ptr),
            }
        };
    }

    unsafe fn to_device(
        &self,
        dst: u64,
        src: *const u8,
        n: usize,
        wait: bool,
    ) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        unsafe {
            result::memcpy_htod_async(dst, std::slice::from_raw_parts(src, n), self.stream())
                .map_err(text)?;
        }
        if wait {
            self.synchronize()
        } else {
            Ok(())
        }
    }

    unsafe fn to_host(&self, dst: *mut u8, src: u64, n: usize, wait: bool) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        unsafe {
            result::memcpy_dtoh_async(std::slice::from_raw_parts_mut(dst, n), src, self.stream())
                .map_err(text)?;
        }
        if wait {
            self.synchronize()
        } else {
            Ok(())
        }
    }

    unsafe fn on_device(&self, dst: u64, src: u64, n: usize, wait: bool) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        unsafe { result::memcpy_dtod_async(dst, src, n, self.stream()) }.map_err(text)?;
        if wait {
            self.synchronize()
        } else {
            Ok(())
        }
    }

    unsafe fn peer(
        &self,
        dst: u64,
        dst_ordinal: u32,
        src: u64,
        src_ordinal: u32,
        n: usize,
    ) -> Result<(), String> {
        let (d, s) = (
            self.contexts[dst_ordinal as usize],
            self.contexts[src_ordinal as usize],
        );
        // SAFETY: per the caller's contract.
        unsafe { result::memcpy_peer_async(d, dst, s, src, n, self.stream()) }.map_err(text)?;
        self.synchronize()
    }

    unsafe fn memset(&self, dst: u64, byte: u8, n: usize) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        unsafe { result::memset_d8_sync(dst, byte, n) }.map_err(text)
    }

    fn synchronize(&self) -> Result<(), String> {
        // SAFETY: a stream of the current context.
        unsafe { result::stream::synchronize(self.stream()) }.map_err(text)
    }

    fn event_create(&self) -> Result<u64, String> {
        result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map(|e| e as u64)
            .map_err(text)
    }

    unsafe fn event_record(&self, event: u64) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        unsafe { result::event::record(event as sys::CUevent, self.stream()) }.map_err(text)
    }

    unsafe fn event_wait(&self, event: u64) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        unsafe { result::event::synchronize(event as sys::CUevent) }.map_err(text)
    }

    unsafe fn event_query(&self, event: u64) -> Result<bool, String> {
        // SAFETY: per the caller's contract.
        match unsafe { result::event::query(event as sys::CUevent) } {
            Ok(()) => Ok(true),
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            Err(e) => Err(text(e)),
        }
    }

    unsafe fn event_destroy(&self, event: u64) {
        // SAFETY: per the caller's contract.
        let _ = unsafe { result::event::destroy(event as sys::CUevent) };
    }

    fn enable_peer(&self, from: u32, to: u32) -> bool {
        let mut can = 0;
        // SAFETY: plain queries and an enable call on retained contexts.
        unsafe {
            let (Ok(a), Ok(b)) = (
                result::device::get(from as i32),
                result::device::get(to as i32),
            ) else {
                return false;
            };
            if sys::cuDeviceCanAccessPeer(&mut can, a, b) != sys::CUresult::CUDA_SUCCESS || can == 0
            {
                return false;
            }
            if self.activate(from).is_err() {
                return false;
            }
            let rc = sys::cuCtxEnablePeerAccess(self.contexts[to as usize], 0);
            rc == sys::CUresult::CUDA_SUCCESS
                || rc == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
        }
    }

    fn compile(&self, source: &str, entry: &str) -> Result<u64, String> {
        // SAFETY: only checks whether the library can be opened.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err("libnvrtc.so not found: install the CUDA toolkit's NVRTC library".into());
        }
        let ptx = cudarc::nvrtc::compile_ptx(source).map_err(|e| format!("NVRTC: {e:?}"))?;
        let image = std::ffi::CString::new(ptx.to_src()).map_err(|e| e.to_string())?;
        // SAFETY: a NUL-terminated PTX image; the module is kept for the process.
        let module = unsafe { result::module::load_data(image.as_ptr().cast()) }.map_err(text)?;
        if let Ok(mut m) = self.modules.lock() {
            m.push(module);
        }
        let name = std::ffi::CString::new(entry).map_err(|e| e.to_string())?;
        // SAFETY: a loaded module and a NUL-terminated name.
        let function = unsafe { result::module::get_function(module, name) }.map_err(text)?;
        Ok(function as u64)
    }

    unsafe fn launch(
        &self,
        function: u64,
        grid: [u32; 3],
        block: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        unsafe {
            result::launch_kernel(
                function as sys::CUfunction,
                (grid[0], grid[1], grid[2]),
                (block[0], block[1], block[2]),
                0,
                self.stream(),
                params,
            )
        }
        .map_err(text)
    }

    fn native(ptr: u64, kind: GpuMemory) -> Native {
        Native::Cuda { ptr, kind }
    }

    fn unpack(native: &Native) -> Option<(u64, GpuMemory)> {
        match native {
            Native::Cuda { ptr, kind } => Some((*ptr, *kind)),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}
