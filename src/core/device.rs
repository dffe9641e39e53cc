//! The [`Device`] trait every backend implements, and what a device says about itself.
//!
//! # Why a trait object
//! Backends are discovered at run time: which devices exist, and how many, is only known
//! once the program runs on a machine. The registry therefore holds `Arc<dyn Device>`,
//! one per discovered device, and the backend-neutral code (transfers, buffers,
//! accessibility) only ever talks to this trait. A backend's own type is reached by
//! downcasting (`Device` has `Any` as a supertrait): `locus::device_as::<OpenClDevice>`.

use std::any::Any;
use std::fmt;

pub use super::batch_copy::DeviceCopy;
use super::completion::{Completion, Dependencies};
pub use super::discovery::{Discovery, Unavailable};
use super::error::{Error, Result};
use super::launch::{LaunchArg, LaunchSpec};
use super::location::Location;
use super::memory::Memory;
use super::native::{MemoryKind, Native};

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
/// [`Device::stage`].
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

/// Which way a transfer goes, for the names of [`Device::native_call`].
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
/// Offsets and lengths are in bytes and have been bounds-checked by [`Memory`] before a
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
    /// The memory kinds this location offers (always [`MemoryKind::Default`] first).
    fn memory_kinds(&self) -> Vec<MemoryKind> {
        vec![MemoryKind::Default]
    }
    /// Allocates `bytes` of `kind` (freed by [`Device::free`] like any allocation). A kind
    /// the location does not offer is an error naming the location and what it offers.
    fn allocate_kind(&self, bytes: usize, kind: MemoryKind) -> Result<Native> {
        match kind {
            MemoryKind::Default => self.allocate(bytes),
            other => Err(unsupported_kind(
                self.location(),
                other,
                &self.memory_kinds(),
            )),
        }
    }
    /// The memory still available here and the total, in bytes (RMM's
    /// `available_device_memory`): the driver's answer on a GPU (`cuMemGetInfo`,
    /// `hipMemGetInfo`); the host's available memory on a device that shares it. An
    /// error where the runtime does not say (a discrete GPU through OpenCL, SYCL or
    /// WebGPU, none of which report free memory).
    fn available_memory(&self) -> Result<(u64, u64)> {
        let location = self.location();
        if !self.info().shares_host_memory {
            return Err(Error::Invalid(format!(
                "{location}: the runtime does not report free memory for this device ({}); size pools in bytes instead",
                self.info().name
            )));
        }
        super::host_memory::available().ok_or_else(|| {
            Error::Invalid(format!(
                "{location}: shares the host's memory, and the host does not report its available memory (/proc/meminfo); size pools in bytes instead"
            ))
        })
    }
    /// Why kernels here cannot use 64-bit floats, or `None` when they can (OpenCL
    /// devices without `cl_khr_fp64`; WebGPU, whose WGSL has no `f64`).
    fn lacks_f64(&self) -> Option<String> {
        None
    }
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
    /// The name of the technology's own call that [`Device::native_write`],
    /// [`Device::native_read`] or [`Device::native_copy_within`] makes at `native`, as a
    /// user of that API knows it (`clEnqueueWriteBuffer`, `cuMemcpyDtoH`, ...).
    fn native_call(&self, _native: &Native, direction: Direction) -> &'static str {
        match direction {
            Direction::HostToDevice => "the backend's own write",
            Direction::DeviceToHost => "the backend's own read",
            Direction::WithinDevice => "the backend's own copy",
        }
    }
    /// Copies `src` to the start of `dst` with the technology's own synchronous call, as
    /// a user writes it by hand: no planner, mapping, staging or counter of locus's
    /// around it (a benchmark's raw baseline). The caller has checked the length. By
    /// default [`Device::write`].
    fn native_write(&self, dst: &Native, src: &[u8]) -> Result<()> {
        self.write(dst, 0, src)
    }
    /// Copies the first `dst.len()` bytes of `src` with the technology's own synchronous
    /// call (as [`Device::native_write`], the other way). By default [`Device::read`].
    fn native_read(&self, src: &Native, dst: &mut [u8]) -> Result<()> {
        self.read(src, 0, dst)
    }
    /// Copies the first `len` bytes of `src` to `dst`, two allocations of this device,
    /// with the technology's own call, waited for. By default [`Device::copy_within`].
    fn native_copy_within(&self, src: &Native, dst: &Native, len: usize) -> Result<()> {
        self.copy_within(src, 0, dst, 0, len)
    }
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
    /// A host view of `len` bytes at `offset` of `native` through the device's own
    /// staging memory ([`StagedView`]), for devices whose memory the host reaches only by
    /// copies and whose staging memory is itself mapped (WebGPU's mappable staging
    /// buffers). `None` where the device has no such memory, or not for this range (then
    /// stage through host memory and [`Device::read`] / [`Device::write`]). The default:
    /// `None`.
    fn stage(
        &self,
        _native: &Native,
        _offset: usize,
        _len: usize,
        _way: StageWay,
    ) -> Option<Result<Box<dyn StagedView>>> {
        None
    }
    /// True when [`Device::stage`] lends views of `native` for every range whose offset
    /// and length are multiples of 4 bytes. The default: `false`.
    fn lends_staging(&self, _native: &Native) -> bool {
        false
    }
    /// How many allocations of this device are alive (made by `allocate`, not freed).
    fn live_allocations(&self) -> usize;
    /// A handle to `len` bytes at `offset` inside `parent`, for sub-allocators (a
    /// pointer plus offset, or a buffer plus offset). The default: this technology
    /// cannot address part of an allocation.
    fn sub_native(&self, _parent: &Native, _offset: usize, _len: usize) -> Result<Native> {
        Err(Error::Invalid(format!(
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
    /// after `after` ([`native_deps`](super::completion::native_deps) sorts them), and
    /// returns the queued work; the caller keeps both memories alive until it is done.
    /// `None` leaves the copy to a worker thread. The default: `None`.
    fn copy_async(
        &self,
        _src: &Memory,
        _src_offset: usize,
        _dst: &Memory,
        _dst_offset: usize,
        _len: usize,
        _after: &dyn Dependencies,
    ) -> Result<Option<Completion>> {
        Ok(None)
    }
    /// True when a copy queued by [`Device::copy_async`] costs less than the same copy
    /// made synchronously (an enqueue, where the synchronous copy also waits for the
    /// queue to drain), so that a batch of copies queues them all and waits once
    /// ([`copy_batch`](crate::transfer::copy_batch)). The default: no (a queued copy that
    /// carries an event of its own, as SYCL's and WebGPU's do, costs more).
    fn queues_copies_cheaply(&self) -> bool {
        false
    }
    /// True when the runtime has a batch form for many copies
    /// ([`Device::copy_batch`]): one submission, one wait. The default: no.
    fn batches_copies(&self) -> bool {
        false
    }
    /// Runs `copies` (each a write from host memory, a read into host memory, or a copy
    /// within this device; checked already, none overlapping another's destination) in
    /// the runtime's batch form, returning when all are done. The default (for devices
    /// whose [`Device::batches_copies`] is false): each one by one.
    fn copy_batch(&self, copies: &mut [DeviceCopy<'_>]) -> Result<()> {
        copies.iter_mut().try_for_each(|c| c.run_alone(self))
    }
    /// Waits until every operation locus queued on this device is done (kernels
    /// launched by queue-ordered codelet calls, asynchronous copies), so that a consumer
    /// outside locus (another queue, a DLPack consumer) sees finished data. The default:
    /// nothing is ever left queued.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    /// The most work items one 1-D launch may have here (the driver's grid limit), for
    /// callers that split larger work into several launches. The default: no limit.
    fn max_launch_items(&self) -> u64 {
        u64::MAX
    }
    /// Makes this device the one the calling thread's runtime calls go to, where the
    /// runtime has such a notion (CUDA's current context, HIP's current device): before
    /// another library takes this device's pointers on this thread (a device-aware MPI
    /// library asks the driver about them, and fails on a thread with no current
    /// device). The default: nothing to do.
    fn make_current(&self) -> Result<()> {
        Ok(())
    }
    /// This device's native handle of host memory at `ptr`, where the device uses host
    /// memory as its own memory (the host; an OpenMP initial device): memory mapped from
    /// elsewhere (shared between processes) is then this device's memory in place.
    /// `None` (the default) where its memory is of its own kind.
    fn host_memory_as_native(&self, ptr: *mut u8) -> Option<Native> {
        let _ = ptr;
        None
    }
    /// A memory object of this device over `len` bytes of host memory at `ptr`, used
    /// in place (OpenCL's `CL_MEM_USE_HOST_PTR` on a device that runs on the host), for
    /// devices whose memory is an object rather than a host address
    /// ([`Device::host_memory_as_native`] answers for the others). [`Device::free`]
    /// releases the object, never the host memory. `None` (the default) where the device
    /// cannot use host memory in place so.
    ///
    /// # Safety
    /// `ptr` is valid for `len` bytes until the object is freed.
    unsafe fn wrap_host_memory(&self, ptr: *mut u8, len: usize) -> Option<Result<Native>> {
        let _ = (ptr, len);
        None
    }
    /// Whether this device's runtime shares its own memory between processes through
    /// IPC memory handles (CUDA's `cuIpcGetMemHandle`, HIP's `hipIpcGetMemHandle`):
    /// [`Device::ipc_export`], [`Device::ipc_open`]. The default: no.
    fn has_ipc_handles(&self) -> bool {
        false
    }
    /// The bytes of an IPC handle of `native`, an allocation this device's `allocate`
    /// made (its start), which another process opens in place.
    fn ipc_export(&self, native: &Native) -> Result<Vec<u8>> {
        let _ = native;
        Err(Error::Invalid(format!(
            "{}: the runtime has no IPC memory handles",
            self.location()
        )))
    }
    /// Opens the memory of an IPC handle's bytes that another process exported, in place;
    /// [`Device::ipc_close`] closes it.
    ///
    /// # Safety
    /// The handle's memory stays allocated in its process until it is closed here.
    unsafe fn ipc_open(&self, handle: &[u8]) -> Result<Native> {
        let _ = handle;
        Err(Error::Invalid(format!(
            "{}: the runtime has no IPC memory handles",
            self.location()
        )))
    }
    /// Closes memory [`Device::ipc_open`] opened (a failure is ignored: the memory is
    /// not used again).
    ///
    /// # Safety
    /// `native` came from `ipc_open` here and is used by nothing.
    unsafe fn ipc_close(&self, native: &Native) {
        let _ = native;
    }
    /// Registers `len` bytes of host memory at `ptr` in place with this device's
    /// runtime, for every device of that runtime (`cuMemHostRegister` /
    /// `hipHostRegister`, portable): its copies then go by DMA. `None` where the runtime
    /// has no such registration or needs none (the default: devices that use host
    /// memory as it is). Dropping the registration undoes it.
    ///
    /// # Safety
    /// `ptr` is valid for `len` bytes for as long as the returned registration lives.
    unsafe fn register_host(
        &self,
        ptr: *mut u8,
        len: usize,
    ) -> Result<Option<super::registration::HostRegistration>> {
        let _ = (ptr, len);
        Ok(None)
    }
    /// Asks the runtime to keep `len` bytes from `offset` of `memory` in this device's
    /// memory (`here`) or in the host's, where this device uses that memory in place
    /// and pages it in on use (system-allocated memory with pageable memory access,
    /// managed memory: `cuMemAdvise` / `hipMemAdvise`, preferred location). A hint:
    /// the data stays valid either way. The default: nothing to do where this device's
    /// memory is the host's (a CPU device), else not offered, an error saying so.
    fn prefer_location(
        &self,
        memory: &Native,
        offset: usize,
        len: usize,
        here: bool,
    ) -> Result<()> {
        let _ = (memory, offset, len, here);
        if self.info().shares_host_memory {
            return Ok(());
        }
        Err(Error::Invalid(format!(
            "{}: no preferred location to set (only a GPU that pages host or managed memory in on use takes one)",
            self.location()
        )))
    }
    /// True when everything this device queues later runs after `work` without a wait
    /// (`work` is on the device's own in-order queue: a CUDA/HIP stream event). The
    /// default: nothing is.
    fn orders_after(&self, _work: &Completion) -> bool {
        false
    }
    /// Checks a handle made elsewhere before [`Memory::adopt_on`] wraps it: an error
    /// where the runtime can tell it belongs to another device or context (a wgpu buffer
    /// of another `wgpu::Device`). The default: the runtime cannot tell, nothing to check.
    ///
    /// [`Memory::adopt_on`]: super::memory::Memory::adopt_on
    fn check_adopted(&self, _native: &Native) -> Result<()> {
        Ok(())
    }
    /// Adopts a user's own queue of this device (see
    /// [`ForeignQueue`](super::native_queue::ForeignQueue)); it must belong to this
    /// device and to the context locus uses here. The default: this technology has no
    /// queue to adopt.
    fn adopt_queue(
        &self,
        native: &super::native_queue::NativeQueue,
    ) -> Result<std::sync::Arc<dyn super::native_queue::ForeignQueue>> {
        Err(Error::Invalid(format!(
            "{}: cannot adopt {}: {} work runs where it is called, with no queue to order \
             it on; use a locus::Queue of its own",
            self.location(),
            native.describe(),
            self.location().technology().name()
        )))
    }
    /// The runtime queue locus submits this device's work to (an in-order queue: a
    /// user's work queued there runs after locus's queued copies and launches); `None`
    /// where the technology has none.
    fn native_queue(&self) -> Option<super::native_queue::NativeQueue> {
        None
    }
    /// Launches `spec` after `after` (the moves its arguments still wait for): ordered on
    /// the device's own queue where the backend can take them natively (OpenCL events
    /// of its context), after a host wait otherwise. The default waits for every
    /// dependency [`Device::orders_after`] does not already order, then launches.
    fn launch_after(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
        after: &dyn Dependencies,
    ) -> Result<Completion> {
        for i in 0..after.count() {
            let dep = after.at(i);
            if !dep.completion().is_some_and(|c| self.orders_after(c)) {
                dep.wait()?;
            }
        }
        self.launch(spec, args)
    }
    /// Launches a kernel written in this technology's language (the backend builds and
    /// caches it) on this device's queue. The default: this technology runs no kernels
    /// through locus.
    fn launch(&self, spec: &LaunchSpec<'_>, _args: &[LaunchArg<'_>]) -> Result<Completion> {
        Err(Error::Invalid(format!(
            "{}: locus launches no `{}` kernels on this technology",
            self.location(),
            spec.entry
        )))
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
