//! One module per technology, all behind the [`Device`] trait.
//!
//! # Why a trait object
//! Backends are discovered at run time: which devices exist, and how many, is only known
//! once the program runs on a machine. The registry therefore holds
//! `Arc<dyn Device>`, one per discovered device, and the backend-neutral code (transfers,
//! buffers, accessibility) only ever talks to that trait. The memory itself is a
//! [`Native`] enum, not a `dyn Any`, so that users can match on it and hand the raw
//! handle to their own kernels (a `cl_mem`, a `wgpu::Buffer`, an OpenMP device pointer).
//!
//! Everything `unsafe` in the crate lives below this module: raw allocation calls, raw
//! pointers, and the [`HostMapping`] that turns a mapped pointer into a slice.

use std::fmt;

use crate::error::Result;
use crate::location::{Location, Technology};

#[cfg(any(feature = "cuda", feature = "hip"))]
pub mod gpu;
pub mod host;
mod launch;
mod memory;
pub(crate) mod probe;
pub mod raw;

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "hip")]
pub mod hip;
#[cfg(feature = "opencl")]
pub mod opencl;
#[cfg(feature = "openmp")]
pub mod openmp;
#[cfg(feature = "sycl")]
pub mod sycl;
#[cfg(feature = "webgpu")]
pub mod webgpu;

pub use launch::{Completion, LaunchArg, LaunchSpec};
pub use memory::{HostMapping, Memory};

/// The alignment every backend guarantees for the start of an allocation.
pub const ALIGNMENT: usize = 64;

/// What a device can say about itself.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    /// Device name as the runtime reports it.
    pub name: String,
    /// Platform, driver or adapter backend (e.g. "Portable Computing Language", "Vulkan").
    pub platform: String,
    /// Kind of device ("cpu", "gpu", "host", ...).
    pub kind: String,
    /// Total memory in bytes, where the runtime reports it.
    pub memory_bytes: Option<u64>,
    /// Largest single allocation in bytes.
    pub max_allocation: u64,
    /// True when the device uses the host's memory (a CPU device, an integrated GPU, or
    /// the OpenMP initial device).
    pub shares_host_memory: bool,
    /// Free-form facts worth printing (`locus info` shows them).
    pub notes: Vec<String>,
}

/// How host code can reach an allocation without copying it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostAccess {
    /// The allocation's address is a host address: plain loads and stores work.
    Pointer,
    /// Mapping the allocation gives a host pointer to the same memory (no copy), e.g.
    /// an OpenCL buffer on a host-unified CPU device.
    Mapped,
    /// The host cannot reach it in place; a copy is needed.
    None,
}

/// The native handle of one allocation, per technology.
///
/// Pointers here are raw: they stay valid while the owning [`Memory`] lives.
#[non_exhaustive]
pub enum Native {
    /// Host memory.
    Host {
        /// Start of the allocation.
        ptr: *mut u8,
    },
    /// Memory from `omp_target_alloc`.
    #[cfg(feature = "openmp")]
    OpenMp {
        /// The device pointer (a host address on the initial device).
        ptr: *mut u8,
        /// The OpenMP device number it belongs to (pass it to `device(...)` clauses).
        device: i32,
    },
    /// A range of an OpenCL buffer object.
    #[cfg(feature = "opencl")]
    OpenCl {
        /// The `cl_mem` handle.
        mem: opencl3::types::cl_mem,
        /// Where this allocation starts inside it (non-zero for pool sub-allocations:
        /// OpenCL calls take it as their offset; kernels get a sub-buffer of the range).
        offset: usize,
    },
    /// CUDA memory (device, pinned host or managed).
    #[cfg(feature = "cuda")]
    Cuda {
        /// The device address (a host address too for pinned and managed memory).
        ptr: u64,
        /// Which kind of allocation.
        kind: gpu::GpuMemory,
    },
    /// HIP memory (device, pinned host or managed).
    #[cfg(feature = "hip")]
    Hip {
        /// The device address (a host address too for pinned and managed memory).
        ptr: u64,
        /// Which kind of allocation.
        kind: gpu::GpuMemory,
    },
    /// SYCL unified shared memory.
    #[cfg(feature = "sycl")]
    Sycl {
        /// The USM pointer.
        ptr: *mut u8,
        /// Device, shared or host USM.
        kind: sycl::UsmKind,
    },
    /// A range of a wgpu storage buffer (usage STORAGE | COPY_SRC | COPY_DST).
    #[cfg(feature = "webgpu")]
    WebGpu {
        /// The buffer; its size is rounded up to a multiple of 4 bytes. Shared (one
        /// reference count) by the pool's sub-allocations of it.
        buffer: std::sync::Arc<wgpu::Buffer>,
        /// Where this allocation starts inside it (non-zero for pool sub-allocations;
        /// a multiple of the storage-buffer offset alignment).
        offset: u64,
    },
}

// SAFETY: the raw pointers in `Native` are plain addresses of memory owned by one
// `Memory`; every runtime used here (libgomp, OpenCL 1.2+, wgpu) allows its handles to be
// used from any thread. Synchronisation of the *contents* is the job of the borrow rules
// on `Buffer` and of the blocking calls in each backend.
unsafe impl Send for Native {}
// SAFETY: see `Send` above; no method mutates the handle itself.
unsafe impl Sync for Native {}

impl Native {
    /// A second handle to the same memory (no reference is taken: the owner of the
    /// original keeps the memory alive; a wgpu buffer handle is cloned). For bindings
    /// that adopt memory locus exported ([`crate::Memory::adopt`] is the unsafe step).
    pub fn duplicate(&self) -> Native {
        match self {
            Native::Host { ptr } => Native::Host { ptr: *ptr },
            #[cfg(feature = "cuda")]
            Native::Cuda { ptr, kind } => Native::Cuda {
                ptr: *ptr,
                kind: *kind,
            },
            #[cfg(feature = "hip")]
            Native::Hip { ptr, kind } => Native::Hip {
                ptr: *ptr,
                kind: *kind,
            },
            #[cfg(feature = "openmp")]
            Native::OpenMp { ptr, device } => Native::OpenMp {
                ptr: *ptr,
                device: *device,
            },
            #[cfg(feature = "opencl")]
            Native::OpenCl { mem, offset } => Native::OpenCl {
                mem: *mem,
                offset: *offset,
            },
            #[cfg(feature = "sycl")]
            Native::Sycl { ptr, kind } => Native::Sycl {
                ptr: *ptr,
                kind: *kind,
            },
            #[cfg(feature = "webgpu")]
            Native::WebGpu { buffer, offset } => Native::WebGpu {
                buffer: buffer.clone(),
                offset: *offset,
            },
        }
    }

    /// The technology this handle belongs to.
    pub fn technology(&self) -> Technology {
        match self {
            Native::Host { .. } => Technology::Host,
            #[cfg(feature = "openmp")]
            Native::OpenMp { .. } => Technology::OpenMp,
            #[cfg(feature = "opencl")]
            Native::OpenCl { .. } => Technology::OpenCl,
            #[cfg(feature = "cuda")]
            Native::Cuda { .. } => Technology::Cuda,
            #[cfg(feature = "hip")]
            Native::Hip { .. } => Technology::Hip,
            #[cfg(feature = "sycl")]
            Native::Sycl { .. } => Technology::Sycl,
            #[cfg(feature = "webgpu")]
            Native::WebGpu { .. } => Technology::WebGpu,
        }
    }
}

impl fmt::Debug for Native {
    /// The handle's value (the address or object it names), so that two handles to the
    /// same memory print the same.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Native::Host { ptr } => write!(f, "Host({ptr:p})"),
            #[cfg(feature = "openmp")]
            Native::OpenMp { ptr, device } => write!(f, "OpenMp({ptr:p}, device {device})"),
            #[cfg(feature = "opencl")]
            Native::OpenCl { mem, offset } => write!(f, "OpenCl(cl_mem {mem:p} + {offset})"),
            #[cfg(feature = "cuda")]
            Native::Cuda { ptr, kind } => write!(f, "Cuda({ptr:#x}, {kind:?})"),
            #[cfg(feature = "hip")]
            Native::Hip { ptr, kind } => write!(f, "Hip({ptr:#x}, {kind:?})"),
            #[cfg(feature = "sycl")]
            Native::Sycl { ptr, kind } => write!(f, "Sycl({ptr:p}, {kind:?} USM)"),
            #[cfg(feature = "webgpu")]
            Native::WebGpu { ref buffer, offset } => write!(
                f,
                "WebGpu(buffer {:p} of {} bytes + {offset})",
                std::sync::Arc::as_ptr(buffer),
                buffer.size()
            ),
        }
    }
}

/// For a backend's asynchronous copy: the native form of each dependency in `after`
/// the backend can take natively (`native` gives it), once every other dependency is
/// done (a failed one is returned as the error); `None` while one of those still runs:
/// the copy then goes to a worker thread that waits for it, so the caller never blocks
/// on another technology's work (nor does the device's own queue).
#[allow(dead_code)] // used by the backends with native asynchronous copies (features)
pub(crate) fn native_deps<T>(
    after: &[crate::Event],
    native: impl Fn(&crate::Event) -> Option<T>,
) -> crate::error::Result<Option<Vec<T>>> {
    let mut deps = Vec::new();
    for e in after {
        match native(e) {
            Some(dep) => deps.push(dep),
            None if !e.is_complete() => return Ok(None),
            None => e.wait()?,
        }
    }
    Ok(Some(deps))
}

/// One device of one technology. Backends implement it; the rest of the crate uses it.
///
/// Offsets and lengths are in bytes and have been bounds-checked by [`Memory`] before a
/// backend sees them.
pub trait Device: Send + Sync + fmt::Debug {
    /// Where this device's memory lives.
    fn location(&self) -> Location;
    /// Name, sizes and memory facts.
    fn info(&self) -> &DeviceInfo;
    /// The concrete backend type, for technology-specific access (its context, queue,
    /// adapter): see e.g. [`opencl::device`].
    fn as_any(&self) -> &dyn std::any::Any;
    /// Allocates `bytes` (maybe 0) aligned to at least [`ALIGNMENT`].
    fn allocate(&self, bytes: usize) -> Result<Native>;
    /// Frees an allocation.
    ///
    /// # Safety
    /// `native` was returned by `allocate(bytes)` of this device, is freed once, and no
    /// operation on it is pending.
    unsafe fn free(&self, native: &Native, bytes: usize);
    /// How host code can reach this allocation in place.
    fn host_access(&self, native: &Native) -> HostAccess;
    /// How host code reaches this device's default allocations (for location-level
    /// tables; [`Device::host_access`] answers per allocation).
    fn host_access_default(&self) -> HostAccess;
    /// One line on why host code can (or cannot) reach this device's default memory in
    /// place; route and accessibility reasons quote it.
    fn host_access_reason(&self) -> String {
        let loc = self.location();
        match self.host_access_default() {
            HostAccess::Pointer => format!("{loc} memory has a host address"),
            HostAccess::Mapped => {
                format!("{loc} shares memory with the host: mapped in place, no copy")
            }
            HostAccess::None => format!("{loc} memory is not host-visible"),
        }
    }
    /// The accessor's own say on memory owned by `owner` (e.g. a GPU with peer access
    /// enabled to the owner), before the generic rules; `None` leaves it to them.
    fn accessibility_of(&self, _owner: &dyn Device, _host: HostAccess) -> Option<(bool, String)> {
        None
    }
    /// True when code running at this location dereferences plain host pointers (the
    /// host itself, the OpenMP initial device, a SYCL device with system USM).
    fn executes_on_host(&self) -> bool;
    /// Copies `src` into the allocation at `offset` (host -> device).
    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()>;
    /// Copies from the allocation at `offset` into `dst` (device -> host).
    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()>;
    /// Copies between two allocations of this device (ranges do not overlap).
    fn copy_within(
        &self,
        src: &Native,
        src_offset: usize,
        dst: &Native,
        dst_offset: usize,
        len: usize,
    ) -> Result<()>;
    /// Fills `len` bytes at `offset` with `pattern` repeated (`len` is a multiple of the
    /// pattern length). The default writes the pattern from host chunks.
    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        fill_by_writes(self, dst, offset, len, pattern)
    }
    /// Maps `len` bytes at `offset` for host access and returns the host address.
    /// Only called when [`Device::host_access`] is not [`HostAccess::None`].
    fn map(&self, native: &Native, offset: usize, len: usize, write: bool) -> Result<*mut u8>;
    /// Ends a mapping made by [`Device::map`].
    ///
    /// # Safety
    /// `ptr` came from `map` on the same allocation and is not used afterwards.
    unsafe fn unmap(&self, native: &Native, ptr: *mut u8) -> Result<()>;
    /// How many allocations of this device are alive (made by `allocate`, not freed).
    fn live_allocations(&self) -> usize;
    /// A handle to `len` bytes at `offset` inside `parent`, for sub-allocators (a
    /// pointer plus offset, or a buffer plus offset). The default: this technology
    /// cannot address part of an allocation.
    fn sub_native(&self, _parent: &Native, _offset: usize, _len: usize) -> Result<Native> {
        Err(crate::error::Error::Invalid(format!(
            "{}: sub-allocation is not supported for this technology yet; use the upstream resource",
            self.location()
        )))
    }
    /// Releases a handle made by [`Device::sub_native`]; the parent allocation stays.
    ///
    /// # Safety
    /// `native` came from `sub_native` of this device and is no longer used.
    unsafe fn release_sub(&self, _native: &Native) {}
    /// The alignment, in bytes, that sub-allocations inside one allocation must keep.
    fn sub_alignment(&self) -> usize {
        ALIGNMENT
    }
    /// Starts `len` bytes (`len` > 0) from `src` to `dst` on this device's own queue
    /// when it can (one side at least is this device's memory; ranges bounds-checked),
    /// after `after`; `None` leaves the copy to a worker thread. The default: `None`.
    fn copy_async(
        &self,
        _src: &std::sync::Arc<Memory>,
        _src_offset: usize,
        _dst: &std::sync::Arc<Memory>,
        _dst_offset: usize,
        _len: usize,
        _after: &[crate::Event],
    ) -> Result<Option<crate::Event>> {
        Ok(None)
    }
    /// Waits until every operation locus queued on this device is done (kernels
    /// launched by queue-ordered codelet calls, asynchronous copies), so that a consumer
    /// outside locus (another queue, a DLPack consumer) sees finished data. The default:
    /// nothing is ever left queued.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    /// Launches a kernel written in this technology's language (the backend builds and
    /// caches it) on this device's queue. The default: this technology runs no kernels
    /// through locus.
    fn launch(&self, spec: &LaunchSpec<'_>, _args: &[LaunchArg<'_>]) -> Result<Completion> {
        Err(crate::error::Error::Invalid(format!(
            "{}: locus launches no `{}` kernels on this technology",
            self.location(),
            spec.entry
        )))
    }
}

/// The device at `location` as its concrete backend type `T`, shared.
#[allow(dead_code)] // used by the SYCL and GPU backends (features)
pub(crate) fn device_as<T: Device + 'static>(
    location: Location,
    what: &str,
) -> Result<std::sync::Arc<T>> {
    let device = std::sync::Arc::clone(crate::registry().device(location)?);
    if device.as_any().downcast_ref::<T>().is_none() {
        return Err(crate::error::Error::Invalid(format!(
            "{location} is not a {what} device"
        )));
    }
    let raw = std::sync::Arc::into_raw(device).cast::<T>();
    // SAFETY: the `dyn Device` behind the Arc is a `T` (checked above), so the data
    // pointer of the fat pointer points to one; the reference count carries over.
    Ok(unsafe { std::sync::Arc::from_raw(raw) })
}

/// Fills through host chunks of the repeated pattern; used by backends without a native
/// fill for the given pattern.
pub(crate) fn fill_by_writes<D: Device + ?Sized>(
    device: &D,
    dst: &Native,
    offset: usize,
    len: usize,
    pattern: &[u8],
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let per_chunk = (1 << 20) / pattern.len().max(1) + 1;
    let chunk: Vec<u8> = pattern
        .iter()
        .copied()
        .cycle()
        .take(per_chunk * pattern.len())
        .collect();
    let mut done = 0;
    while done < len {
        let n = (len - done).min(chunk.len() - chunk.len() % pattern.len().max(1));
        device.write(dst, offset + done, &chunk[..n])?;
        done += n;
    }
    Ok(())
}

/// What discovering one technology found.
pub struct Discovery {
    /// The devices found, in ordinal order.
    pub devices: Vec<std::sync::Arc<dyn Device>>,
    /// Devices seen but not used, with the reason (e.g. "PoCL through SYCL: no USM").
    pub skipped: Vec<String>,
    /// Copy paths this backend adds to the transfer matrix, keyed by
    /// (source technology, destination technology).
    pub paths: Vec<(
        Technology,
        Technology,
        std::sync::Arc<dyn crate::transfer::CopyPath>,
    )>,
}

/// Why a technology has no device here: the text names what failed and what to install.
pub type Unavailable = String;

/// Discovers one technology. Never panics, never aborts: a missing runtime is an `Err`
/// with the reason.
pub(crate) fn discover(technology: Technology) -> Result<Discovery, Unavailable> {
    match technology {
        Technology::Host => Ok(host::discover()),
        #[cfg(feature = "openmp")]
        Technology::OpenMp => openmp::discover(),
        #[cfg(feature = "opencl")]
        Technology::OpenCl => opencl::discover(),
        #[cfg(feature = "webgpu")]
        Technology::WebGpu => webgpu::discover(),
        #[cfg(feature = "cuda")]
        Technology::Cuda => cuda::discover(),
        #[cfg(feature = "hip")]
        Technology::Hip => hip::discover(),
        #[cfg(feature = "sycl")]
        Technology::Sycl => sycl::discover(),
        #[allow(unreachable_patterns)]
        other => Err(format!(
            "locus was built without the `{other}` feature; rebuild with `--features {other}`"
        )),
    }
}

#[cfg(test)]
mod native_debug_tests {
    use super::Native;

    #[test]
    fn debug_prints_the_handle_not_where_it_is_stored() {
        let at = 0x1000 as *mut u8;
        let (a, b) = (Native::Host { ptr: at }, Native::Host { ptr: at });
        assert_eq!(format!("{a:?}"), "Host(0x1000)");
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        #[cfg(feature = "opencl")]
        assert_eq!(
            format!(
                "{:?}",
                Native::OpenCl {
                    mem: 0x2000 as opencl3::types::cl_mem,
                    offset: 64
                }
            ),
            "OpenCl(cl_mem 0x2000 + 64)"
        );
    }
}
