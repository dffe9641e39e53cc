//! What CUDA and HIP share: device, pinned and managed memory, one stream per device,
//! host transfers that stage pageable memory through pinned chunks with the two legs
//! overlapping, peer copies where peer access is enabled, transfers to every other
//! technology staged through pinned host memory, and kernels compiled at run time.
//!
//! The vendor calls sit behind [`GpuApi`]; `cuda` implements it with cudarc (driver
//! API and NVRTC), `hip` with bindgen bindings of the HIP runtime and hiprtc. Both are
//! loaded at run time. No GPU was available where this was written: everything here is
//! built and probed, and the conformance suite runs it wherever a GPU exists
//! (`LOCUS_REQUIRE=host,cuda scripts/test.sh`).

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::ffi::c_void;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::core::batch_copy::DeviceCopy;
use crate::core::capability::{
    launch_after_waiting, CopyBatches, HostMemoryRegistration, IpcHandles, Kernels, MemoryKinds,
    MemoryReport, NativeCalls, Placement, QueueAdoption, QueuedCopies,
};
use crate::core::completion::{native_deps, Completion, Dependencies, NativeWork};
use crate::core::copy_span::CopySpan;
use crate::core::device::{
    fill_by_writes, unsupported_kind, Device, DeviceInfo, Direction, HostAccess, HostReach,
    PhysicalDevice,
};
use crate::core::discovery::{Discovery, Unavailable};
use crate::core::error::{Error, Result};
use crate::core::launch::{bad_argument, cache_key, LaunchArg, LaunchSpec};
use crate::core::location::{Location, Technology};
use crate::core::memory::Memory;
use crate::core::native::{MemoryKind, Native};
use crate::core::pointer_queries::{DriverAllocation, PointerQueries};
use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};

pub use crate::core::native::GpuMemory;

mod adopted;
mod api;
mod batch_staging;
mod current;
mod device;
mod ipc;
mod kernels;
mod own_pools;
mod paths;
mod rect;
pub(crate) mod work;

pub use api::{BatchFailure, GpuApi, GpuPointer, GpuRect, RectEnd};
pub use current::Entered;
pub(crate) use own_pools::OwnPools;
pub(crate) use paths::paths;
#[cfg(all(test, feature = "cuda"))]
use paths::through_pinned;

#[cfg(test)]
pub(crate) mod rect_suite_tests;
#[cfg(test)]
pub(crate) mod shipped_kernels_tests;
#[cfg(test)]
// The model serves both vendors' simulators: with one of them built, part is unused.
#[cfg_attr(
    not(all(feature = "cuda", feature = "hip")),
    allow(dead_code, unused_imports)
)]
pub(crate) mod sim_model;
#[cfg(all(test, feature = "cuda"))]
mod simulated;

/// Bytes per pinned staging chunk.
pub(crate) const STAGING: usize = 8 << 20;

/// A failed CUDA or HIP call, as a typed value: the call, the driver's status code
/// (cudarc's `DriverError(CUresult)`, HIP's `hipError_t`) and its name. The device turns
/// it into a locus error: [`Error::OutOfMemory`] for the driver's out-of-memory code,
/// [`Error::Backend`] otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError {
    /// The vendor call (`cuMemAlloc`, `hipMemcpyAsync`, ...).
    pub call: &'static str,
    /// Its status code (`CUresult`, `hipError_t`; -1 for a failure outside the driver,
    /// e.g. a kernel that does not compile).
    pub code: i32,
    /// The code's name and text.
    pub name: String,
    /// True for the driver's out-of-memory code.
    pub out_of_memory: bool,
}

impl GpuError {
    /// A failure outside the driver's status codes (a compiler's log, a bad name).
    pub fn other(call: &'static str, text: impl Into<String>) -> GpuError {
        GpuError {
            call,
            code: -1,
            name: text.into(),
            out_of_memory: false,
        }
    }
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} returned {} ({})", self.call, self.code, self.name)
    }
}

/// What a GPU says about itself.
#[derive(Debug, Clone)]
pub(crate) struct GpuFacts {
    pub name: String,
    pub memory_bytes: u64,
    pub concurrent_managed_access: bool,
    /// The driver has stream-ordered memory pools (`cuMemAllocAsync`, `hipMallocAsync`).
    pub stream_ordered_pools: bool,
    /// The device's kernels use any host memory in place, `malloc`'s included (HMM or
    /// ATS: `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`,
    /// `hipDeviceAttributePageableMemoryAccess`).
    pub pageable_memory_access: bool,
    /// The driver's or runtime's version, as `DeviceInfo::version` shows it.
    pub version: String,
    /// The device's PCI address (the driver's PCI domain, bus and device attributes).
    pub pci: Option<PhysicalDevice>,
    pub notes: Vec<String>,
}

/// One CUDA or HIP device.
pub struct GpuDevice<A: GpuApi> {
    api: Arc<A>,
    location: Location,
    ordinal: u32,
    info: DeviceInfo,
    concurrent_managed: bool,
    stream_ordered_pools: bool,
    pageable_access: bool,
    peers: Mutex<HashSet<u32>>,
    staging: Mutex<Vec<(u64, u64)>>,
    functions: Mutex<HashMap<u64, std::result::Result<u64, GpuError>>>,
    live: AtomicUsize,
    /// Pageable uploads up to this size are the driver's own call
    /// ([`GpuApi::DRIVER_WRITES_PAGEABLE_UP_TO`]).
    direct_upload_max: usize,
}

/// [`GpuApi::DRIVER_WRITES_PAGEABLE_UP_TO`], or `LOCUS_GPU_DIRECT_UPLOAD_MAX` where set
/// (a size: `4MiB`, `65536`); a value that is not a size is reported and ignored.
fn direct_upload_max<A: GpuApi>() -> usize {
    let asked = crate::core::config::size("LOCUS_GPU_DIRECT_UPLOAD_MAX");
    crate::core::config::or_warn(asked).map_or(A::DRIVER_WRITES_PAGEABLE_UP_TO, |n| {
        usize::try_from(n).unwrap_or(usize::MAX)
    })
}

impl<A: GpuApi> fmt::Debug for GpuDevice<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GpuDevice({}, {})", self.location, self.info.name)
    }
}

impl<A: GpuApi> GpuDevice<A> {
    pub(crate) fn new(api: Arc<A>, ordinal: u32, facts: GpuFacts) -> GpuDevice<A> {
        let location = A::TECHNOLOGY.location(ordinal);
        let mut notes = facts.notes;
        notes.push(format!(
            "managed memory is {} from the host in place (concurrent managed access: {})",
            if facts.concurrent_managed_access {
                "used"
            } else {
                "not used"
            },
            facts.concurrent_managed_access
        ));
        notes.push(if facts.pageable_memory_access {
            "pageable memory access (HMM / ATS): kernels use host memory in place, malloc's included".into()
        } else {
            "no pageable memory access: host memory is copied for kernels (pinned memory is mapped)".into()
        });
        notes.push(if facts.stream_ordered_pools {
            "the driver's stream-ordered pool is offered (memory kind stream-ordered)".into()
        } else {
            "the driver has no stream-ordered memory pools (no stream-ordered kind)".into()
        });
        notes.push(
            "host memory registers in place (Memory::from_vec_registered): copies from it go by DMA"
                .into(),
        );
        GpuDevice {
            api,
            location,
            ordinal,
            info: DeviceInfo {
                name: facts.name,
                platform: A::TECHNOLOGY.name().to_string(),
                kind: "gpu".into(),
                memory_bytes: Some(facts.memory_bytes),
                max_allocation: facts.memory_bytes,
                shares_host_memory: false,
                version: Some(facts.version),
                notes,
                physical: facts.pci,
            },
            concurrent_managed: facts.concurrent_managed_access,
            stream_ordered_pools: facts.stream_ordered_pools,
            pageable_access: facts.pageable_memory_access,
            peers: Mutex::new(HashSet::new()),
            staging: Mutex::new(Vec::new()),
            functions: Mutex::new(HashMap::new()),
            live: AtomicUsize::new(0),
            direct_upload_max: direct_upload_max::<A>(),
        }
    }

    /// Enables peer access to `other` where the driver allows; remembered for routes.
    pub(crate) fn try_enable_peer(&self, other: &GpuDevice<A>) -> bool {
        let ok = self.api.enable_peer(self.ordinal, other.ordinal);
        if ok {
            self.peers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(other.ordinal);
        }
        ok
    }

    /// True when peer access from this device to `ordinal` is enabled.
    pub fn peer_enabled(&self, ordinal: u32) -> bool {
        self.peers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&ordinal)
    }

    /// The driver calls this device is written against.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn api(&self) -> &A {
        &self.api
    }

    /// The driver's ordinal of this device.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn ordinal(&self) -> u32 {
        self.ordinal
    }

    /// The locus error for a failed driver call made while doing `what`.
    pub(crate) fn fail(&self, what: &'static str, e: GpuError) -> Error {
        if e.out_of_memory {
            return Error::OutOfMemory {
                location: self.location,
                requested: 0,
                by: e.call.into(),
                reason: e.to_string(),
            };
        }
        Error::Backend {
            location: self.location,
            call: e.call,
            message: format!("{what}: {e}"),
            hint: "see the driver's message".into(),
        }
    }

    /// Makes this device current on the calling thread until the returned value is
    /// dropped, then the caller's device again.
    fn activate(&self) -> Result<Entered<'_, A>> {
        self.api
            .enter(self.ordinal)
            .map_err(|e| self.fail("set device", e))
    }

    /// This device's stream as DLPack's `stream=` integer: the stream a producer must
    /// order its work before when it hands memory to locus.
    pub fn consumer_stream(&self) -> u64 {
        self.api.stream_handle(self.ordinal)
    }

    /// Waits for a stream another library owns on this device (the CUDA array
    /// interface's `stream`): its work on the memory is done when this returns.
    ///
    /// # Safety
    /// `stream` is a live stream of this device (or the legacy / per-thread default
    /// stream handle, 1 or 2), as the producer vouches.
    pub unsafe fn synchronize_foreign_stream(&self, stream: u64) -> Result<()> {
        let _current = self.activate()?;
        // SAFETY: per the caller's contract; the device is current.
        unsafe { self.api.synchronize_stream(stream) }
            .map_err(|e| self.fail("synchronize the producer's stream", e))
    }

    /// The ordinal of the device of this technology that owns `ptr`.
    pub fn device_of_pointer(&self, ptr: u64) -> Result<u32> {
        let _current = self.activate()?;
        self.api
            .pointer_device(ptr)
            .map_err(|e| self.fail("ask a pointer's device", e))
    }

    /// Allocates `bytes` of `kind` as a [`Memory`] of this device.
    pub fn allocate_kind(self: &Arc<Self>, bytes: usize, kind: GpuMemory) -> Result<Memory> {
        let native = self.alloc(kind, bytes)?;
        let device: Arc<dyn Device> = self.clone();
        Ok(Memory::from_native(device, native, bytes))
    }

    fn alloc(&self, kind: GpuMemory, bytes: usize) -> Result<Native> {
        let _current = self.activate()?;
        // SAFETY: the device is current.
        let ptr = unsafe { self.api.alloc(kind, bytes.max(1)) }
            .map_err(|e| self.fail("allocate", e).asking_for(bytes))?;
        self.live.fetch_add(1, Ordering::Relaxed);
        Ok(A::native(ptr, kind))
    }

    fn ptr(&self, native: &Native) -> Result<(u64, GpuMemory)> {
        A::unpack(native).ok_or_else(|| {
            Error::Invalid(format!(
                "{}: not a {} allocation",
                self.location,
                A::TECHNOLOGY
            ))
        })
    }

    /// Runs `f` with the two pinned staging chunks of this device and their events. When
    /// `f` fails part-way, the stream is synchronised before the chunks are given back:
    /// a copy it queued may still be reading or writing them.
    fn with_staging<R>(&self, f: impl FnOnce(&[u64], &[u64]) -> Result<R>) -> Result<R> {
        let mut staging = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        while staging.len() < 2 {
            // SAFETY: the device is current (callers activate it first).
            let p = unsafe { self.api.alloc(GpuMemory::Pinned, STAGING) }
                .map_err(|e| self.fail("allocate pinned staging", e))?;
            let e = match self.api.event_create() {
                Ok(e) => e,
                Err(e) => {
                    // SAFETY: allocated just above as pinned memory; nothing uses it.
                    unsafe { self.api.free(GpuMemory::Pinned, p) };
                    return Err(self.fail("create event", e));
                }
            };
            staging.push((p, e));
        }
        let chunks = [staging[0].0, staging[1].0];
        let events = [staging[0].1, staging[1].1];
        let result = f(&chunks, &events);
        if result.is_err() {
            // Best effort: the first error is the one reported.
            if let Ok(_current) = self.activate() {
                let _ = self.api.synchronize();
            }
        }
        result
    }

    /// True when host address `host` is memory the driver knows (a device's pinned or
    /// managed memory, locus's own pinned memory among it), which its copies read and
    /// write directly: staging it again through pinned chunks would copy twice. Asked,
    /// with the device current, only where a copy would otherwise be staged.
    fn known_to_driver(&self, host: *const u8) -> bool {
        self.api.pointer_device(host as u64).is_ok()
    }

    /// Host -> device. Pinned sources go straight over DMA; pageable ones are staged
    /// through two pinned chunks: the CPU fills one while the other's asynchronous copy
    /// runs, each copy followed by an event that the chunk's next refill waits on.
    fn upload(&self, dst: u64, src: &[u8], src_pinned: bool) -> Result<()> {
        let _current = self.activate()?;
        if src_pinned || src.len() <= 64 << 10 || self.known_to_driver(src.as_ptr()) {
            // SAFETY: `dst` holds `src.len()` bytes (bounds-checked by `Memory`).
            return unsafe { self.api.to_device(dst, src.as_ptr(), src.len(), true) }
                .map_err(|e| self.fail("copy to device", e));
        }
        if src.len() <= self.direct_upload_max {
            // SAFETY: as above.
            return unsafe { self.api.to_device_by_driver(dst, src.as_ptr(), src.len()) }
                .map_err(|e| self.fail("copy to device", e));
        }
        self.with_staging(|chunks, events| {
            for (i, piece) in src.chunks(STAGING).enumerate() {
                let (pinned, event) = (chunks[i % 2] as *mut u8, events[i % 2]);
                if i >= 2 {
                    // SAFETY: the event was recorded after this chunk's previous copy.
                    unsafe { self.api.event_wait(event) }
                        .map_err(|e| self.fail("event wait", e))?;
                }
                // SAFETY: the pinned chunk holds STAGING bytes and no copy reads it now.
                unsafe { std::ptr::copy_nonoverlapping(piece.as_ptr(), pinned, piece.len()) };
                // SAFETY: asynchronous copy from the pinned chunk; its event is recorded
                // right after and waited on before the chunk is refilled.
                unsafe {
                    self.api
                        .to_device(dst + (i * STAGING) as u64, pinned, piece.len(), false)
                        .and_then(|()| self.api.event_record(event))
                }
                .map_err(|e| self.fail("copy to device", e))?;
            }
            self.api
                .synchronize()
                .map_err(|e| self.fail("synchronize", e))
        })
    }

    /// Device -> host, staged like [`GpuDevice::upload`] for pageable destinations: the
    /// copy into one pinned chunk runs while the CPU empties the other; or the driver's
    /// own synchronous copy where it is faster ([`GpuApi::DRIVER_READS_PAGEABLE`]).
    fn download(&self, dst: &mut [u8], src: u64, dst_pinned: bool) -> Result<()> {
        let _current = self.activate()?;
        if dst_pinned
            || dst.len() <= 64 << 10
            || A::DRIVER_READS_PAGEABLE
            || self.known_to_driver(dst.as_ptr())
        {
            // SAFETY: `src` holds `dst.len()` bytes (bounds-checked by `Memory`).
            return unsafe { self.api.to_host(dst.as_mut_ptr(), src, dst.len(), true) }
                .map_err(|e| self.fail("copy to host", e));
        }
        self.with_staging(|chunks, events| {
            let pieces: Vec<(usize, usize)> = (0..dst.len())
                .step_by(STAGING)
                .map(|o| (o, STAGING.min(dst.len() - o)))
                .collect();
            let start = |k: usize| -> Result<()> {
                let (o, n) = pieces[k];
                // SAFETY: asynchronous copy into a pinned chunk nothing else uses, then
                // an event that completes with it.
                unsafe {
                    self.api
                        .to_host(chunks[k % 2] as *mut u8, src + o as u64, n, false)
                        .and_then(|()| self.api.event_record(events[k % 2]))
                }
                .map_err(|e| self.fail("copy to host", e))
            };
            start(0)?;
            for k in 0..pieces.len() {
                if k + 1 < pieces.len() {
                    start(k + 1)?;
                }
                // SAFETY: the event of chunk k was recorded after its copy.
                unsafe { self.api.event_wait(events[k % 2]) }
                    .map_err(|e| self.fail("event wait", e))?;
                let (o, n) = pieces[k];
                // SAFETY: chunk k is complete; the copy in flight writes the other chunk.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        chunks[k % 2] as *const u8,
                        dst[o..].as_mut_ptr(),
                        n,
                    )
                };
            }
            Ok(())
        })
    }
}

/// The devices that opened, under their driver ordinals, and why the others did not.
pub(crate) type Opened<T> = (Vec<(u32, T)>, Vec<String>);

/// Opens devices `0..count` of `technology` with `open`: a device that refuses (in
/// exclusive-process mode and in use elsewhere, a failing context or stream) is skipped
/// with its reason, and the others stay usable under the driver's own ordinals. Fails
/// only when no device opens, with every reason.
pub(crate) fn open_each<T>(
    technology: &str,
    count: i32,
    mut open: impl FnMut(i32) -> Result<T, Unavailable>,
) -> Result<Opened<T>, Unavailable> {
    let mut opened = Vec::new();
    let mut skipped = Vec::new();
    for i in 0..count.max(0) {
        match open(i) {
            Ok(device) => opened.push((i as u32, device)),
            Err(why) => skipped.push(format!("{technology} device {i} skipped: {why}")),
        }
    }
    if opened.is_empty() {
        return Err(format!(
            "no {technology} device could be opened: {}",
            skipped.join("; ")
        )
        .into());
    }
    Ok((opened, skipped))
}

/// What opening a technology's devices found: each opened ordinal with its facts, and
/// the reasons for those skipped.
pub(crate) type Found = (Vec<(u32, GpuFacts)>, Vec<String>);

/// What discovery found: a device per opened ordinal over the shared `api`, peer access
/// enabled between them where the driver allows, and the technology's copy paths.
pub(crate) fn discovery<A: GpuApi>(
    api: Arc<A>,
    facts: Vec<(u32, GpuFacts)>,
    skipped: Vec<String>,
) -> Discovery {
    let devices: Vec<Arc<GpuDevice<A>>> = facts
        .into_iter()
        .map(|(i, f)| Arc::new(GpuDevice::new(Arc::clone(&api), i, f)))
        .collect();
    enable_peers(&devices);
    Discovery {
        devices: devices.into_iter().map(|d| d as Arc<dyn Device>).collect(),
        skipped,
        paths: paths::<A>(),
    }
}

/// Enables peer access between every pair of `devices` where the driver allows.
pub(crate) fn enable_peers<A: GpuApi>(devices: &[Arc<GpuDevice<A>>]) {
    for a in devices {
        for b in devices {
            if a.ordinal != b.ordinal {
                a.try_enable_peer(b);
            }
        }
    }
}

#[cfg(all(test, feature = "cuda"))]
mod tests;

#[cfg(all(test, feature = "cuda"))]
mod driver_rules_tests;

#[cfg(all(test, feature = "cuda"))]
mod adopted_tests;

#[cfg(all(test, feature = "cuda"))]
mod compile_tests;

#[cfg(all(test, feature = "cuda"))]
mod peer_tests;

#[cfg(all(test, feature = "cuda"))]
mod context_tests;

#[cfg(all(test, feature = "cuda"))]
mod pageable_tests;

#[cfg(all(test, feature = "cuda"))]
mod batch_tests;
#[cfg(all(test, feature = "cuda"))]
mod ipc_tests;
#[cfg(test)]
pub(crate) mod pointer_query_checks;
#[cfg(all(test, feature = "cuda"))]
mod registration_tests;
#[cfg(all(test, feature = "cuda"))]
mod teardown_tests;
