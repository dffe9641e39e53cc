//! [`GpuApi`]: the vendor calls a GPU backend needs, which `cuda` (cudarc) and `hip`
//! (bindgen bindings of the HIP runtime) implement and the shared device types of this
//! folder are written against.

use super::*;

/// A batch of copies that failed: the driver's error, and which copy (its index in the
/// batch) where the driver names one.
#[derive(Debug)]
pub struct BatchFailure {
    /// The driver's error.
    pub error: GpuError,
    /// The index of the copy that failed; `None` where the error is the whole batch's.
    pub copy: Option<usize>,
}

impl From<GpuError> for BatchFailure {
    fn from(error: GpuError) -> BatchFailure {
        BatchFailure { error, copy: None }
    }
}

/// What a driver says of an address it allocated ([`GpuApi::pointer_range`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuPointer {
    /// The ordinal of the device the memory belongs to.
    pub ordinal: u32,
    /// The allocation's first address.
    pub base: u64,
    /// The allocation's length in bytes.
    pub len: usize,
    /// Device, page-locked host or managed memory.
    pub memory: GpuMemory,
}

impl GpuPointer {
    /// From the driver's pointer attributes: its range, whether its memory type is host
    /// memory, its managed flag and device ordinal where it gave them (a managed
    /// allocation is `Managed` whatever its type; a missing ordinal is device 0).
    pub fn from_attributes(
        (base, len): (u64, u64),
        host: bool,
        managed: Option<u32>,
        ordinal: Option<i32>,
    ) -> GpuPointer {
        let memory = match (host, managed.unwrap_or(0) != 0) {
            (_, true) => GpuMemory::Managed,
            (true, false) => GpuMemory::Pinned,
            (false, false) => GpuMemory::Device,
        };
        GpuPointer {
            ordinal: ordinal.and_then(|o| u32::try_from(o).ok()).unwrap_or(0),
            base,
            len: len as usize,
            memory,
        }
    }
}

/// One end of a rectangle copy as the driver takes it ([`GpuApi::copy_rect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RectEnd {
    /// Its first byte: a device pointer, or a host address where `host`.
    pub address: u64,
    /// True for host memory (`CU_MEMORYTYPE_HOST`, `hipMemcpyHostTo...`).
    pub host: bool,
    /// Bytes from one row to the next.
    pub pitch: usize,
    /// Rows from one plane to the next.
    pub rows_per_plane: usize,
}

/// A rectangle copy: `depth` planes of `height` rows of `width` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuRect {
    /// Where it reads.
    pub src: RectEnd,
    /// Where it writes.
    pub dst: RectEnd,
    /// Bytes per row.
    pub width: usize,
    /// Rows per plane.
    pub height: usize,
    /// Planes.
    pub depth: usize,
}

/// The vendor calls a GPU backend needs. Pointers are device addresses as `u64` (host
/// addresses for pinned memory, which is mapped into the device's address space).
pub trait GpuApi: Send + Sync + 'static {
    /// Which technology this is.
    const TECHNOLOGY: Technology;
    /// Whether a synchronous `to_host` into pageable memory beats staging it through two
    /// pinned chunks, whose speed one CPU thread's memcpy out of the chunks bounds.
    /// CUDA's does (`docs/design-measurements.md`).
    const DRIVER_READS_PAGEABLE: bool = false;
    /// Up to how many bytes a synchronous upload from pageable memory larger than 64 KiB
    /// is left to the driver ([`GpuApi::to_device_by_driver`]) rather than
    /// staged through locus's two pinned chunks; none by default.
    /// `LOCUS_GPU_DIRECT_UPLOAD_MAX` (a size: `4MiB`) overrides it.
    const DRIVER_WRITES_PAGEABLE_UP_TO: usize = 0;
    /// The most work items one launch may have along x: CUDA's grid of up to 2^31 - 1
    /// blocks of locus's 256 threads; HIP counts the grid in threads and takes at most
    /// 2^32 - 1 of them (`hipModuleLaunchKernel` refuses more).
    const MAX_ITEMS_X: u64 = (i32::MAX as u64) * 256;

    /// The most work items one launch may have along x on this driver
    /// ([`GpuApi::MAX_ITEMS_X`]; the simulated driver can be told less).
    fn max_items_x(&self) -> u64 {
        Self::MAX_ITEMS_X
    }

    /// The vendor's synchronous calls a user writes by hand for one transfer (host ->
    /// device, device -> host, within one device): the names of `NativeCalls::native_call`.
    const NATIVE_CALLS: [&'static str; 3];

    /// Makes device `ordinal` current on this thread (and leaves it current: locus's
    /// calls go through [`GpuApi::enter`], which puts the caller's back).
    fn activate(&self, ordinal: u32) -> Result<(), GpuError>;
    /// What a thread has current: CUDA's context, HIP's device.
    type Current: Copy + PartialEq + fmt::Debug;
    /// What is current on this thread now (as the driver says: another library may have
    /// changed it since locus's last call).
    fn current(&self) -> Self::Current;
    /// Makes `current` (what [`GpuApi::current`] returned) current again.
    fn restore(&self, current: Self::Current);
    /// Whether `current` is what `activate(ordinal)` makes current.
    fn is_current(&self, current: Self::Current, ordinal: u32) -> bool;
    /// Makes device `ordinal` current for as long as the returned value lives, then
    /// what the thread had before: CuPy, PyTorch or your code on the same thread finds
    /// its own device current again after each locus call (issue 48, item 3).
    fn enter(&self, ordinal: u32) -> Result<Entered<'_, Self>, GpuError>
    where
        Self: Sized,
    {
        let before = self.current();
        self.activate(ordinal)?;
        Ok(Entered::new(
            self,
            (!self.is_current(before, ordinal)).then_some(before),
        ))
    }
    /// Allocates. Stream-ordered memory comes from a pool of locus's own per device,
    /// made on first use and keeping the memory freed to it (release threshold: all of
    /// it, as RMM's pool sets it): never from the device's default pool, which other
    /// libraries' stream-ordered allocators (CuPy's, PyTorch's) share and tune.
    ///
    /// # Safety
    /// The device is current.
    unsafe fn alloc(&self, kind: GpuMemory, bytes: usize) -> Result<u64, GpuError>;
    /// Frees.
    ///
    /// # Safety
    /// `ptr` came from `alloc(kind, ..)` on the current device and is unused.
    unsafe fn free(&self, kind: GpuMemory, ptr: u64);
    /// Host (any memory) -> device, on the device's stream; `wait` synchronises it.
    ///
    /// # Safety
    /// Both ranges are valid for `n` bytes until the copy completes.
    unsafe fn to_device(
        &self,
        dst: u64,
        src: *const u8,
        n: usize,
        wait: bool,
    ) -> Result<(), GpuError>;
    /// Device -> host, on the device's stream; `wait` synchronises it.
    ///
    /// # Safety
    /// As for `to_device`.
    unsafe fn to_host(&self, dst: *mut u8, src: u64, n: usize, wait: bool) -> Result<(), GpuError>;
    /// A complete host -> device copy from pageable memory that the driver stages
    /// itself: by default `to_device` waited for (on locus's own stream, never the legacy
    /// NULL stream, which would serialise with other libraries' blocking streams).
    ///
    /// # Safety
    /// As for `to_device`.
    unsafe fn to_device_by_driver(
        &self,
        dst: u64,
        src: *const u8,
        n: usize,
    ) -> Result<(), GpuError> {
        // SAFETY: per the caller's contract.
        unsafe { self.to_device(dst, src, n, true) }
    }
    /// One transfer in `direction` by [`GpuApi::NATIVE_CALLS`] on the current device,
    /// complete when it returns (no stream or staging of locus's); `None` where the
    /// backend's own copy is that call.
    ///
    /// # Safety
    /// As for `to_device`; `dst` and `src` are host addresses or device pointers as
    /// `direction` says.
    unsafe fn native_copy(
        &self,
        _direction: Direction,
        _dst: u64,
        _src: u64,
        _n: usize,
    ) -> Option<Result<(), GpuError>> {
        None
    }
    /// Device -> device on one device, on its stream; `wait` synchronises it.
    ///
    /// # Safety
    /// As for `to_device`.
    unsafe fn on_device(&self, dst: u64, src: u64, n: usize, wait: bool) -> Result<(), GpuError>;
    /// Peer copy between two devices, synchronous.
    ///
    /// # Safety
    /// As for `to_device`, and the two ordinals own the pointers.
    unsafe fn peer(
        &self,
        dst: u64,
        dst_ordinal: u32,
        src: u64,
        src_ordinal: u32,
        n: usize,
    ) -> Result<(), GpuError>;
    /// Sets `n` bytes to `byte` on the current device's stream (`cuMemsetD8Async` /
    /// `hipMemsetAsync`: ordered after the copies and kernels before it, unlike the
    /// NULL-stream `cuMemsetD8`, which a non-blocking stream does not wait for); `wait`
    /// synchronises it.
    ///
    /// # Safety
    /// The range is valid until the memset completes.
    unsafe fn memset(&self, dst: u64, byte: u8, n: usize, wait: bool) -> Result<(), GpuError>;
    /// An IPC handle of the allocation starting at `ptr` (`cuIpcGetMemHandle` /
    /// `hipIpcGetMemHandle`): another process opens it in place with
    /// [`GpuApi::ipc_open`]. The driver refuses pool, pinned and managed memory.
    ///
    /// # Safety
    /// The device is current (`enter`); `ptr` is the start of a live allocation.
    unsafe fn ipc_handle(&self, ptr: u64) -> Result<[u8; 64], GpuError>;
    /// Opens an IPC handle another process made, on the current device: the memory in
    /// place (`cuIpcOpenMemHandle` / `hipIpcOpenMemHandle`, peer access enabled lazily).
    ///
    /// # Safety
    /// The device is current; the handle's memory stays allocated in its process
    /// until [`GpuApi::ipc_close`].
    unsafe fn ipc_open(&self, handle: &[u8; 64]) -> Result<u64, GpuError>;
    /// Closes memory [`GpuApi::ipc_open`] opened (`cuIpcCloseMemHandle` /
    /// `hipIpcCloseMemHandle`).
    ///
    /// # Safety
    /// The device is current; `ptr` came from `ipc_open` and is used by nothing.
    unsafe fn ipc_close(&self, ptr: u64) -> Result<(), GpuError>;
    /// Whether the driver copies many ranges in one call ([`GpuApi::copy_batch`]:
    /// `cuMemcpyBatchAsync`, CUDA 12.8+). The default: no.
    fn has_copy_batch(&self) -> bool {
        false
    }
    /// Whether device `ordinal`'s batch may name registered host memory
    /// ([`GpuApi::host_register`]) by its host address. CUDA's only where the device
    /// says so (`CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`): elsewhere the host address
    /// is not the device's, and the batch faults with a sticky illegal address.
    fn batch_takes_registered_host(&self, _ordinal: u32) -> bool {
        true
    }
    /// Copies each `(dst, src, n)` (host addresses or device pointers, any mix) on the
    /// current device's stream in one call, and waits for them. Only where
    /// [`GpuApi::has_copy_batch`] says so; the default refuses. A failure carries the
    /// index in `copies` of the copy that failed where the driver names one
    /// (`cuMemcpyBatchAsync`'s `failIdx`).
    ///
    /// # Safety
    /// Every range is valid for its `n` bytes until the copies complete; no destination
    /// overlaps another copy's source or destination.
    unsafe fn copy_batch(&self, copies: &[(u64, u64, usize)]) -> Result<(), BatchFailure> {
        let _ = copies;
        Err(BatchFailure {
            error: GpuError::other("memcpy batch", "the driver has no batch copy"),
            copy: None,
        })
    }
    /// The driver's rectangle copy (`cuMemcpy3DAsync`, `hipMemcpy3DAsync`), named as a
    /// user knows it; `None` where the backend has none (the default).
    const RECT_CALL: Option<&'static str> = None;
    /// Copies `rect` on the current device's stream in one call; `wait` synchronises
    /// it. Only where [`GpuApi::RECT_CALL`] names a call; the default refuses.
    ///
    /// # Safety
    /// Every row of both ends is valid until the copy completes; the two do not overlap.
    unsafe fn copy_rect(&self, rect: &GpuRect, wait: bool) -> Result<(), GpuError> {
        let _ = (rect, wait);
        Err(GpuError::other(
            "rectangle copy",
            "the driver has no rectangle copy",
        ))
    }
    /// Sets where the driver keeps `n` bytes at `ptr` (memory it pages in on use):
    /// device `device`, or the host for `None` (`cuMemAdvise` / `hipMemAdvise`,
    /// `SET_PREFERRED_LOCATION`). The driver checks the range; nothing is read or
    /// written.
    fn prefer_location(&self, ptr: u64, n: usize, device: Option<u32>) -> Result<(), GpuError>;
    /// Waits for the current device's stream.
    fn synchronize(&self) -> Result<(), GpuError>;
    /// The current device's free and total memory in bytes (`cuMemGetInfo`,
    /// `hipMemGetInfo`).
    fn memory_info(&self) -> Result<(u64, u64), GpuError>;
    /// Waits for the current device's stream when `wait` is set (the end of every
    /// copy that may be synchronous).
    fn finish(&self, wait: bool) -> Result<(), GpuError> {
        if wait {
            self.synchronize()
        } else {
            Ok(())
        }
    }
    /// Creates an event (no timing).
    fn event_create(&self) -> Result<u64, GpuError>;
    /// Records `event` on the current device's stream: it completes when everything
    /// enqueued before it has.
    ///
    /// # Safety
    /// `event` came from `event_create` and is not destroyed.
    unsafe fn event_record(&self, event: u64) -> Result<(), GpuError>;
    /// Records `event` on `stream`, a user's stream of the current device's context.
    ///
    /// # Safety
    /// As for `event_record`; `stream` is a live stream (checked by the driver: one of
    /// another context is an error).
    unsafe fn event_record_on(&self, event: u64, stream: u64) -> Result<(), GpuError>;
    /// Makes `stream`'s later work wait on the device for `event`
    /// (`cuStreamWaitEvent` / `hipStreamWaitEvent`), with no host wait.
    ///
    /// # Safety
    /// As for `event_record_on`.
    unsafe fn stream_wait_event(&self, stream: u64, event: u64) -> Result<(), GpuError>;
    /// Blocks until `event` completes.
    ///
    /// # Safety
    /// As for `event_record`.
    unsafe fn event_wait(&self, event: u64) -> Result<(), GpuError>;
    /// True once `event` has completed (does not block).
    ///
    /// # Safety
    /// As for `event_record`.
    unsafe fn event_query(&self, event: u64) -> Result<bool, GpuError>;
    /// Destroys `event`.
    ///
    /// # Safety
    /// `event` came from `event_create` and is not used afterwards.
    unsafe fn event_destroy(&self, event: u64);
    /// Tries to enable peer access from `from` to `to`; true when enabled.
    fn enable_peer(&self, from: u32, to: u32) -> bool;
    /// Compiles `source` (NVRTC / hiprtc) and returns a handle to kernel `entry`.
    fn compile(&self, source: &str, entry: &str) -> Result<u64, GpuError>;
    /// Launches a compiled kernel on the current device's stream.
    ///
    /// # Safety
    /// `params` point to 8-byte slots, one per kernel parameter, each holding its value
    /// (device pointers as 8 bytes, 32-bit scalars in the first 4).
    unsafe fn launch(
        &self,
        function: u64,
        grid: [u32; 3],
        block: [u32; 3],
        params: &mut [*mut c_void],
    ) -> Result<(), GpuError>;
    /// Device `ordinal`'s stream, as the integer handle DLPack's `stream=` takes.
    fn stream_handle(&self, ordinal: u32) -> u64;
    /// Waits for a stream another library owns (the CUDA array interface's `stream`,
    /// a producer's stream), on the current device.
    ///
    /// # Safety
    /// `stream` is a live stream of the current device's context (or the driver's
    /// legacy / per-thread default stream handle, 1 or 2).
    unsafe fn synchronize_stream(&self, stream: u64) -> Result<(), GpuError>;
    /// The ordinal of the device that owns `ptr` (`cuPointerGetAttribute`
    /// `DEVICE_ORDINAL` / `hipPointerGetAttribute`).
    fn pointer_device(&self, ptr: u64) -> Result<u32, GpuError>;
    /// What the driver says of `ptr`, whoever allocated it (`cuPointerGetAttribute` /
    /// `hipPointerGetAttribute`: memory type, range, managed, device ordinal); `Ok(None)`
    /// where the driver never allocated or registered it. On the current device.
    fn pointer_range(&self, ptr: u64) -> Result<Option<GpuPointer>, GpuError>;
    /// Page-locks `len` bytes of host memory at `ptr` in place, for every device of this
    /// driver (`cuMemHostRegister` / `hipHostRegister`, portable and mapped into the
    /// devices' address space): its copies then go by DMA, as from the driver's own
    /// pinned memory. On the current device.
    ///
    /// # Safety
    /// `ptr` is valid for `len` bytes until [`GpuApi::host_unregister`] is called for it.
    unsafe fn host_register(&self, ptr: *mut u8, len: usize) -> Result<(), GpuError>;
    /// Undoes [`GpuApi::host_register`] of `ptr`.
    ///
    /// # Safety
    /// `ptr` was registered by `host_register` and no copy from or to it is in flight.
    unsafe fn host_unregister(&self, ptr: *mut u8) -> Result<(), GpuError>;
    /// Wraps a pointer as this technology's native handle.
    fn native(ptr: u64, kind: GpuMemory) -> Native;
    /// Unwraps this technology's native handle.
    fn unpack(native: &Native) -> Option<(u64, GpuMemory)>;
}
