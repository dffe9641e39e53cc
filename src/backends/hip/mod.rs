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

use super::cuda_hip::{self, GpuApi, GpuDevice, GpuError, GpuFacts, GpuMemory};
use super::loading::dl_error;
use crate::core::device::Discovery;
use crate::core::location::Technology;
use crate::core::native::Native;

mod calls;
mod device;
mod kernels;
mod work;

pub use device::HipDevice;

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

const LIBRARIES: [&str; 3] = ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"];

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
            format!("hipGetDeviceCount returned {}", api.describe(count_rc))
        } else {
            "hipGetDeviceCount found 0 devices".to_string()
        };
        return Err(format!(
            "{what} (HIP runtime {version} loaded; hipInit returned {}, hipGetDeviceCount {})",
            api.describe(init),
            api.describe(count_rc)
        ));
    }
    let mut facts = Vec::new();
    for i in 0..count {
        let mut name = [0 as std::os::raw::c_char; 256];
        let (mut total, mut managed) = (0usize, 0);
        let mut stream: hipStream_t = std::ptr::null_mut();
        // SAFETY: device `i` exists (0..count); out-pointers are locals.
        unsafe {
            api.check("hipSetDevice", api.raw.hipSetDevice(i))
                .map_err(|e| e.to_string())?;
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
            )
            .map_err(|e| e.to_string())?;
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
