//! SYCL through dpctl's C API (`libDPCTLSyclInterface.so`), loaded at run time through
//! bindgen's dynamic-loading bindings (`bindings.rs`, made by
//! `scripts/gen-sycl-bindings.sh`; CI regenerates them and fails on any difference).
//!
//! Every SYCL device with USM support becomes `sycl:N`; a device without USM (PoCL seen
//! through SYCL) is skipped with its reason. Memory is USM: device allocations by
//! default, shared and host allocations through [`SyclDevice::allocate_kind`]. Each
//! allocation kind is allocated only after checking the device's USM aspect: the C API
//! lets C++ exceptions escape, and one crossing into Rust aborts the process.
//!
//! Host access follows the USM pointer type: shared and host USM have host addresses;
//! device USM has one only on a CPU device (where the SYCL runtime serves it from host
//! memory), and `locus info` says so.

#[allow(clippy::all, clippy::pedantic, missing_docs, unsafe_op_in_unsafe_fn)]
#[rustfmt::skip]
pub mod bindings;
mod load;

use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bindings::*;

use crate::core::completion::{native_deps, Completion, Dependency, NativeWork};
use crate::core::device::{fill_by_writes, Device, DeviceInfo, Discovery, HostAccess};
use crate::core::error::{Error, Result};
use crate::core::launch::{bad_argument, cache_key, LaunchArg, LaunchSpec};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::Native;

pub use crate::core::native::UsmKind;

fn api() -> Result<&'static DpctlApi, String> {
    static API: OnceLock<Result<(DpctlApi, String), String>> = OnceLock::new();
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

pub(crate) fn discover() -> Result<Discovery, String> {
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
            let name = take_string(api, api.DPCTLDevice_GetName(device));
            let platform_ref = api.DPCTLDevice_GetPlatform(device);
            let platform = take_string(api, api.DPCTLPlatform_GetName(platform_ref));
            api.DPCTLPlatform_Delete(platform_ref);
            let usm = [
                api.DPCTLDevice_HasAspect(device, DPCTLSyclAspectType_usm_device_allocations),
                api.DPCTLDevice_HasAspect(device, DPCTLSyclAspectType_usm_shared_allocations),
                api.DPCTLDevice_HasAspect(device, DPCTLSyclAspectType_usm_host_allocations),
            ];
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
        ));
    }
    Ok(Discovery {
        devices,
        skipped,
        paths: vec![],
    })
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
    ) -> Result<SyclDevice, String> {
        // SAFETY: `device` is live (caller's contract); the queue and context returned
        // are owned by the new value and deleted in its `Drop`.
        unsafe {
            let queue = api.DPCTLQueue_CreateForDevice(
                device,
                None,
                DPCTLQueuePropertyType_DPCTL_IN_ORDER as i32,
            );
            if queue.is_null() {
                api.DPCTLDevice_Delete(device);
                return Err("DPCTLQueue_CreateForDevice failed".into());
            }
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
            notes.push(format!(
                "driver {}",
                take_string(api, api.DPCTLDevice_GetDriverVersion(device))
            ));
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
                    notes,
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
        let size = bytes.max(1) as size_t;
        // SAFETY: the aspect for `kind` was checked above, so the runtime does not throw;
        // the queue is live; NULL is returned on failure.
        let ptr = unsafe {
            match kind {
                UsmKind::Device => self.api.DPCTLmalloc_device(size, self.queue),
                UsmKind::Shared => self.api.DPCTLmalloc_shared(size, self.queue),
                UsmKind::Host => self.api.DPCTLmalloc_host(size, self.queue),
            }
        };
        if ptr.is_null() {
            return Err(Error::Backend {
                location: self.location,
                call: match kind {
                    UsmKind::Device => "DPCTLmalloc_device",
                    UsmKind::Shared => "DPCTLmalloc_shared",
                    UsmKind::Host => "DPCTLmalloc_host",
                },
                message: format!("returned NULL for {bytes} bytes"),
                hint: "the device is out of memory: free buffers or use a smaller size".into(),
            });
        }
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

    /// Waits for and deletes an event; a NULL event means the command failed.
    fn finish(&self, call: &'static str, event: DPCTLSyclEventRef) -> Result<()> {
        if event.is_null() {
            return Err(Error::Backend {
                location: self.location,
                call,
                message: "returned no event (the runtime printed the reason on stderr)".into(),
                hint: "check that both pointers are USM of this device's context or host memory"
                    .into(),
            });
        }
        // SAFETY: a live event returned by the queue, waited for and deleted once.
        unsafe {
            self.api.DPCTLEvent_Wait(event);
            self.api.DPCTLEvent_Delete(event);
        }
        Ok(())
    }

    fn memcpy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        // SAFETY: both ranges were bounds-checked by `Memory` (or are live host slices);
        // the copy is waited for before returning.
        let event = unsafe {
            self.api
                .DPCTLQueue_Memcpy(self.queue, dst.cast(), src.cast(), len as size_t)
        };
        self.finish("DPCTLQueue_Memcpy", event)
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

/// A SYCL event: the SYCL backend's own queued work (deleted when dropped).
pub struct SyclWork {
    api: &'static DpctlApi,
    event: DPCTLSyclEventRef,
}

// SAFETY: a SYCL event may be queried, waited on and deleted from any thread.
unsafe impl Send for SyclWork {}
// SAFETY: its `&self` methods only query or wait on the event, which SYCL allows from
// several threads at once.
unsafe impl Sync for SyclWork {}

impl SyclWork {
    /// The SYCL event (valid while this lives).
    pub fn event(&self) -> DPCTLSyclEventRef {
        self.event
    }
}

impl NativeWork for SyclWork {
    fn poll(&self) -> bool {
        // SAFETY: a live event owned by this value.
        let status = unsafe { self.api.DPCTLEvent_GetCommandExecutionStatus(self.event) };
        status == DPCTLSyclEventStatusType_DPCTL_COMPLETE
    }

    fn block(&self) -> Result<()> {
        // SAFETY: a live event owned by this value (deleted only at drop).
        unsafe { self.api.DPCTLEvent_Wait(self.event) };
        Ok(())
    }
}

impl Drop for SyclWork {
    fn drop(&mut self) {
        // SAFETY: a live event from a submission, deleted once, here. Dropped only after
        // the holding `Completion` waited (SYCL work is not queue-ordered).
        unsafe { self.api.DPCTLEvent_Delete(self.event) };
    }
}

fn usm_of(native: &Native) -> (*mut u8, UsmKind) {
    match native {
        Native::Sycl { ptr, kind } => (*ptr, *kind),
        #[allow(unreachable_patterns)]
        other => unreachable!("SYCL device given a foreign handle {other:?}"),
    }
}

impl Device for SyclDevice {
    /// Starts a copy natively on the SYCL queue when one side is SYCL USM of a device and the
    /// other is USM of the same device or plain host memory (`sycl::queue::memcpy` takes
    /// both); SYCL events among `after` become native dependencies, others are waited for
    /// first. `None`: not a SYCL copy.
    fn copy_async(
        &self,
        src: &Memory,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
        after: &[&dyn Dependency],
    ) -> Result<Option<Completion>> {
        let sycl_location = match (src.native(), dst.native()) {
            (Native::Sycl { .. }, Native::Sycl { .. }) if src.location() == dst.location() => {
                src.location()
            }
            (Native::Sycl { .. }, Native::Host { .. }) => src.location(),
            (Native::Host { .. }, Native::Sycl { .. }) => dst.location(),
            _ => return Ok(None),
        };
        if sycl_location != self.location || src.overlaps(src_offset, dst, dst_offset, len) {
            return Ok(None);
        }
        let address = |m: &Memory, offset: usize| -> *mut u8 {
            let base = match m.native() {
                Native::Sycl { ptr, .. } => *ptr,
                Native::Host { ptr } => *ptr,
                #[allow(unreachable_patterns)]
                _ => ptr::null_mut(),
            };
            base.wrapping_add(offset)
        };
        let sycl_event = |c: &Completion| c.work_as::<SyclWork>().map(|w| w.event);
        let Some(deps) = native_deps(after, sycl_event)? else {
            return Ok(None);
        };
        // SAFETY: both ranges were bounds-checked by the caller and do not overlap; the
        // pointers are USM of this queue's context or host memory; the dependency events
        // are alive (held by `after`) during the call, and the returned Event keeps both
        // memories alive until the copy is done.
        let event = unsafe {
            self.api.DPCTLQueue_MemcpyWithEvents(
                self.queue,
                address(dst, dst_offset).cast(),
                address(src, src_offset).cast(),
                len as size_t,
                if deps.is_empty() {
                    ptr::null()
                } else {
                    deps.as_ptr()
                },
                deps.len() as size_t,
            )
        };
        if event.is_null() {
            return Err(Error::Backend {
                location: sycl_location,
                call: "DPCTLQueue_MemcpyWithEvents",
                message: "returned no event (the runtime printed the reason on stderr)".into(),
                hint: "check that both pointers are USM of this device's context or host memory"
                    .into(),
            });
        }
        Ok(Some(Completion::new(SyclWork {
            api: self.api,
            event,
        })))
    }

    fn synchronize(&self) -> Result<()> {
        // SAFETY: the queue is owned by this device and alive.
        unsafe { self.api.DPCTLQueue_Wait(self.queue) };
        Ok(())
    }

    fn location(&self) -> Location {
        self.location
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        self.allocate_usm(bytes, UsmKind::Device)
    }

    unsafe fn free(&self, native: &Native, _bytes: usize) {
        // SAFETY: USM from this queue's context, not in use (caller's contract).
        unsafe {
            self.api
                .DPCTLfree_with_queue(usm_of(native).0.cast(), self.queue)
        };
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, native: &Native) -> HostAccess {
        match usm_of(native).1 {
            UsmKind::Shared | UsmKind::Host => HostAccess::Pointer,
            UsmKind::Device if self.cpu => HostAccess::Pointer,
            UsmKind::Device => HostAccess::None,
        }
    }

    fn host_access_default(&self) -> HostAccess {
        if self.cpu {
            HostAccess::Pointer
        } else {
            HostAccess::None
        }
    }

    fn host_access_reason(&self) -> String {
        if self.cpu {
            format!(
                "{} is a CPU device: its USM (device, shared, host) has host addresses",
                self.location
            )
        } else {
            format!(
                "{}: device USM is not host-visible (shared and host USM are)",
                self.location
            )
        }
    }

    fn executes_on_host(&self) -> bool {
        // With system USM, kernels dereference ordinary host pointers.
        self.system_usm
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        // SAFETY: offset bounds-checked by `Memory`.
        let target = unsafe { usm_of(dst).0.add(offset) };
        self.memcpy(target, src.as_ptr(), src.len())
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        // SAFETY: offset bounds-checked by `Memory`.
        let source = unsafe { usm_of(src).0.add(offset) };
        self.memcpy(dst.as_mut_ptr(), source, dst.len())
    }

    fn copy_within(
        &self,
        src: &Native,
        src_offset: usize,
        dst: &Native,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        // SAFETY: offsets bounds-checked by `Memory`.
        let (s, d) = unsafe { (usm_of(src).0.add(src_offset), usm_of(dst).0.add(dst_offset)) };
        self.memcpy(d, s, len)
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        // SAFETY: offset bounds-checked by `Memory`.
        let base = unsafe { usm_of(dst).0.add(offset) };
        let aligned = (base as usize).is_multiple_of(pattern.len());
        let count = (len / pattern.len()) as size_t;
        let q = self.queue;
        // SAFETY: `count` elements of the pattern's size fit the checked range, and the
        // pointer is aligned for them; the fill is waited for.
        let event = unsafe {
            match (pattern.len(), aligned) {
                (1, _) => self
                    .api
                    .DPCTLQueue_Memset(q, base.cast(), pattern[0], len as size_t),
                (2, true) => self.api.DPCTLQueue_Fill16(
                    q,
                    base.cast(),
                    u16::from_ne_bytes([pattern[0], pattern[1]]),
                    count,
                ),
                (4, true) => {
                    let v = u32::from_ne_bytes(pattern.try_into().unwrap_or_default());
                    self.api.DPCTLQueue_Fill32(q, base.cast(), v, count)
                }
                (8, true) => {
                    let v = u64::from_ne_bytes(pattern.try_into().unwrap_or_default());
                    self.api.DPCTLQueue_Fill64(q, base.cast(), v, count)
                }
                _ => return fill_by_writes(self, dst, offset, len, pattern),
            }
        };
        self.finish("DPCTLQueue_Fill", event)
    }

    fn map(&self, native: &Native, offset: usize, _len: usize, _write: bool) -> Result<*mut u8> {
        if self.host_access(native) == HostAccess::None {
            return Err(Error::NotHostAccessible {
                location: self.location,
            });
        }
        // SAFETY: bounds checked by the caller; the memory has a host address.
        Ok(unsafe { usm_of(native).0.add(offset) })
    }

    unsafe fn unmap(&self, _native: &Native, _ptr: *mut u8) -> Result<()> {
        Ok(())
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        let (ptr, kind) = usm_of(parent);
        Ok(Native::Sycl {
            // SAFETY: the sub-allocator keeps `offset + len` inside the parent.
            ptr: unsafe { ptr.add(offset) },
            kind,
        })
    }

    fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion> {
        let key = cache_key(spec.source, spec.entry);
        let kernel = {
            let mut cache = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
            match cache.get(&key) {
                Some(k) => Arc::clone(k),
                None => {
                    let k = Arc::new(self.build_opencl_kernel(spec.source, spec.entry)?);
                    cache.insert(key, Arc::clone(&k));
                    k
                }
            }
        };
        let mut converted = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            converted.push(match a {
                LaunchArg::Memory(m) => {
                    let usable = match m.native() {
                        Native::Sycl { ptr, .. } if m.location() == self.location => Some(*ptr),
                        // With system USM, plain host memory is used in place.
                        _ if self.system_usm && m.host_access() == HostAccess::Pointer => {
                            Some(m.device().map(m.native(), 0, m.len(), true)?)
                        }
                        _ => None,
                    };
                    KernelArg::Pointer(
                        usable
                            .ok_or_else(|| {
                                bad_argument(
                                    self.location,
                                    i,
                                    &format!(
                                        "memory at {} is not usable by this SYCL device",
                                        m.location()
                                    ),
                                )
                            })?
                            .cast(),
                    )
                }
                LaunchArg::F32(v) => KernelArg::F32(*v),
                LaunchArg::U32(v) => KernelArg::U32(*v),
                LaunchArg::I32(v) => KernelArg::I32(*v),
            });
        }
        // SAFETY: the codelet checked the arguments against the kernel's declared
        // parameters; the pointers are USM of this context or host memory usable through
        // system USM, alive until the completion is waited for.
        let event = unsafe { kernel.submit(self, &converted, spec.global, spec.dims)? };
        Ok(Completion::new(SyclWork {
            api: self.api,
            event,
        }))
    }
}

/// A kernel built from OpenCL C source through the SYCL runtime's kernel bundles.
pub struct SyclKernel {
    api: &'static DpctlApi,
    bundle: DPCTLSyclKernelBundleRef,
    kernel: DPCTLSyclKernelRef,
    location: Location,
}

// SAFETY: kernel objects are immutable once built and usable from any thread.
unsafe impl Send for SyclKernel {}
// SAFETY: as for `Send`.
unsafe impl Sync for SyclKernel {}

/// One kernel argument.
#[derive(Debug, Clone, Copy)]
pub enum KernelArg {
    /// A USM pointer.
    Pointer(*mut c_void),
    /// A 32-bit unsigned scalar.
    U32(u32),
    /// A 32-bit float scalar.
    F32(f32),
    /// A 32-bit signed scalar.
    I32(i32),
}

impl SyclDevice {
    /// Builds kernel `name` from OpenCL C `source` (`DPCTLKernelBundle_CreateFromOCLSource`).
    pub fn build_opencl_kernel(&self, source: &str, name: &str) -> Result<SyclKernel> {
        let fail = |call: &'static str| Error::Backend {
            location: self.location,
            call,
            message: "returned NULL".into(),
            hint: "check the kernel source and name (the runtime printed the build log on stderr)"
                .into(),
        };
        let source = std::ffi::CString::new(source).map_err(|e| Error::Invalid(e.to_string()))?;
        let cname = std::ffi::CString::new(name).map_err(|e| Error::Invalid(e.to_string()))?;
        // SAFETY: live context and device; NUL-terminated strings; results checked.
        unsafe {
            let bundle = self.api.DPCTLKernelBundle_CreateFromOCLSource(
                self.context,
                self.device,
                source.as_ptr(),
                c"".as_ptr(),
            );
            if bundle.is_null() {
                return Err(fail("DPCTLKernelBundle_CreateFromOCLSource"));
            }
            let kernel = self.api.DPCTLKernelBundle_GetKernel(bundle, cname.as_ptr());
            if kernel.is_null() {
                self.api.DPCTLKernelBundle_Delete(bundle);
                return Err(fail("DPCTLKernelBundle_GetKernel"));
            }
            Ok(SyclKernel {
                api: self.api,
                bundle,
                kernel,
                location: self.location,
            })
        }
    }
}

impl SyclKernel {
    /// Submits the kernel over a 1-D range of `global` work items and waits for it.
    ///
    /// # Safety
    /// The arguments match the kernel's parameters in number and type, every pointer is
    /// USM of `device`'s context (or host memory the device can use) large enough for
    /// what the kernel touches, and nothing else uses written memory meanwhile.
    pub unsafe fn launch_1d(
        &self,
        device: &SyclDevice,
        args: &[KernelArg],
        global: usize,
    ) -> Result<()> {
        // SAFETY: forwarded from the caller's contract.
        let event = unsafe { self.submit(device, args, [global, 1], 1)? };
        device.finish("DPCTLQueue_SubmitRange", event)
    }

    /// Submits over a 1-D or 2-D range without waiting; returns the event.
    ///
    /// # Safety
    /// As for [`SyclKernel::launch_1d`], and the memory stays valid until the event
    /// completes.
    unsafe fn submit(
        &self,
        device: &SyclDevice,
        args: &[KernelArg],
        global: [usize; 2],
        dims: usize,
    ) -> Result<DPCTLSyclEventRef> {
        let mut values: Vec<KernelArg> = args.to_vec();
        let mut pointers: Vec<*mut c_void> = Vec::with_capacity(values.len());
        let mut types = Vec::with_capacity(values.len());
        for value in values.iter_mut() {
            match value {
                KernelArg::Pointer(p) => {
                    pointers.push(*p);
                    types.push(DPCTLKernelArgType_DPCTL_VOID_PTR);
                }
                KernelArg::U32(v) => {
                    pointers.push((v as *mut u32).cast());
                    types.push(DPCTLKernelArgType_DPCTL_UINT32_T);
                }
                KernelArg::F32(v) => {
                    pointers.push((v as *mut f32).cast());
                    types.push(DPCTLKernelArgType_DPCTL_FLOAT32_T);
                }
                KernelArg::I32(v) => {
                    pointers.push((v as *mut i32).cast());
                    types.push(DPCTLKernelArgType_DPCTL_INT32_T);
                }
            }
        }
        // SYCL ranges list the slowest dimension first; OpenCL's get_global_id(0) is the
        // fastest. Reverse so that x (global[0]) stays OpenCL dimension 0.
        let range = if dims >= 2 {
            [global[1] as size_t, global[0] as size_t, 1]
        } else {
            [global[0] as size_t, 1, 1]
        };
        // SAFETY: arguments as documented (caller's contract): a USM argument is the
        // pointer itself, a scalar a pointer to its value; the runtime copies the
        // scalar values at submission, so `values` may go after this call.
        let event = unsafe {
            self.api.DPCTLQueue_SubmitRange(
                self.kernel,
                device.queue,
                pointers.as_mut_ptr(),
                types.as_ptr(),
                pointers.len() as size_t,
                range.as_ptr(),
                dims.clamp(1, 2) as size_t,
                std::ptr::null(),
                0,
            )
        };
        if event.is_null() {
            return Err(Error::Backend {
                location: self.location,
                call: "DPCTLQueue_SubmitRange",
                message: "returned no event (the runtime printed the reason on stderr)".into(),
                hint: "check the kernel's arguments against its parameters".into(),
            });
        }
        Ok(event)
    }
}

impl Drop for SyclKernel {
    fn drop(&mut self) {
        // SAFETY: owned references, deleted once.
        unsafe {
            self.api.DPCTLKernel_Delete(self.kernel);
            self.api.DPCTLKernelBundle_Delete(self.bundle);
        }
    }
}
