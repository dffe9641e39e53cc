//! The [`Device`] trait every backend implements, and what a device says about itself.
//!
//! # Why a trait object
//! Backends are discovered at run time: which devices exist, and how many, is only known
//! once the program runs on a machine. The registry therefore holds `Arc<dyn Device>`,
//! one per discovered device, and the backend-neutral code (transfers, buffers,
//! accessibility) only ever talks to this trait. A backend's own type is reached by
//! downcasting (`Device` has `Any` as a supertrait): `locus::device_as::<OpenClDevice>`.
//!
//! # Duties and abilities
//! `Device` holds the duties every backend has (allocate, free, read, write, map, ...).
//! Each optional ability (IPC handles, kernels, queued copies, ...) is a trait of its own
//! in [`capability`](super::capability), reached through a getter here that returns
//! `None` where the device has none.

use std::any::Any;
use std::fmt;

use super::capability::{
    CopyBatches, HostMemoryInPlace, HostMemoryRegistration, IpcHandles, Kernels, MemoryKinds,
    MemoryReport, NativeCalls, Placement, Prefetch, QueueAdoption, QueuedCopies, StagingViews,
};
use super::error::{Error, Result};
use super::location::Location;
use super::native::{MemoryKind, Native};
use super::pointer_queries::PointerQueries;
use super::rect_copy::RectCopies;

/// The alignment every backend guarantees for the start of an allocation, and every
/// memory resource for the blocks it hands out unless more is asked: 256 bytes, as RMM
/// guarantees for device memory (`CUDA_ALLOCATION_ALIGNMENT`) and the CUDA and HIP
/// allocators return. The same at every location, so that a block moved between
/// locations keeps its alignment.
pub const ALIGNMENT: usize = 256;

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
    /// The runtime's or driver's version as it reports it (e.g. OpenCL's device and
    /// driver versions, the CUDA driver's), where it reports one: what a measurement
    /// record names beside the device.
    pub version: Option<String>,
    /// Free-form facts worth printing (`locus info` shows them).
    pub notes: Vec<String>,
    /// The physical device the location runs on, where its runtime says: locations of
    /// different technologies on one GPU name the same one (`locus info` groups them).
    pub physical: Option<PhysicalDevice>,
}

/// The physical device a location runs on, as the runtimes name it: two locations with
/// the same one share the hardware (CUDA and WebGPU on one GPU, PoCL and OpenMP on the
/// host's CPUs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PhysicalDevice {
    /// The host's CPUs: the host, OpenMP's initial device, CPU devices of OpenCL and
    /// SYCL, software WebGPU adapters.
    HostCpu,
    /// A device on the PCI bus, by its address (CUDA's and HIP's PCI attributes,
    /// OpenCL's `cl_khr_pci_bus_info`, Vulkan's `VK_EXT_pci_bus_info`).
    Pci {
        /// PCI domain.
        domain: u32,
        /// Bus number.
        bus: u32,
        /// Device number on the bus.
        device: u32,
        /// Function number.
        function: u32,
    },
}

impl PhysicalDevice {
    /// Parses the PCI address form `domain:bus:device.function` in hex (`0000:65:00.0`),
    /// as Vulkan drivers, `lspci -D` and `nvidia-smi` write it.
    pub fn parse_pci(text: &str) -> Option<PhysicalDevice> {
        let (rest, function) = text.trim().rsplit_once('.')?;
        let mut parts = rest.split(':');
        let hex = |p: Option<&str>| p.and_then(|p| u32::from_str_radix(p, 16).ok());
        let (domain, bus, device) = (hex(parts.next())?, hex(parts.next())?, hex(parts.next())?);
        match parts.next() {
            Some(_) => None,
            None => Some(PhysicalDevice::Pci {
                domain,
                bus,
                device,
                function: u32::from_str_radix(function, 16).ok()?,
            }),
        }
    }
}

impl fmt::Display for PhysicalDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PhysicalDevice::HostCpu => f.write_str("the host's CPUs"),
            PhysicalDevice::Pci {
                domain,
                bus,
                device,
                function,
            } => write!(f, "PCI {domain:04x}:{bus:02x}:{device:02x}.{function:x}"),
        }
    }
}

/// How host code can reach an allocation without copying it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostAccess {
    /// The allocation's address is a host address: plain loads and stores work.
    Pointer,
    /// Mapping the allocation gives a host pointer to the same memory (no copy), e.g.
    /// an OpenCL buffer on a host-unified CPU device.
    Mapped,
    /// The host cannot reach it in place; a copy is needed.
    None,
}

/// Which way a [`StagedView`] moves bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StageWay {
    /// Out of device memory to a host reader: the view holds the range's bytes.
    Out,
    /// From a host writer into device memory: the view's bytes go to the range when the
    /// view is finished.
    In,
}

/// A host view of a range of device memory held in the device's own staging memory (a
/// mapped WebGPU staging buffer), for a host consumer that reads or writes it in place
/// (MPI): one device copy between the view and the memory, none on the host. Made by
/// [`StagingViews::stage`].
pub trait StagedView: Send {
    /// The host address of the view's first byte; the view is as long as the range it
    /// was made for. Readable for [`StageWay::Out`], writable for [`StageWay::In`].
    fn host(&self) -> *mut u8;
    /// Ends the view. For [`StageWay::In`] this queues the device copy of its bytes into
    /// the range, ordered before later work on the device's queue
    /// ([`Device::synchronize`] waits for it). Dropped without `finish`, an `In` view's
    /// bytes are discarded.
    fn finish(self: Box<Self>) -> Result<()>;
}

/// How the host reaches a device's memory by default ([`Device::host_reach`]), and why:
/// `reason` is the text after the location (`" is host-unified: its buffers map in
/// place, no copy"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostReach {
    /// The host's access to memory allocated there by default.
    pub access: HostAccess,
    /// Why, as the words after the location's name.
    pub reason: &'static str,
}

impl HostReach {
    /// `access`, with the generic reason.
    pub const fn generic(access: HostAccess) -> HostReach {
        HostReach {
            access,
            reason: match access {
                HostAccess::Pointer => " memory has a host address",
                HostAccess::Mapped => " shares memory with the host: mapped in place, no copy",
                HostAccess::None => " memory is not host-visible",
            },
        }
    }
}

/// Which way a transfer goes, for the names of [`NativeCalls::native_call`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Host memory to the device.
    HostToDevice,
    /// The device to host memory.
    DeviceToHost,
    /// Between two allocations of one device.
    WithinDevice,
}

/// One device of one technology. Backends implement it; the rest of the crate uses it.
///
/// Offsets and lengths are in bytes and have been bounds-checked by
/// [`Memory`](super::memory::Memory) before a
/// backend sees them.
pub trait Device: Any + Send + Sync + fmt::Debug {
    /// Where this device's memory lives.
    fn location(&self) -> Location;
    /// Name, sizes and memory facts.
    fn info(&self) -> &DeviceInfo;
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
    /// How the host reaches this device's memory by default, and why: the one fact
    /// [`Device::host_access_default`] and [`Device::host_access_reason`] derive from.
    fn host_reach(&self) -> HostReach;
    /// How host code reaches this device's default allocations (for location-level
    /// tables; [`Device::host_access`] answers per allocation).
    fn host_access_default(&self) -> HostAccess {
        self.host_reach().access
    }
    /// Why memory here is or is not reachable by the host by default: the location and
    /// [`HostReach::reason`]. Route and accessibility reasons quote it.
    fn host_access_reason(&self) -> String {
        format!("{}{}", self.location(), self.host_reach().reason)
    }
    /// The accessor's own say on memory owned by `owner` (e.g. a GPU with peer access
    /// enabled to the owner), before the generic rules; `None` leaves it to them.
    /// `native` is the allocation asked about (`None`: the owner's default kind), whose
    /// kind may decide (a GPU's stream-ordered pool memory is not covered by peer
    /// access).
    fn accessibility_of(
        &self,
        _owner: &dyn Device,
        _native: Option<&Native>,
        _host: HostAccess,
    ) -> Option<(bool, String)> {
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
    /// pointer plus offset, or a buffer plus offset).
    fn sub_native(&self, parent: &Native, offset: usize, len: usize) -> Result<Native>;
    /// Releases a handle made by [`Device::sub_native`]; the parent allocation stays.
    ///
    /// # Safety
    /// `native` came from `sub_native` of this device and is no longer used.
    unsafe fn release_sub(&self, _native: &Native) {}
    /// The alignment, in bytes, that sub-allocations inside one allocation must keep.
    fn sub_alignment(&self) -> usize {
        ALIGNMENT
    }
    /// Waits until every operation locus queued on this device is done (kernels
    /// launched by queue-ordered codelet calls, asynchronous copies), so that a consumer
    /// outside locus (another queue, a DLPack consumer) sees finished data. The default:
    /// nothing is ever left queued.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    /// Makes this device the one the calling thread's runtime calls go to, where the
    /// runtime has such a notion (CUDA's current context, HIP's current device): before
    /// another library takes this device's pointers on this thread (a device-aware MPI
    /// library asks the driver about them, and fails on a thread with no current
    /// device). The default: nothing to do.
    fn make_current(&self) -> Result<()> {
        Ok(())
    }
    /// Checks a handle made elsewhere before [`Memory::adopt_on`] wraps it: an error
    /// where the runtime can tell it belongs to another device or context (a wgpu buffer
    /// of another `wgpu::Device`). The default: the runtime cannot tell, nothing to check.
    ///
    /// [`Memory::adopt_on`]: super::memory::Memory::adopt_on
    fn check_adopted(&self, _native: &Native) -> Result<()> {
        Ok(())
    }
    /// The technology's own synchronous calls, where they differ from
    /// [`Device::write`], [`Device::read`] and [`Device::copy_within`] or have a name to
    /// show.
    fn native_calls(&self) -> Option<&dyn NativeCalls> {
        None
    }
    /// Copies queued on the device's own queue; `None`: asynchronous copies go to
    /// locus's worker threads.
    fn queued_copies(&self) -> Option<&dyn QueuedCopies> {
        None
    }
    /// The runtime's batch form for many copies; `None`: a batch runs one by one.
    fn copy_batches(&self) -> Option<&dyn CopyBatches> {
        None
    }
    /// The runtime's rectangle copy; `None`: a region moves packed or run by run.
    fn rect_copies(&self) -> Option<&dyn RectCopies> {
        None
    }
    /// Host views through the device's own mapped staging memory.
    fn staging_views(&self) -> Option<&dyn StagingViews> {
        None
    }
    /// The runtime's IPC memory handles.
    fn ipc_handles(&self) -> Option<&dyn IpcHandles> {
        None
    }
    /// Registration of host memory in place with the runtime; `None` where the runtime
    /// has no such registration or needs none (devices that use host memory as it is).
    fn host_registration(&self) -> Option<&dyn HostMemoryRegistration> {
        None
    }
    /// Host memory used in place as this device's memory.
    fn host_memory_in_place(&self) -> Option<&dyn HostMemoryInPlace> {
        None
    }
    /// A preferred location for memory paged in on use.
    fn placement(&self) -> Option<&dyn Placement> {
        None
    }
    /// Moving memory that migrates ahead of its use.
    fn prefetcher(&self) -> Option<&dyn Prefetch> {
        None
    }
    /// The driver's report of free memory.
    fn memory_report(&self) -> Option<&dyn MemoryReport> {
        None
    }
    /// Memory kinds besides the default.
    fn kinds(&self) -> Option<&dyn MemoryKinds> {
        None
    }
    /// The runtime's own queues, locus's and a user's adopted.
    fn queue_adoption(&self) -> Option<&dyn QueueAdoption> {
        None
    }
    /// Kernels in the technology's language; `None`: locus launches none here.
    fn kernels(&self) -> Option<&dyn Kernels> {
        None
    }
    /// The runtime's answer for addresses it allocated (memory locus did not make);
    /// `None` where the runtime keeps no such table or its memory has no address.
    fn pointer_queries(&self) -> Option<&dyn PointerQueries> {
        None
    }
}

/// Fills through host chunks of the repeated pattern; used by backends without a native
/// fill for the given pattern.
pub fn fill_by_writes<D: Device + ?Sized>(
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

/// Physical memory of the host in bytes, from /proc/meminfo where available (see
/// [`host_memory::total`](super::host_memory::total)).
pub fn host_memory_bytes() -> Option<u64> {
    super::host_memory::total()
}

/// The error for a memory kind a location does not offer.
pub fn unsupported_kind(location: Location, kind: MemoryKind, offered: &[MemoryKind]) -> Error {
    Error::Invalid(format!(
        "{location} has no {kind} memory; it offers: {}",
        offered
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::PhysicalDevice;

    #[test]
    fn pci_addresses_parse_as_drivers_write_them_and_print_back() {
        let gpu = PhysicalDevice::parse_pci("0000:65:00.0").unwrap();
        assert_eq!(
            gpu,
            PhysicalDevice::Pci {
                domain: 0,
                bus: 0x65,
                device: 0,
                function: 0
            }
        );
        assert_eq!(gpu.to_string(), "PCI 0000:65:00.0");
        assert_eq!(
            PhysicalDevice::parse_pci("0001:c1:1f.7"),
            Some(PhysicalDevice::Pci {
                domain: 1,
                bus: 0xc1,
                device: 0x1f,
                function: 7
            })
        );
        for bad in ["", "65:00.0", "0000:65:00", "0000:zz:00.0", "0:1:2:3.0"] {
            assert_eq!(PhysicalDevice::parse_pci(bad), None, "{bad}");
        }
    }
}
