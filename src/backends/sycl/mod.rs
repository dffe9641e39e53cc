//! SYCL through dpctl's C API (`libDPCTLSyclInterface.so`), loaded at run time through
//! bindgen's dynamic-loading bindings (`sys.rs`, made by
//! `scripts/gen-sycl-bindings.sh`; CI regenerates them and fails on any difference).
//!
//! Every SYCL device with USM support becomes `sycl:N`; a device without USM (PoCL seen
//! through SYCL) is skipped with its reason. Memory is USM: device allocations by
//! default, shared and host allocations through [`MemoryKinds::allocate_kind`]. Each
//! allocation kind is allocated only after checking the device's USM aspect: the C API
//! lets C++ exceptions escape, and one crossing into Rust aborts the process.
//!
//! Host access follows the USM pointer type: shared and host USM have host addresses;
//! device USM has one only on a CPU device (where the SYCL runtime serves it from host
//! memory), and `locus info` says so.

#[allow(
    clippy::all,
    clippy::pedantic,
    clippy::undocumented_unsafe_blocks,
    missing_docs,
    unsafe_op_in_unsafe_fn
)]
#[rustfmt::skip]
pub mod sys;
mod load;
mod result;

/// The old name of [`sys`], for one release.
#[deprecated(
    note = "renamed `sys`: cudarc's layer names (sys, result, entry points) in every vendor folder"
)]
pub mod bindings {
    pub use super::sys::*;
}

use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use sys::*;

use crate::core::capability::{
    native_calls_are_own, HostMemoryInPlace, InPlace, Kernels, MemoryKinds, NativeCalls,
    QueueAdoption, QueuedCopies,
};
use crate::core::completion::{native_deps, Completion, Dependencies, NativeWork, NoDependencies};
use crate::core::copy_span::CopySpan;
use crate::core::device::{
    fill_by_writes, unsupported_kind, Device, DeviceInfo, HostAccess, HostReach, PhysicalDevice,
};
use crate::core::discovery::{Discovery, Unavailable};
use crate::core::error::{Error, Result};
use crate::core::launch::{bad_argument, cache_key, LaunchArg, LaunchSpec};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::{MemoryKind, Native};
use crate::core::pointer_queries::{DriverAllocation, PointerQueries};

pub use crate::core::native::UsmKind;
pub use result::SyclError;

/// What to check when a copy is refused.
const COPY_HINT: &str = "check that both pointers are USM of this device's context or host memory";

mod adopted;
mod context_adoption;
mod device;
mod kernels;
mod prefetch;
mod work;

pub use kernels::{KernelArg, SyclKernel};
pub use work::SyclWork;

fn api() -> Result<&'static DpctlApi, Unavailable> {
    static API: OnceLock<Result<(DpctlApi, String), Unavailable>> = OnceLock::new();
    API.get_or_init(load::load)
        .as_ref()
        .map(|(api, _)| api)
        .map_err(Clone::clone)
}

/// One SYCL device with its in-order queue.
pub struct SyclDevice {
    location: Location,
    info: DeviceInfo,
    api: &'static DpctlApi,
    device: DPCTLSyclDeviceRef,
    queue: DPCTLSyclQueueRef,
    context: DPCTLSyclContextRef,
    usm: [bool; 3],
    system_usm: bool,
    cpu: bool,
    live: AtomicUsize,
    kernels: Mutex<HashMap<u64, Arc<SyclKernel>>>,
    /// Its queue was made with profiling (see `work::queue_properties`).
    profiled: bool,
}

// SAFETY: SYCL devices, contexts and queues are thread-safe objects (SYCL 2020, 4.3.1);
// the references are only used through the C API, which locks internally.
unsafe impl Send for SyclDevice {}
// SAFETY: as for `Send`.
unsafe impl Sync for SyclDevice {}

impl std::fmt::Debug for SyclDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SyclDevice({}, {})", self.location, self.info.name)
    }
}

/// Takes a C string the C API gave us, and frees it.
///
/// # Safety
/// `text` is NULL or a string returned by a dpctl `Get*` call that passes ownership.
unsafe fn take_string(api: &DpctlApi, text: *const std::os::raw::c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string from dpctl (caller's contract).
    let owned = unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: dpctl gave ownership of `text`; it is freed once.
    unsafe { api.DPCTLCString_Delete(text) };
    owned
}

pub(crate) fn discover() -> Result<Discovery, Unavailable> {
    let api = api()?;
    let mut devices: Vec<Arc<dyn Device>> = Vec::new();
    let mut skipped = Vec::new();
    // SAFETY: plain C API calls on the references dpctl returns; every reference is
    // deleted once, and aspects are only queried (never allocated against) here.
    unsafe {
        let all = (DPCTLSyclBackendType_DPCTL_ALL_BACKENDS | DPCTLSyclDeviceType_DPCTL_ALL) as i32;
        let vector = api.DPCTLDeviceMgr_GetDevices(all);
        if vector.is_null() {
            return Err("DPCTLDeviceMgr_GetDevices returned no device list".into());
        }
        let count = api.DPCTLDeviceVector_Size(vector);
        for i in 0..count {
            let device = api.DPCTLDeviceVector_GetAt(vector, i);
            if device.is_null() {
                continue;
            }
            let (name, platform, usm) = describe(api, device);
            if !usm[0] {
                skipped.push(format!("{name} ({platform}): no USM device allocations"));
                api.DPCTLDevice_Delete(device);
                continue;
            }
            let location = Location::Sycl(devices.len() as u32);
            match SyclDevice::open(api, location, device, name.clone(), platform.clone(), usm) {
                Ok(d) => devices.push(Arc::new(d)),
                Err(e) => skipped.push(format!("{name} ({platform}): {e}")),
            }
        }
        api.DPCTLDeviceVector_Delete(vector);
    }
    if devices.is_empty() {
        return Err(format!(
            "the SYCL runtime found no device with USM support ({}); make Intel's CPU OpenCL runtime visible, e.g. \
             OCL_ICD_FILENAMES=$VENV/lib/libintelocl.so LD_LIBRARY_PATH=$VENV/lib (see scripts/sycl-env.sh)",
            if skipped.is_empty() { "no device at all".to_string() } else { skipped.join("; ") }
        ).into());
    }
    Ok(Discovery {
        devices,
        skipped,
        paths: vec![],
    })
}

/// A device's name, its platform's name, and which USM kinds it allocates (device,
/// shared, host).
///
/// # Safety
/// `device` is a live device reference (kept by the caller).
unsafe fn describe(api: &DpctlApi, device: DPCTLSyclDeviceRef) -> (String, String, [bool; 3]) {
    // SAFETY: a live device (the caller's contract); the platform reference made here is
    // deleted here, the strings taken.
    unsafe {
        let name = take_string(api, api.DPCTLDevice_GetName(device));
        let platform_ref = api.DPCTLDevice_GetPlatform(device);
        let platform = take_string(api, api.DPCTLPlatform_GetName(platform_ref));
        api.DPCTLPlatform_Delete(platform_ref);
        let usm = [
            api.DPCTLDevice_HasAspect(device, DPCTLSyclAspectType_usm_device_allocations),
            api.DPCTLDevice_HasAspect(device, DPCTLSyclAspectType_usm_shared_allocations),
            api.DPCTLDevice_HasAspect(device, DPCTLSyclAspectType_usm_host_allocations),
        ];
        (name, platform, usm)
    }
}

impl SyclDevice {
    /// # Safety
    /// `device` is a live device reference; this takes ownership of it.
    unsafe fn open(
        api: &'static DpctlApi,
        location: Location,
        device: DPCTLSyclDeviceRef,
        name: String,
        platform: String,
        usm: [bool; 3],
    ) -> Result<SyclDevice, Unavailable> {
        // SAFETY: `device` is live (caller's contract); the queue and context returned
        // are owned by the new value and deleted in its `Drop`.
        unsafe {
            let (properties, profiled) = work::queue_properties();
            let queue = api.DPCTLQueue_CreateForDevice(device, None, properties);
            if queue.is_null() {
                api.DPCTLDevice_Delete(device);
                return Err("DPCTLQueue_CreateForDevice failed".into());
            }
            Self::with_queue(api, location, device, queue, (name, platform), usm, None).map(
                |mut d| {
                    d.profiled = profiled;
                    d
                },
            )
        }
    }

    /// The device with `queue` (locus's in-order queue there, in locus's context or an
    /// application's adopted one, whose `DPCTLSyclContextRef` `adopted` names for `locus
    /// info`).
    ///
    /// # Safety
    /// `device` and `queue` are live references; this takes ownership of both.
    unsafe fn with_queue(
        api: &'static DpctlApi,
        location: Location,
        device: DPCTLSyclDeviceRef,
        queue: DPCTLSyclQueueRef,
        (name, platform): (String, String),
        usm: [bool; 3],
        adopted: Option<usize>,
    ) -> Result<SyclDevice, Unavailable> {
        // SAFETY: live references (the caller's contract); the context returned is owned
        // by the new value and deleted in its `Drop`, with the queue and the device.
        unsafe {
            let context = api.DPCTLQueue_GetContext(queue);
            let cpu = api.DPCTLDevice_IsCPU(device);
            let system_usm =
                api.DPCTLDevice_HasAspect(device, DPCTLSyclAspectType_usm_system_allocations);
            let kinds: Vec<&str> = [UsmKind::Device, UsmKind::Shared, UsmKind::Host]
                .iter()
                .zip(usm)
                .filter(|(_, yes)| *yes)
                .map(|(k, _)| k.name())
                .collect();
            let mut notes = vec![format!("USM: {}", kinds.join(", "))];
            if let Some(context) = adopted {
                notes.push(format!(
                    "adopted: the application's own context ({context:#x}), kept while locus runs"
                ));
            }
            let version = format!(
                "driver {}",
                take_string(api, api.DPCTLDevice_GetDriverVersion(device))
            );
            if cpu {
                notes.push(
                    "CPU device: device USM is host memory, used in place by the host".into(),
                );
            }
            if system_usm {
                notes.push("usm_system_allocations: kernels use plain host memory in place".into());
            }
            Ok(SyclDevice {
                location,
                info: DeviceInfo {
                    name,
                    platform,
                    kind: if cpu {
                        "cpu".into()
                    } else if api.DPCTLDevice_IsGPU(device) {
                        "gpu".into()
                    } else {
                        "other".into()
                    },
                    memory_bytes: Some(api.DPCTLDevice_GetGlobalMemSize(device)),
                    max_allocation: api.DPCTLDevice_GetMaxMemAllocSize(device),
                    shares_host_memory: cpu,
                    version: Some(version),
                    notes,
                    // dpctl's C API does not name a GPU's PCI address.
                    physical: cpu.then_some(PhysicalDevice::HostCpu),
                },
                api,
                device,
                queue,
                context,
                usm,
                system_usm,
                cpu,
                live: AtomicUsize::new(0),
                kernels: Mutex::new(HashMap::new()),
                profiled: false,
            })
        }
    }

    /// The dpctl queue reference (an in-order `sycl::queue`), for your own submissions.
    pub fn queue(&self) -> DPCTLSyclQueueRef {
        self.queue
    }

    /// The dpctl context reference.
    pub fn context(&self) -> DPCTLSyclContextRef {
        self.context
    }

    /// The dpctl device reference.
    pub fn device_ref(&self) -> DPCTLSyclDeviceRef {
        self.device
    }

    /// The loaded C API.
    pub fn api(&self) -> &'static DpctlApi {
        self.api
    }

    /// A new reference to this device's queue (`DPCTLQueue_Copy`), owned by the caller:
    /// what dpctl's `SyclQueue` takes from a `"SyclQueueRef"` capsule (as its own
    /// `SyclQueue._get_capsule` makes), so that a Python consumer names the queue, and
    /// so the context, that owns this device's USM allocations. Delete it with
    /// [`SyclDevice::delete_queue_ref`] when nobody took it.
    pub fn queue_ref_copy(&self) -> Result<DPCTLSyclQueueRef> {
        // SAFETY: `self.queue` is this device's live queue.
        unsafe { self.copy_queue_ref(self.queue) }
    }

    /// A new reference to `queue` (`DPCTLQueue_Copy`), owned by the caller.
    ///
    /// # Safety
    /// `queue` is a live queue reference.
    unsafe fn copy_queue_ref(&self, queue: DPCTLSyclQueueRef) -> Result<DPCTLSyclQueueRef> {
        // SAFETY: a live queue (the caller's contract); the copy is a new reference the
        // caller owns.
        let copy = unsafe { self.api.DPCTLQueue_Copy(queue) };
        if copy.is_null() {
            return Err(Error::Backend {
                location: self.location,
                call: "DPCTLQueue_Copy",
                message: "dpctl returned no queue".into(),
                hint: "the SYCL runtime may be out of resources".into(),
            });
        }
        Ok(copy)
    }

    /// Deletes a queue reference from [`SyclDevice::queue_ref_copy`].
    ///
    /// # Safety
    /// `queue` came from `queue_ref_copy` of a device whose API is `api`, and nothing
    /// uses it afterwards (nobody else took ownership of it).
    pub unsafe fn delete_queue_ref(api: &DpctlApi, queue: DPCTLSyclQueueRef) {
        // SAFETY: per the contract, an owned, unused queue reference.
        unsafe { api.DPCTLQueue_Delete(queue) }
    }

    /// True when the device supports allocations of `kind`.
    pub fn supports(&self, kind: UsmKind) -> bool {
        self.usm[kind as usize]
    }

    /// Allocates `bytes` of USM of `kind` on this device, as a [`Memory`].
    pub fn allocate_kind(self: &Arc<Self>, bytes: usize, kind: UsmKind) -> Result<Memory> {
        let native = self.allocate_usm(bytes, kind)?;
        let device: Arc<dyn Device> = self.clone();
        Ok(Memory::from_native(device, native, bytes))
    }

    fn allocate_usm(&self, bytes: usize, kind: UsmKind) -> Result<Native> {
        if !self.supports(kind) {
            return Err(Error::Invalid(format!(
                "{}: the device does not support USM {} allocations (aspect usm_{}_allocations)",
                self.location,
                kind.name(),
                kind.name()
            )));
        }
        if bytes as u64 > self.info.max_allocation {
            return Err(Error::TooLarge {
                location: self.location,
                requested: bytes,
                max: self.info.max_allocation as usize,
            });
        }
        // SAFETY: the aspect for `kind` was checked above, so the runtime does not throw;
        // the queue is live.
        let ptr = unsafe { result::malloc(self.api, self.queue, kind, bytes.max(1)) }
            // Within the device's largest allocation, a refusal is the device running out.
            .map_err(|e| Error::OutOfMemory {
                location: self.location,
                requested: bytes,
                by: e.call.into(),
                reason: e.to_string(),
            })?;
        self.live.fetch_add(1, Ordering::Relaxed);
        // Accessibility follows what the runtime reports for the pointer.
        let reported = self.pointer_kind(ptr.cast()).unwrap_or(kind);
        Ok(Native::Sycl {
            ptr: ptr.cast(),
            kind: reported,
        })
    }

    /// The kind of a USM pointer as the runtime reports it (`DPCTLUSM_GetPointerType`).
    #[allow(non_upper_case_globals)]
    pub fn pointer_kind(&self, ptr: *const u8) -> Option<UsmKind> {
        // SAFETY: the query only inspects the address against the context's allocations.
        let t = unsafe {
            self.api
                .DPCTLUSM_GetPointerType(ptr as DPCTLSyclUSMRef, self.context)
        };
        match t {
            DPCTLSyclUSMType_DPCTL_USM_DEVICE => Some(UsmKind::Device),
            DPCTLSyclUSMType_DPCTL_USM_SHARED => Some(UsmKind::Shared),
            DPCTLSyclUSMType_DPCTL_USM_HOST => Some(UsmKind::Host),
            _ => None,
        }
    }

    /// The locus error for a dpctl call that returned no handle.
    fn fail(&self, e: SyclError, hint: &str) -> Error {
        Error::Backend {
            location: self.location,
            call: e.call,
            message: "returned no handle (the SYCL runtime printed the reason on stderr)".into(),
            hint: hint.into(),
        }
    }

    /// Waits for and deletes the event of a submitted command, or reports why it was not
    /// submitted.
    fn finish(&self, event: Result<DPCTLSyclEventRef, SyclError>, hint: &str) -> Result<()> {
        let event = event.map_err(|e| self.fail(e, hint))?;
        // SAFETY: a live event returned by the queue, waited for and deleted once.
        unsafe { result::wait_and_delete(self.api, event) };
        Ok(())
    }

    fn memcpy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        // SAFETY: both ranges were bounds-checked by `Memory` (or are live host slices);
        // the copy is waited for before returning.
        let event = unsafe { result::memcpy(self.api, self.queue, dst, src, len, &[]) };
        self.finish(event, COPY_HINT)
    }
}

impl Drop for SyclDevice {
    fn drop(&mut self) {
        // SAFETY: the references are owned by this value and deleted once.
        unsafe {
            self.api.DPCTLQueue_Wait(self.queue);
            self.api.DPCTLContext_Delete(self.context);
            self.api.DPCTLQueue_Delete(self.queue);
            self.api.DPCTLDevice_Delete(self.device);
        }
    }
}

fn usm_of(native: &Native) -> (*mut u8, UsmKind) {
    match native {
        Native::Sycl { ptr, kind } => (*ptr, *kind),
        #[allow(unreachable_patterns)]
        other => unreachable!("SYCL device given a foreign handle {other:?}"),
    }
}
