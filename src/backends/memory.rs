//! [`Memory`]: one allocation at one location (umem's "address in a context"), and
//! [`HostMapping`]: host access to it in place.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use super::{Device, HostAccess, Native};
use crate::error::{Error, Result};
use crate::location::Location;
use crate::transfer::{self, Route, TransferStats};

type Deleter = Box<dyn FnOnce(&Native) + Send + Sync>;

/// One untyped allocation at one location: the umem-style layer under [`crate::Buffer`].
///
/// It frees itself on drop (through its backend, or through the deleter it was adopted
/// with). Every operation is bounds-checked: an out-of-range copy is an error and writes
/// nothing.
pub struct Memory {
    device: Arc<dyn Device>,
    native: Native,
    len: usize,
    deleter: Option<Deleter>,
    /// The resource and block this memory came from, when it came from one (taken out
    /// by `release_after`).
    from: std::sync::Mutex<
        Option<(
            Arc<dyn crate::resource::MemoryResource>,
            crate::resource::Block,
        )>,
    >,
    /// True when the memory came from a resource: drop gives it back there (or, after
    /// `release_after` took the block, does nothing) and never frees it itself.
    pooled: bool,
}

impl Memory {
    /// Allocates `bytes` at `location` (zero-initialised contents are not promised;
    /// use [`Memory::fill`]).
    pub fn new(location: Location, bytes: usize) -> Result<Memory> {
        let device = crate::registry().device(location)?;
        Memory::on(device, bytes)
    }

    /// Allocates `bytes` from `resource`; the memory goes back to it on drop.
    pub fn from_resource(
        resource: &Arc<dyn crate::resource::MemoryResource>,
        bytes: usize,
    ) -> Result<Memory> {
        let block = resource.allocate(bytes, super::ALIGNMENT)?;
        Memory::from_block(resource, block, bytes)
    }

    /// Allocates `bytes` from `resource` for work on `queue`. Stream-ordered: a pool may
    /// hand out memory freed on the same queue whose earlier work is still running, so
    /// use it in work submitted on `queue` ([`Memory::copy_to_async_on`]), or after
    /// [`crate::Queue::wait`], as with CUDA's stream-ordered allocations.
    pub fn from_resource_on(
        resource: &Arc<dyn crate::resource::MemoryResource>,
        bytes: usize,
        queue: crate::Queue,
    ) -> Result<Memory> {
        let block = resource.allocate_on(bytes, super::ALIGNMENT, queue)?;
        Memory::from_block(resource, block, bytes)
    }

    fn from_block(
        resource: &Arc<dyn crate::resource::MemoryResource>,
        block: crate::resource::Block,
        bytes: usize,
    ) -> Result<Memory> {
        let device = match crate::registry().device(resource.location()) {
            Ok(d) => Arc::clone(d),
            Err(e) => {
                resource.deallocate(block);
                return Err(e);
            }
        };
        let native = block.native().duplicate();
        Ok(Memory {
            device,
            native,
            len: bytes,
            deleter: None,
            from: std::sync::Mutex::new(Some((Arc::clone(resource), block))),
            pooled: true,
        })
    }

    /// Allocates `bytes` on `device`.
    pub fn on(device: &Arc<dyn Device>, bytes: usize) -> Result<Memory> {
        let max = device.info().max_allocation;
        if bytes as u64 > max {
            return Err(Error::TooLarge {
                location: device.location(),
                requested: bytes,
                max: max as usize,
            });
        }
        let native = device.allocate(bytes)?;
        Ok(Memory {
            device: Arc::clone(device),
            native,
            len: bytes,
            deleter: None,
            from: std::sync::Mutex::new(None),
            pooled: false,
        })
    }

    /// Wraps a native allocation that `device` made with its own allocator (backends
    /// use this for kinds other than the default, e.g. SYCL shared USM).
    #[cfg_attr(
        not(any(feature = "sycl", feature = "cuda", feature = "hip")),
        allow(dead_code)
    )]
    pub(crate) fn from_native(device: Arc<dyn Device>, native: Native, len: usize) -> Memory {
        Memory {
            device,
            native,
            len,
            deleter: None,
            from: std::sync::Mutex::new(None),
            pooled: false,
        }
    }

    /// Adopts a host `Vec` without copying; the vector is dropped with the memory.
    pub fn from_vec<T: bytemuck::Pod + Send + Sync>(mut vec: Vec<T>) -> Memory {
        let len = std::mem::size_of_val(vec.as_slice());
        let ptr = vec.as_mut_ptr().cast::<u8>();
        let device = crate::registry().host();
        Memory {
            device,
            native: Native::Host { ptr },
            len,
            deleter: Some(Box::new(move |_| drop(vec))),
            from: std::sync::Mutex::new(None),
            pooled: false,
        }
    }

    /// Adopts a native allocation made elsewhere, without copying. `deleter` runs when
    /// the memory is dropped (pass a no-op to keep ownership elsewhere).
    ///
    /// # Safety
    /// `native` must be a live allocation of at least `len` bytes that belongs to the
    /// device at `location` (for OpenCL: its context; for OpenMP: its device number;
    /// for WebGPU: its `wgpu::Device`) and stays valid until `deleter` runs.
    pub unsafe fn adopt(
        location: Location,
        native: Native,
        len: usize,
        deleter: impl FnOnce(&Native) + Send + Sync + 'static,
    ) -> Result<Memory> {
        let device = crate::registry().device(location)?;
        if native.technology() != location.technology() {
            return Err(Error::Invalid(format!(
                "cannot adopt a {} handle at {location}: the handle must belong to the location's technology",
                native.technology()
            )));
        }
        Ok(Memory {
            device: Arc::clone(device),
            native,
            len,
            deleter: Some(Box::new(deleter)),
            from: std::sync::Mutex::new(None),
            pooled: false,
        })
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-byte allocation.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the memory lives.
    pub fn location(&self) -> Location {
        self.device.location()
    }

    /// The device that owns it.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The native handle, for launching your own kernels on it.
    pub fn native(&self) -> &Native {
        &self.native
    }

    /// How host code can reach it without a copy.
    pub fn host_access(&self) -> HostAccess {
        self.device.host_access(&self.native)
    }

    /// Can code running at `accessor` use this memory in place? Not symmetric.
    pub fn is_accessible_from(&self, accessor: Location) -> bool {
        crate::access::memory_accessibility(self, accessor).0
    }

    /// Checks that `range` fits; `what` names the operation in the error.
    pub(crate) fn check(&self, what: &'static str, offset: usize, len: usize) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::OutOfRange {
                location: self.location(),
                what,
                offset,
                len,
                size: self.len,
            }),
        }
    }

    /// Copies host bytes into the memory at `offset`.
    pub fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.check("write", offset, src.len())?;
        if src.is_empty() {
            return Ok(());
        }
        self.device.write(&self.native, offset, src)
    }

    /// Copies bytes at `offset` out to the host.
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.check("read", offset, dst.len())?;
        if dst.is_empty() {
            return Ok(());
        }
        self.device.read(&self.native, offset, dst)
    }

    /// Fills `range` with `pattern` repeated; the range length must be a multiple of the
    /// pattern length.
    pub fn fill(&self, range: Range<usize>, pattern: &[u8]) -> Result<()> {
        let len = range.end.saturating_sub(range.start);
        self.check("fill", range.start, len)?;
        if pattern.is_empty() || !len.is_multiple_of(pattern.len()) {
            return Err(Error::Invalid(format!(
                "{}: fill of {len} bytes with a {}-byte pattern: the length must be a non-zero multiple of the pattern",
                self.location(),
                pattern.len()
            )));
        }
        if len == 0 {
            return Ok(());
        }
        self.device.fill(&self.native, range.start, len, pattern)
    }

    /// Copies `len` bytes from `self[src_offset..]` to `dst[dst_offset..]` on the route
    /// the transfer matrix picks, and returns that route (umem's `copy_to`).
    pub fn copy_to(
        &self,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
    ) -> Result<Route> {
        transfer::copy(self, src_offset, dst, dst_offset, len, None, None)
    }

    /// Copies `len` bytes from `src[src_offset..]` into `self[dst_offset..]` (umem's
    /// `copy_from`).
    pub fn copy_from(
        &self,
        dst_offset: usize,
        src: &Memory,
        src_offset: usize,
        len: usize,
    ) -> Result<Route> {
        transfer::copy(src, src_offset, self, dst_offset, len, None, None)
    }

    /// Like [`Memory::copy_to`], also counting the transfer in `stats`.
    pub fn copy_to_counted(
        &self,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
        stats: &TransferStats,
    ) -> Result<Route> {
        transfer::copy(self, src_offset, dst, dst_offset, len, Some(stats), None)
    }

    /// Like [`Memory::copy_to`] on a route of the given kind (e.g. to benchmark the
    /// staged path against the planner's choice). An error when no such route exists
    /// between the two.
    pub fn copy_to_via(
        &self,
        kind: crate::transfer::RouteKind,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
    ) -> Result<Route> {
        transfer::copy(self, src_offset, dst, dst_offset, len, None, Some(kind))
    }

    /// Gives the memory back to its resource once `event` (the last work using it) is
    /// done, without waiting here: a [`crate::resource::Pool`] keeps the range aside
    /// and hands it out again only after the event. Safe to call while asynchronous
    /// work still holds this memory; the memory must not be used after this call.
    /// Memory not from a resource is freed when its last handle goes.
    pub fn release_after(self: &Arc<Self>, queue: crate::Queue, event: crate::Event) {
        let taken = self.from.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((resource, block)) = taken {
            resource.deallocate_after(block, queue, event);
        }
    }

    /// Starts `copy_to` asynchronously after `after` and returns its event (the
    /// synchronous form is [`Memory::copy_to`]). Bounds are checked at once: an
    /// out-of-range copy is an error and starts nothing.
    ///
    /// Native where the technology has a queue for it:
    /// - within one OpenCL device, or between it and host memory (`clEnqueueCopyBuffer`,
    ///   non-blocking `clEnqueueWriteBuffer` / `clEnqueueReadBuffer`; OpenCL events of
    ///   its context in `after` as the wait list);
    /// - SYCL USM to or from the same device or host memory (`queue.memcpy`, SYCL events
    ///   as dependencies);
    /// - within one WebGPU device (`copy_buffer_to_buffer` in one submission, after that
    ///   device's earlier submissions), and uploads of up to 1 MiB to it
    ///   (`Queue::write_buffer`);
    /// - within one CUDA or HIP device (`cuMemcpyDtoDAsync` / `hipMemcpyAsync` on its
    ///   stream, with an event).
    ///
    /// A dependency the technology cannot take natively that is still running sends the
    /// copy to a worker thread, which waits for it: this call never blocks on other
    /// work, and the device's own queue is not held up by it. Every other copy runs on a
    /// worker thread after a host wait on `after`. Dropping the returned event (every
    /// clone) does not block: the work finishes on its own and the memory it uses stays
    /// alive until then.
    pub fn copy_to_async(
        self: &Arc<Self>,
        src_offset: usize,
        dst: &Arc<Memory>,
        dst_offset: usize,
        len: usize,
        after: &[crate::Event],
    ) -> Result<crate::Event> {
        self.check("copy source", src_offset, len)?;
        dst.check("copy destination", dst_offset, len)?;
        // Nothing to copy: done once `after` is (a worker waits for it when it runs).
        if len == 0 && after.iter().all(crate::Event::is_complete) {
            for e in after {
                e.wait()?;
            }
            return Ok(crate::Event::done());
        }
        // The source's device first, then the destination's (host -> SYCL).
        let other = (!Arc::ptr_eq(self.device(), dst.device())).then(|| dst.device());
        for device in std::iter::once(self.device())
            .chain(other)
            .filter(|_| len > 0)
        {
            if let Some(event) = device.copy_async(self, src_offset, dst, dst_offset, len, after)? {
                return Ok(event);
            }
        }
        let (src, dst) = (Arc::clone(self), Arc::clone(dst));
        let deps: Vec<crate::Event> = after.to_vec();
        let (event, done) = crate::Event::user();
        // Nothing to wait for: the pool; else a thread of its own (see `worker`).
        let ready = deps.iter().all(crate::Event::is_complete);
        let job = move || {
            let copy = || -> Result<()> {
                for d in &deps {
                    d.wait()?;
                }
                src.copy_to(src_offset, &dst, dst_offset, len).map(|_| ())
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(copy));
            // The memory is let go before the event says done (a waiter may then
            // check that nothing holds it).
            drop((src, dst, deps));
            match outcome {
                Ok(Ok(())) => done.complete(),
                Ok(Err(e)) => done.fail(e.to_string()),
                Err(_) => done.fail("the asynchronous copy's worker panicked"),
            }
        };
        if ready {
            crate::worker::run(job)?;
        } else {
            crate::worker::run_waiting(job)?;
        }
        Ok(event)
    }

    /// True when `len` bytes at `offset` and `len` bytes at `other_offset` of `other`
    /// are ranges of this same allocation that overlap.
    #[allow(dead_code)] // used by the backends with native asynchronous copies (features)
    pub(crate) fn overlaps(
        self: &Arc<Self>,
        offset: usize,
        other: &Arc<Memory>,
        other_offset: usize,
        len: usize,
    ) -> bool {
        Arc::ptr_eq(self, other) && offset < other_offset + len && other_offset < offset + len
    }

    /// [`Memory::copy_to_async`] on `queue`: it starts after everything submitted on
    /// that queue before (and after `after`), and later work on the queue runs after it.
    pub fn copy_to_async_on(
        self: &Arc<Self>,
        queue: crate::Queue,
        src_offset: usize,
        dst: &Arc<Memory>,
        dst_offset: usize,
        len: usize,
        after: &[crate::Event],
    ) -> Result<crate::Event> {
        queue.submit(after, |deps| {
            self.copy_to_async(src_offset, dst, dst_offset, len, deps)
        })
    }

    /// Maps `range` for host access in place. Fails with
    /// [`Error::NotHostAccessible`] when [`Memory::host_access`] is `None`.
    pub fn map(self: &Arc<Self>, range: Range<usize>, write: bool) -> Result<HostMapping> {
        HostMapping::new(Arc::clone(self), range, write)
    }

    /// Maps a range of a borrowed memory for the duration of `f`.
    pub(crate) fn with_host_slice<R>(
        &self,
        offset: usize,
        len: usize,
        write: bool,
        f: impl FnOnce(&mut [u8]) -> Result<R>,
    ) -> Result<R> {
        self.check("map", offset, len)?;
        if self.host_access() == HostAccess::None {
            return Err(Error::NotHostAccessible {
                location: self.location(),
            });
        }
        if len == 0 {
            return f(&mut []);
        }
        let ptr = self.device.map(&self.native, offset, len, write)?;
        // SAFETY: `map` returned a host address of `len` bytes of this allocation that
        // stays valid until `unmap`; the slice does not escape `f`, and the callers hold
        // the only reference that writes to this range for the duration.
        let slice = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        let result = f(slice);
        // SAFETY: `ptr` came from `map` on this allocation and `slice` is gone.
        let unmapped = unsafe { self.device.unmap(&self.native, ptr) };
        let value = result?;
        unmapped?;
        Ok(value)
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        let from = self
            .from
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some((resource, block)) = from {
            resource.deallocate(block);
            return;
        }
        if self.pooled {
            return; // `release_after` gave the block back already
        }
        match self.deleter.take() {
            Some(deleter) => deleter(&self.native),
            // SAFETY: the native handle came from this device's `allocate`, and this is
            // the one place that frees it; dropping the `Memory` proves nothing uses it.
            None => unsafe { self.device.free(&self.native, self.len) },
        }
    }
}

impl fmt::Debug for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Memory")
            .field("location", &self.location())
            .field("len", &self.len)
            .field("native", &self.native)
            .finish()
    }
}

/// Host access to a range of a [`Memory`] in place: a plain pointer for host-addressable
/// memory, or a map / unmap pair (an OpenCL buffer on a CPU device). Unmaps on drop.
pub struct HostMapping {
    memory: Arc<Memory>,
    ptr: *mut u8,
    len: usize,
    write: bool,
}

// SAFETY: the mapping is a host address range owned by this value; moving it to another
// thread moves the only handle to it (unmap is thread-safe in every backend).
unsafe impl Send for HostMapping {}
// SAFETY: shared access only hands out `&[u8]`.
unsafe impl Sync for HostMapping {}

impl HostMapping {
    fn new(memory: Arc<Memory>, range: Range<usize>, write: bool) -> Result<HostMapping> {
        let len = range.end.saturating_sub(range.start);
        memory.check("map", range.start, len)?;
        if memory.host_access() == HostAccess::None {
            return Err(Error::NotHostAccessible {
                location: memory.location(),
            });
        }
        let ptr = if len == 0 {
            std::ptr::NonNull::<u64>::dangling().as_ptr().cast()
        } else {
            memory.device.map(&memory.native, range.start, len, write)?
        };
        Ok(HostMapping {
            memory,
            ptr,
            len,
            write,
        })
    }

    /// The mapped bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` addresses `len` mapped bytes (or is dangling and aligned for
        // len 0) that stay valid until drop; `&self` stops a `&mut` view coexisting.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The mapped bytes, writable. Errors if the mapping was made read-only.
    pub fn as_mut_slice(&mut self) -> Result<&mut [u8]> {
        if !self.write {
            return Err(Error::Invalid(format!(
                "{}: this mapping is read-only; use access_mut to write",
                self.memory.location()
            )));
        }
        // SAFETY: as in `as_slice`, and `&mut self` makes this the only view.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// The host address of the first mapped byte.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// The memory this maps.
    pub fn memory(&self) -> &Arc<Memory> {
        &self.memory
    }
}

impl Drop for HostMapping {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: `ptr` came from `map` on this memory; no slice outlives `self`.
            // An unmap error cannot be reported from drop; the backends log nothing and
            // the memory stays valid, so it is ignored.
            let _ = unsafe { self.memory.device.unmap(&self.memory.native, self.ptr) };
        }
    }
}
