//! HIP through bindgen bindings of the HIP runtime and hiprtc (`bindings.rs`, made by
//! `scripts/gen-hip-bindings.sh` from Debian's libamdhip64-dev; CI regenerates and
//! diffs them), loaded at run time: the `hip-sys` crates link libamdhip64 at load time,
//! and a binary built with them does not start without it.
//!
//! With the runtime installed but no AMD GPU (this project's machines), `hipInit` and
//! `hipGetDeviceCount` answer with an error and the backend reports it as the reason.
//! Not run on a GPU where it was written.

#[allow(
    clippy::all,
    clippy::pedantic,
    clippy::undocumented_unsafe_blocks,
    missing_docs,
    unsafe_op_in_unsafe_fn
)]
#[rustfmt::skip]
pub mod bindings;

use std::ffi::{c_void, CStr, CString};
use std::sync::{Arc, Mutex};

use bindings::*;

use super::cuda_hip::{self, GpuApi, GpuDevice, GpuFacts, GpuMemory};
use super::loading::dl_error;
use crate::core::device::Discovery;
use crate::core::location::Technology;
use crate::core::native::Native;

/// The HIP runtime, with one stream per device.
pub struct HipApi {
    raw: HipApiRaw,
    streams: Vec<hipStream_t>,
    current: Mutex<std::collections::HashMap<std::thread::ThreadId, u32>>,
}

// SAFETY: HIP streams and modules may be used from any thread after hipSetDevice
// (`activate` does that before every call); mutable state is behind a mutex.
unsafe impl Send for HipApi {}
// SAFETY: as for `Send`.
unsafe impl Sync for HipApi {}

/// The HIP device type.
pub type HipDevice = GpuDevice<HipApi>;

const LIBRARIES: [&str; 3] = ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"];

impl HipApi {
    fn error(&self, code: hipError_t) -> String {
        // SAFETY: hipGetErrorName returns a static string for any code.
        let name = unsafe { CStr::from_ptr(self.raw.hipGetErrorName(code)) }
            .to_string_lossy()
            .into_owned();
        format!("{code} ({name})")
    }

    fn check(&self, call: &str, code: hipError_t) -> Result<(), String> {
        if code == hipError_t_hipSuccess {
            Ok(())
        } else {
            Err(format!("{call} returned {}", self.error(code)))
        }
    }

    fn stream(&self) -> hipStream_t {
        let ordinal = self
            .current
            .lock()
            .map(|m| m.get(&std::thread::current().id()).copied().unwrap_or(0))
            .unwrap_or(0);
        self.streams
            .get(ordinal as usize)
            .copied()
            .unwrap_or(std::ptr::null_mut())
    }
}

fn load() -> Result<HipApiRaw, String> {
    let mut tried = Vec::new();
    for name in LIBRARIES {
        // SAFETY: loading the HIP runtime runs its initialisers, as any HIP program does;
        // every symbol is checked to exist (bindgen's require-all).
        match unsafe { HipApiRaw::new(name) } {
            Ok(api) => return Ok(api),
            Err(e) => tried.push(format!("{name}: {}", dl_error(&e))),
        }
    }
    Err(format!(
        "the HIP runtime could not be loaded ({}); install ROCm's HIP runtime (apt-get install libamdhip64-5) on a machine with an AMD GPU",
        tried.join("; ")
    ))
}

pub(crate) fn discover() -> Result<Discovery, String> {
    let raw = load()?;
    let mut version = 0;
    // SAFETY: plain queries with out-pointers to locals.
    let (init, count_rc, count) = unsafe {
        raw.hipRuntimeGetVersion(&mut version);
        let init = raw.hipInit(0);
        let mut count = 0;
        let rc = raw.hipGetDeviceCount(&mut count);
        (init, rc, count)
    };
    let mut api = HipApi {
        raw,
        streams: Vec::new(),
        current: Mutex::new(std::collections::HashMap::new()),
    };
    if count_rc != hipError_t_hipSuccess || count == 0 {
        let what = if count_rc == hipError_t_hipErrorNoDevice {
            "hipErrorNoDevice: no AMD GPU found".to_string()
        } else if count_rc != hipError_t_hipSuccess {
            format!("hipGetDeviceCount returned {}", api.error(count_rc))
        } else {
            "hipGetDeviceCount found 0 devices".to_string()
        };
        return Err(format!(
            "{what} (HIP runtime {version} loaded; hipInit returned {}, hipGetDeviceCount {})",
            api.error(init),
            api.error(count_rc)
        ));
    }
    let mut facts = Vec::new();
    for i in 0..count {
        let mut name = [0 as std::os::raw::c_char; 256];
        let (mut total, mut managed) = (0usize, 0);
        let mut stream: hipStream_t = std::ptr::null_mut();
        // SAFETY: device `i` exists (0..count); out-pointers are locals.
        unsafe {
            api.check("hipSetDevice", api.raw.hipSetDevice(i))?;
            api.raw
                .hipDeviceGetName(name.as_mut_ptr(), name.len() as i32, i);
            api.raw.hipDeviceTotalMem(&mut total, i);
            api.raw.hipDeviceGetAttribute(
                &mut managed,
                hipDeviceAttribute_t_hipDeviceAttributeConcurrentManagedAccess,
                i,
            );
            api.check(
                "hipStreamCreateWithFlags",
                api.raw.hipStreamCreateWithFlags(&mut stream, 1),
            )?;
        }
        api.streams.push(stream);
        // SAFETY: hipDeviceGetName wrote a NUL-terminated string into `name`.
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        facts.push(GpuFacts {
            name,
            memory_bytes: total as u64,
            concurrent_managed_access: managed != 0,
            notes: vec![format!(
                "HIP runtime {version}, device {i}, one non-blocking stream"
            )],
        });
    }
    let api = Arc::new(api);
    let devices: Vec<Arc<HipDevice>> = facts
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
        paths: cuda_hip::paths::<HipApi>(),
    })
}

impl GpuApi for HipApi {
    const TECHNOLOGY: Technology = Technology::Hip;

    fn activate(&self, ordinal: u32) -> Result<(), String> {
        // SAFETY: hipSetDevice validates the ordinal.
        self.check("hipSetDevice", unsafe {
            self.raw.hipSetDevice(ordinal as i32)
        })?;
        if let Ok(mut m) = self.current.lock() {
            m.insert(std::thread::current().id(), ordinal);
        }
        Ok(())
    }

    unsafe fn alloc(&self, kind: GpuMemory, bytes: usize) -> Result<u64, String> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; the device is current.
        let rc = unsafe {
            match kind {
                GpuMemory::Device => self.raw.hipMalloc(&mut ptr, bytes),
                GpuMemory::Pinned => self.raw.hipHostMalloc(&mut ptr, bytes, 0),
                GpuMemory::Managed => self.raw.hipMallocManaged(&mut ptr, bytes, 1),
            }
        };
        self.check("allocation", rc)?;
        Ok(ptr as u64)
    }

    unsafe fn free(&self, kind: GpuMemory, ptr: u64) {
        // SAFETY: per the caller's contract.
        unsafe {
            match kind {
                GpuMemory::Pinned => self.raw.hipHostFree(ptr as *mut c_void),
                _ => self.raw.hipFree(ptr as *mut c_void),
            };
        }
    }

    unsafe fn to_device(
        &self,
        dst: u64,
        src: *const u8,
        n: usize,
        wait: bool,
    ) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            self.raw.hipMemcpyAsync(
                dst as *mut c_void,
                src.cast(),
                n,
                hipMemcpyKind_hipMemcpyHostToDevice,
                self.stream(),
            )
        };
        self.check("hipMemcpyAsync", rc)?;
        if wait {
            self.synchronize()
        } else {
            Ok(())
        }
    }

    unsafe fn to_host(&self, dst: *mut u8, src: u64, n: usize, wait: bool) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            self.raw.hipMemcpyAsync(
                dst.cast(),
                src as *const c_void,
                n,
                hipMemcpyKind_hipMemcpyDeviceToHost,
                self.stream(),
            )
        };
        self.check("hipMemcpyAsync", rc)?;
        if wait {
            self.synchronize()
        } else {
            Ok(())
        }
    }

    unsafe fn on_device(&self, dst: u64, src: u64, n: usize, wait: bool) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            self.raw.hipMemcpyAsync(
                dst as *mut c_void,
                src as *const c_void,
                n,
                hipMemcpyKind_hipMemcpyDeviceToDevice,
                self.stream(),
            )
        };
        self.check("hipMemcpyAsync", rc)?;
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
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            self.raw.hipMemcpyPeer(
                dst as *mut c_void,
                dst_ordinal as i32,
                src as *const c_void,
                src_ordinal as i32,
                n,
            )
        };
        self.check("hipMemcpyPeer", rc)
    }

    unsafe fn memset(&self, dst: u64, byte: u8, n: usize) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        self.check("hipMemset", unsafe {
            self.raw.hipMemset(dst as *mut c_void, i32::from(byte), n)
        })
    }

    fn synchronize(&self) -> Result<(), String> {
        // SAFETY: a stream of the current device.
        self.check("hipStreamSynchronize", unsafe {
            self.raw.hipStreamSynchronize(self.stream())
        })
    }

    fn event_create(&self) -> Result<u64, String> {
        let mut event: hipEvent_t = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; 2 = hipEventDisableTiming.
        self.check("hipEventCreateWithFlags", unsafe {
            self.raw.hipEventCreateWithFlags(&mut event, 2)
        })?;
        Ok(event as u64)
    }

    unsafe fn event_record(&self, event: u64) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        self.check("hipEventRecord", unsafe {
            self.raw.hipEventRecord(event as hipEvent_t, self.stream())
        })
    }

    unsafe fn event_wait(&self, event: u64) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        self.check("hipEventSynchronize", unsafe {
            self.raw.hipEventSynchronize(event as hipEvent_t)
        })
    }

    unsafe fn event_query(&self, event: u64) -> Result<bool, String> {
        // SAFETY: per the caller's contract.
        let rc = unsafe { self.raw.hipEventQuery(event as hipEvent_t) };
        if rc == hipError_t_hipErrorNotReady {
            return Ok(false);
        }
        self.check("hipEventQuery", rc).map(|()| true)
    }

    unsafe fn event_destroy(&self, event: u64) {
        // SAFETY: per the caller's contract.
        let _ = unsafe { self.raw.hipEventDestroy(event as hipEvent_t) };
    }

    fn enable_peer(&self, from: u32, to: u32) -> bool {
        let mut can = 0;
        // SAFETY: plain queries with out-pointers to locals.
        unsafe {
            if self
                .raw
                .hipDeviceCanAccessPeer(&mut can, from as i32, to as i32)
                != hipError_t_hipSuccess
                || can == 0
            {
                return false;
            }
            if self.activate(from).is_err() {
                return false;
            }
            let rc = self.raw.hipDeviceEnablePeerAccess(to as i32, 0);
            rc == hipError_t_hipSuccess || rc == hipError_t_hipErrorPeerAccessAlreadyEnabled
        }
    }

    fn compile(&self, source: &str, entry: &str) -> Result<u64, String> {
        let src = CString::new(source).map_err(|e| e.to_string())?;
        let name = CString::new(entry).map_err(|e| e.to_string())?;
        let mut program: hiprtcProgram = std::ptr::null_mut();
        // SAFETY: hiprtc calls with NUL-terminated strings and out-pointers to locals;
        // the program is destroyed once, the module kept for the process.
        unsafe {
            let rc = self.raw.hiprtcCreateProgram(
                &mut program,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            if rc != hiprtcResult_HIPRTC_SUCCESS {
                return Err(format!("hiprtcCreateProgram returned {rc}"));
            }
            let rc = self
                .raw
                .hiprtcCompileProgram(program, 0, std::ptr::null_mut());
            if rc != hiprtcResult_HIPRTC_SUCCESS {
                let mut size = 0;
                self.raw.hiprtcGetProgramLogSize(program, &mut size);
                let mut log = vec![0u8; size.max(1)];
                self.raw
                    .hiprtcGetProgramLog(program, log.as_mut_ptr().cast());
                self.raw.hiprtcDestroyProgram(&mut program);
                return Err(format!(
                    "hiprtcCompileProgram returned {rc}: {}",
                    String::from_utf8_lossy(&log)
                ));
            }
            let mut size = 0;
            self.raw.hiprtcGetCodeSize(program, &mut size);
            let mut code = vec![0u8; size];
            self.raw.hiprtcGetCode(program, code.as_mut_ptr().cast());
            self.raw.hiprtcDestroyProgram(&mut program);
            let mut module: hipModule_t = std::ptr::null_mut();
            self.check(
                "hipModuleLoadData",
                self.raw
                    .hipModuleLoadData(&mut module, code.as_ptr().cast()),
            )?;
            let mut function: hipFunction_t = std::ptr::null_mut();
            self.check(
                "hipModuleGetFunction",
                self.raw
                    .hipModuleGetFunction(&mut function, module, name.as_ptr()),
            )?;
            Ok(function as u64)
        }
    }

    unsafe fn launch(
        &self,
        function: u64,
        grid: [u32; 3],
        block: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<(), String> {
        // SAFETY: per the caller's contract.
        let rc = unsafe {
            self.raw.hipModuleLaunchKernel(
                function as hipFunction_t,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                0,
                self.stream(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        self.check("hipModuleLaunchKernel", rc)
    }

    fn native(ptr: u64, kind: GpuMemory) -> Native {
        Native::Hip { ptr, kind }
    }

    fn unpack(native: &Native) -> Option<(u64, GpuMemory)> {
        match native {
            Native::Hip { ptr, kind } => Some((*ptr, *kind)),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}
