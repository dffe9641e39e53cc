//! A device's optional abilities, one trait each: a backend implements the ones its
//! runtime has, every method of each, and answers for them through [`Device`]'s getters
//! (`Device::ipc_handles`, `Device::kernels`, ...), which return `None` where it has
//! none. The same split as wgpu-hal's role traits and UMF's provider ops ("all set or all
//! NULL"): no method of [`Device`] answers "unsupported" by default.
//!
//! Code that asks a question whatever the device goes through the methods on
//! `dyn Device` at the end of this file (`available_memory`, `memory_kinds`,
//! `lacks_f64`, ...): each
//! gives the answer for a device without the ability (the default kind only, no limit,
//! "locus launches no kernels there").

use std::sync::Arc;

use super::batch_copy::DeviceCopy;
use super::completion::{Completion, Dependencies};
use super::copy_span::CopySpan;
use super::device::{unsupported_kind, Device, Direction, StageWay, StagedView};
use super::error::{Error, Result};
use super::launch::{LaunchArg, LaunchSpec};
use super::memory::Memory;
use super::native::{MemoryKind, Native};
use super::native_queue::{ForeignQueue, NativeQueue};
use super::registration::HostRegistration;

/// The technology's own synchronous calls, as a user of that API writes them by hand:
/// no planner, mapping, staging or counter of locus's around them (a benchmark's raw
/// baseline; [`Memory::native_write`]).
pub trait NativeCalls {
    /// The name of the call [`NativeCalls::native_write`], [`NativeCalls::native_read`]
    /// or [`NativeCalls::native_copy_within`] makes at `native`, as a user of that API
    /// knows it (`clEnqueueWriteBuffer`, `cuMemcpyDtoH`, ...).
    fn native_call(&self, native: &Native, direction: Direction) -> &'static str;
    /// Copies `src` to the start of `dst` with that call. The caller checked the length.
    fn native_write(&self, dst: &Native, src: &[u8]) -> Result<()>;
    /// Copies the first `dst.len()` bytes of `src` with that call.
    fn native_read(&self, src: &Native, dst: &mut [u8]) -> Result<()>;
    /// Copies the first `len` bytes of `src` to `dst`, two allocations of this device,
    /// with that call, waited for.
    fn native_copy_within(&self, src: &Native, dst: &Native, len: usize) -> Result<()>;
}

/// Implements [`NativeCalls`] for a device whose own `write`, `read` and `copy_within`
/// are the technology's calls a user writes by hand (`memcpy`, `clEnqueueWriteBuffer`,
/// ...): the native transfers are those, under the names `$name` gives per direction.
macro_rules! native_calls_are_own {
    ($device:ty, |$direction:ident| $name:expr) => {
        impl $crate::core::capability::NativeCalls for $device {
            fn native_call(
                &self,
                _native: &$crate::core::native::Native,
                $direction: $crate::core::device::Direction,
            ) -> &'static str {
                $name
            }

            fn native_write(
                &self,
                dst: &$crate::core::native::Native,
                src: &[u8],
            ) -> $crate::core::error::Result<()> {
                $crate::core::device::Device::write(self, dst, 0, src)
            }

            fn native_read(
                &self,
                src: &$crate::core::native::Native,
                dst: &mut [u8],
            ) -> $crate::core::error::Result<()> {
                $crate::core::device::Device::read(self, src, 0, dst)
            }

            fn native_copy_within(
                &self,
                src: &$crate::core::native::Native,
                dst: &$crate::core::native::Native,
                len: usize,
            ) -> $crate::core::error::Result<()> {
                $crate::core::device::Device::copy_within(self, src, 0, dst, 0, len)
            }
        }
    };
}
pub(crate) use native_calls_are_own;

/// Copies queued on the device's own queue, returned as queued work.
pub trait QueuedCopies {
    /// Starts the copy of `span` (`span.len` > 0) from `src` to `dst` on this device's
    /// own queue when it can (one side at least is this device's memory; ranges
    /// bounds-checked), after `after` ([`native_deps`](super::completion::native_deps)
    /// sorts them), and returns the queued work; the caller keeps both memories alive
    /// until it is done. `None` for a copy this queue cannot take: a worker thread makes
    /// it.
    fn copy_async(
        &self,
        src: &Memory,
        dst: &Memory,
        span: CopySpan,
        after: &dyn Dependencies,
    ) -> Result<Option<Completion>>;
    /// True when a queued copy costs less than the same copy made synchronously (an
    /// enqueue, where the synchronous copy also waits for the queue to drain), so that a
    /// batch of copies queues them all and waits once
    /// ([`copy_batch`](crate::transfer::copy_batch)); false where a queued copy carries
    /// an event of its own (SYCL's, WebGPU's) and costs more.
    fn queues_copies_cheaply(&self) -> bool;
}

/// The runtime's batch form for many copies: one submission, one wait.
pub trait CopyBatches {
    /// Runs `copies` (each a write from host memory, a read into host memory, or a copy
    /// within this device; checked already, none overlapping another's destination),
    /// returning when all are done.
    fn copy_batch(&self, copies: &mut [DeviceCopy<'_>]) -> Result<()>;
}

/// Host views of device memory through the device's own mapped staging memory
/// (WebGPU's mappable staging buffers), for a host consumer that reads or writes in
/// place (MPI): one device copy between the view and the memory, none on the host.
pub trait StagingViews {
    /// A host view of `len` bytes at `offset` of `native` ([`StagedView`]); `None` for a
    /// range the device cannot stage (then stage through host memory and
    /// [`Device::read`] / [`Device::write`]).
    fn stage(
        &self,
        native: &Native,
        offset: usize,
        len: usize,
        way: StageWay,
    ) -> Option<Result<Box<dyn StagedView>>>;
    /// True when [`StagingViews::stage`] lends views of `native` for every range whose offset
    /// and length are multiples of 4 bytes.
    fn lends_staging(&self, native: &Native) -> bool;
}

/// Memory shared between processes through the runtime's IPC memory handles (CUDA's
/// `cuIpcGetMemHandle`, HIP's `hipIpcGetMemHandle`).
pub trait IpcHandles {
    /// The size, in bytes, to which memory to be shared is allocated (rounded up), so
    /// that the allocation is a block of the driver's own: a smaller one may lie in a
    /// block the driver sub-allocates, and a handle shares the whole block, the maker's
    /// neighbouring allocations with it (CUDA's and HIP's: 2 MiB, as NVIDIA's guide
    /// recommends).
    fn ipc_granularity(&self) -> usize;
    /// The bytes of an IPC handle of `native`, an allocation this device's `allocate`
    /// made (its start), which another process opens in place.
    fn ipc_export(&self, native: &Native) -> Result<Vec<u8>>;
    /// Opens the memory of an IPC handle's bytes that another process exported, in
    /// place; [`IpcHandles::ipc_close`] closes it.
    ///
    /// # Safety
    /// The handle's memory stays allocated in its process until it is closed here.
    unsafe fn ipc_open(&self, handle: &[u8]) -> Result<Native>;
    /// Closes memory [`IpcHandles::ipc_open`] opened (a failure is ignored: the memory
    /// is not used again).
    ///
    /// # Safety
    /// `native` came from `ipc_open` here and is used by nothing.
    unsafe fn ipc_close(&self, native: &Native);
}

/// Registration of host memory in place with the runtime (`cuMemHostRegister` /
/// `hipHostRegister`, portable), so that its copies go by DMA.
pub trait HostMemoryRegistration {
    /// Registers `len` bytes at `ptr` for every device of this runtime; dropping the
    /// registration undoes it.
    ///
    /// # Safety
    /// `ptr` is valid for `len` bytes for as long as the returned registration lives.
    unsafe fn register_host(&self, ptr: *mut u8, len: usize) -> Result<HostRegistration>;
}

/// How host memory becomes a device's memory in place ([`HostMemoryInPlace`]).
#[derive(Debug)]
pub enum InPlace {
    /// The device takes the host address itself as its memory (the host; an OpenMP
    /// initial device; a SYCL device with system USM): nothing to release.
    Address(Native),
    /// A memory object of the device over the host memory (OpenCL's
    /// `CL_MEM_USE_HOST_PTR` on a device that runs on the host): [`Device::free`]
    /// releases the object, never the host memory.
    Object(Native),
}

/// Host memory used in place as this device's memory, with no copy: memory mapped from
/// elsewhere (shared between processes) is then this device's memory.
pub trait HostMemoryInPlace {
    /// This device's memory over `len` bytes of host memory at `ptr`.
    ///
    /// # Safety
    /// `ptr` is valid for `len` bytes until the memory is released ([`InPlace`]).
    unsafe fn use_host_memory(&self, ptr: *mut u8, len: usize) -> Result<InPlace>;
}

/// A preferred location for memory the device pages in on use (system-allocated memory
/// with pageable memory access, managed memory: `cuMemAdvise` / `hipMemAdvise`).
pub trait Placement {
    /// Asks the runtime to keep `len` bytes from `offset` of `memory` in this device's
    /// memory (`here`) or in the host's. A hint: the data stays valid either way.
    fn prefer_location(&self, memory: &Native, offset: usize, len: usize, here: bool)
        -> Result<()>;
}

/// Moving memory that migrates ahead of its use, on the device's queue (SYCL's
/// `queue.prefetch` of USM shared memory; CUDA's and HIP's managed memory to come).
pub trait Prefetch {
    /// Starts moving `len` bytes from `offset` of `memory` (this device's) to this
    /// device (`here`) or to the host; [`Prefetched::NotMoved`] with the reason where the
    /// runtime has nothing to move (memory that does not migrate, a direction it does not
    /// prefetch in).
    fn prefetch(
        &self,
        memory: &Native,
        offset: usize,
        len: usize,
        here: bool,
    ) -> Result<Prefetched>;
}

/// What a [`Prefetch::prefetch`] did.
pub enum Prefetched {
    /// The move was started on the device's queue.
    Started(Completion),
    /// Nothing moves, and why.
    NotMoved(String),
}

/// A report of the device's free memory from its driver (`cuMemGetInfo`,
/// `hipMemGetInfo`).
pub trait MemoryReport {
    /// The memory still available on the device and its total, in bytes.
    fn available_memory(&self) -> Result<(u64, u64)>;
}

/// Memory kinds besides the default (pinned host, managed, stream-ordered, USM kinds).
pub trait MemoryKinds {
    /// The memory kinds this location offers, [`MemoryKind::Default`] first.
    fn memory_kinds(&self) -> Vec<MemoryKind>;
    /// Allocates `bytes` of `kind` (freed by [`Device::free`] like any allocation); a
    /// kind not offered is [`unsupported_kind`]'s error.
    fn allocate_kind(&self, bytes: usize, kind: MemoryKind) -> Result<Native>;
}

/// The runtime's own queues: the one locus submits to, and a user's adopted.
pub trait QueueAdoption {
    /// Adopts a user's own queue of this device (see [`ForeignQueue`]); it must belong to
    /// this device and to the context locus uses here.
    fn adopt_queue(&self, native: &NativeQueue) -> Result<Arc<dyn ForeignQueue>>;
    /// The in-order queue locus submits this device's work to: a user's work queued
    /// there runs after locus's queued copies and launches.
    fn native_queue(&self) -> Option<NativeQueue>;
}

/// Kernels written in the technology's language, built, cached and launched by the
/// backend on the device's queue.
pub trait Kernels {
    /// Launches `spec` on this device's queue.
    fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion>;
    /// Launches `spec` after `after` (the moves its arguments still wait for): ordered
    /// on the device's own queue where the backend can take them natively, after a host
    /// wait otherwise ([`launch_after_waiting`]).
    fn launch_after(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
        after: &dyn Dependencies,
    ) -> Result<Completion>;
    /// The most work items one 1-D launch may have here (the driver's grid limit), for
    /// callers that split larger work into several launches; `u64::MAX` for none.
    fn max_launch_items(&self) -> u64;
    /// Why kernels here cannot use 64-bit floats (OpenCL devices without `cl_khr_fp64`;
    /// WebGPU, whose WGSL has no `f64`), or `None` when they can.
    fn lacks_f64(&self) -> Option<String>;
}

/// [`Kernels::launch_after`] for a backend that takes no dependency natively: waits for
/// every dependency `ordered` does not say the device's queue already orders (work on
/// its own in-order stream), then launches.
pub fn launch_after_waiting<K: Kernels + ?Sized>(
    kernels: &K,
    spec: &LaunchSpec<'_>,
    args: &[LaunchArg<'_>],
    after: &dyn Dependencies,
    ordered: impl Fn(&Completion) -> bool,
) -> Result<Completion> {
    for i in 0..after.count() {
        let dep = after.at(i);
        if !dep.completion().is_some_and(&ordered) {
            dep.wait()?;
        }
    }
    kernels.launch(spec, args)
}

/// Runs `copies` in `device`'s batch form ([`CopyBatches`]) where it has one, else one
/// by one through its own `write`, `read` and `copy_within`.
pub fn run_batch(device: &dyn Device, copies: &mut [DeviceCopy<'_>]) -> Result<()> {
    match device.copy_batches() {
        Some(batches) => batches.copy_batch(copies),
        None => copies.iter_mut().try_for_each(|c| c.run_alone(device)),
    }
}

/// The questions asked of any device, answered through its abilities where it has them.
impl<'a> dyn Device + 'a {
    /// The memory still available here and the total, in bytes (RMM's
    /// `available_device_memory`): the driver's answer on a GPU ([`MemoryReport`]); the
    /// host's available memory on a device that shares it. An error where the runtime
    /// does not say (a discrete GPU through OpenCL, SYCL or WebGPU).
    pub fn available_memory(&self) -> Result<(u64, u64)> {
        if let Some(report) = self.memory_report() {
            return report.available_memory();
        }
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

    /// The memory kinds this location offers (always [`MemoryKind::Default`] first).
    pub fn memory_kinds(&self) -> Vec<MemoryKind> {
        self.kinds()
            .map_or_else(|| vec![MemoryKind::Default], |k| k.memory_kinds())
    }

    /// Allocates `bytes` of `kind`; a kind the location does not offer is an error
    /// naming the location and what it offers.
    pub fn allocate_kind(&self, bytes: usize, kind: MemoryKind) -> Result<Native> {
        match (self.kinds(), kind) {
            (Some(kinds), kind) => kinds.allocate_kind(bytes, kind),
            (None, MemoryKind::Default) => self.allocate(bytes),
            (None, other) => Err(unsupported_kind(
                self.location(),
                other,
                &[MemoryKind::Default],
            )),
        }
    }

    /// The name of the technology's own call for a raw transfer at `native`
    /// ([`NativeCalls::native_call`]); the backend's own write, read or copy where it
    /// names none.
    pub fn native_call(&self, native: &Native, direction: Direction) -> &'static str {
        match self.native_calls() {
            Some(calls) => calls.native_call(native, direction),
            None => match direction {
                Direction::HostToDevice => "the backend's own write",
                Direction::DeviceToHost => "the backend's own read",
                Direction::WithinDevice => "the backend's own copy",
            },
        }
    }

    /// [`NativeCalls::native_write`], or [`Device::write`] where the backend's own write
    /// is the native call.
    pub fn native_write(&self, dst: &Native, src: &[u8]) -> Result<()> {
        match self.native_calls() {
            Some(calls) => calls.native_write(dst, src),
            None => self.write(dst, 0, src),
        }
    }

    /// [`NativeCalls::native_read`], or [`Device::read`].
    pub fn native_read(&self, src: &Native, dst: &mut [u8]) -> Result<()> {
        match self.native_calls() {
            Some(calls) => calls.native_read(src, dst),
            None => self.read(src, 0, dst),
        }
    }

    /// [`NativeCalls::native_copy_within`], or [`Device::copy_within`].
    pub fn native_copy_within(&self, src: &Native, dst: &Native, len: usize) -> Result<()> {
        match self.native_calls() {
            Some(calls) => calls.native_copy_within(src, dst, len),
            None => self.copy_within(src, 0, dst, 0, len),
        }
    }

    /// True when [`StagingViews`] lends views of `native` for every 4-byte-aligned range.
    pub fn lends_staging(&self, native: &Native) -> bool {
        self.staging_views()
            .is_some_and(|s| s.lends_staging(native))
    }

    /// [`Kernels::max_launch_items`]; no limit where locus launches no kernels.
    pub fn max_launch_items(&self) -> u64 {
        self.kernels().map_or(u64::MAX, |k| k.max_launch_items())
    }

    /// [`Kernels::lacks_f64`]; `None` where locus launches no kernels (a host codelet is
    /// Rust).
    pub fn lacks_f64(&self) -> Option<String> {
        self.kernels().and_then(|k| k.lacks_f64())
    }

    /// [`Kernels::launch_after`], or an error naming the location where locus launches
    /// no kernels.
    pub fn launch_after(
        &self,
        spec: &LaunchSpec<'_>,
        args: &[LaunchArg<'_>],
        after: &dyn Dependencies,
    ) -> Result<Completion> {
        match self.kernels() {
            Some(kernels) => kernels.launch_after(spec, args, after),
            None => Err(Error::Invalid(format!(
                "{}: locus launches no `{}` kernels on this technology",
                self.location(),
                spec.entry
            ))),
        }
    }

    /// [`QueueAdoption::adopt_queue`], or an error saying the technology has no queue to
    /// adopt.
    pub fn adopt_queue(&self, native: &NativeQueue) -> Result<Arc<dyn ForeignQueue>> {
        match self.queue_adoption() {
            Some(queues) => queues.adopt_queue(native),
            None => Err(Error::Invalid(format!(
                "{}: cannot adopt {}: {} work runs where it is called, with no queue to order \
                 it on; use a locus::Queue of its own",
                self.location(),
                native.describe(),
                self.location().technology().name()
            ))),
        }
    }

    /// [`QueueAdoption::native_queue`]; `None` where the technology has no queue.
    pub fn native_queue(&self) -> Option<NativeQueue> {
        self.queue_adoption().and_then(|q| q.native_queue())
    }

    /// [`Placement::prefer_location`]; nothing to do where this device's memory is the
    /// host's (a CPU device), else an error saying no preferred location is offered.
    pub fn prefer_location(
        &self,
        memory: &Native,
        offset: usize,
        len: usize,
        here: bool,
    ) -> Result<()> {
        if let Some(placement) = self.placement() {
            return placement.prefer_location(memory, offset, len, here);
        }
        if self.info().shares_host_memory {
            return Ok(());
        }
        Err(Error::Invalid(format!(
            "{}: no preferred location to set (only a GPU that pages host or managed memory in on use takes one)",
            self.location()
        )))
    }
}

/// The names `Device` had for its optional abilities before they became traits, kept on
/// `dyn Device` for one release so that callers keep compiling (implementors moved to
/// the traits).
impl<'a> dyn Device + 'a {
    /// [`QueuedCopies::copy_async`]; `None` where the device queues no copies.
    #[deprecated(note = "use `device.queued_copies()` and `QueuedCopies::copy_async`")]
    pub fn copy_async(
        &self,
        src: &Memory,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
        after: &dyn Dependencies,
    ) -> Result<Option<Completion>> {
        let span = CopySpan {
            src_offset,
            dst_offset,
            len,
        };
        match self.queued_copies() {
            Some(queue) => queue.copy_async(src, dst, span, after),
            None => Ok(None),
        }
    }

    /// [`QueuedCopies::queues_copies_cheaply`]; false where the device queues no copies.
    #[deprecated(note = "use `device.queued_copies()` and `QueuedCopies::queues_copies_cheaply`")]
    pub fn queues_copies_cheaply(&self) -> bool {
        self.queued_copies()
            .is_some_and(|q| q.queues_copies_cheaply())
    }

    /// Whether the device has a batch form for many copies.
    #[deprecated(note = "use `device.copy_batches().is_some()`")]
    pub fn batches_copies(&self) -> bool {
        self.copy_batches().is_some()
    }

    /// [`CopyBatches::copy_batch`], or each copy one by one.
    #[deprecated(note = "use `device.copy_batches()` and `CopyBatches::copy_batch`")]
    pub fn copy_batch(&self, copies: &mut [DeviceCopy<'_>]) -> Result<()> {
        run_batch(self, copies)
    }

    /// [`StagingViews::stage`]; `None` where the device lends no staging views.
    #[deprecated(note = "use `device.staging_views()` and `StagingViews::stage`")]
    pub fn stage(
        &self,
        native: &Native,
        offset: usize,
        len: usize,
        way: StageWay,
    ) -> Option<Result<Box<dyn StagedView>>> {
        self.staging_views()
            .and_then(|views| views.stage(native, offset, len, way))
    }

    /// Whether the runtime has IPC memory handles.
    #[deprecated(note = "use `device.ipc_handles().is_some()`")]
    pub fn has_ipc_handles(&self) -> bool {
        self.ipc_handles().is_some()
    }

    /// [`IpcHandles::ipc_export`], or an error where the runtime has no IPC handles.
    #[deprecated(note = "use `device.ipc_handles()` and `IpcHandles::ipc_export`")]
    pub fn ipc_export(&self, native: &Native) -> Result<Vec<u8>> {
        match self.ipc_handles() {
            Some(handles) => handles.ipc_export(native),
            None => Err(self.no_ipc_handles()),
        }
    }

    /// [`IpcHandles::ipc_open`], or an error where the runtime has no IPC handles.
    ///
    /// # Safety
    /// As for [`IpcHandles::ipc_open`].
    #[deprecated(note = "use `device.ipc_handles()` and `IpcHandles::ipc_open`")]
    pub unsafe fn ipc_open(&self, handle: &[u8]) -> Result<Native> {
        match self.ipc_handles() {
            // SAFETY: forwarded, per this function's contract.
            Some(handles) => unsafe { handles.ipc_open(handle) },
            None => Err(self.no_ipc_handles()),
        }
    }

    /// [`IpcHandles::ipc_close`]; nothing where the runtime has no IPC handles.
    ///
    /// # Safety
    /// As for [`IpcHandles::ipc_close`].
    #[deprecated(note = "use `device.ipc_handles()` and `IpcHandles::ipc_close`")]
    pub unsafe fn ipc_close(&self, native: &Native) {
        if let Some(handles) = self.ipc_handles() {
            // SAFETY: forwarded, per this function's contract.
            unsafe { handles.ipc_close(native) }
        }
    }

    /// [`HostMemoryRegistration::register_host`]; `None` where the runtime registers
    /// nothing.
    ///
    /// # Safety
    /// As for [`HostMemoryRegistration::register_host`].
    #[deprecated(
        note = "use `device.host_registration()` and `HostMemoryRegistration::register_host`"
    )]
    pub unsafe fn register_host(
        &self,
        ptr: *mut u8,
        len: usize,
    ) -> Result<Option<HostRegistration>> {
        match self.host_registration() {
            // SAFETY: forwarded, per this function's contract.
            Some(runtime) => unsafe { runtime.register_host(ptr, len) }.map(Some),
            None => Ok(None),
        }
    }

    /// [`Kernels::launch`], or an error where locus launches no kernels here.
    #[deprecated(note = "use `device.kernels()` and `Kernels::launch`")]
    pub fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion> {
        self.launch_after(spec, args, &super::completion::NoDependencies)
    }

    fn no_ipc_handles(&self) -> Error {
        Error::Invalid(format!(
            "{}: the runtime has no IPC memory handles",
            self.location()
        ))
    }
}
