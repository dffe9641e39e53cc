//! [`Memory`]: one allocation at one location (umem's "address in a context"), with
//! bounds-checked reads, writes, fills and host mappings. The layers above add to it:
//! allocation by location and adoption (the registry), copies between any two
//! (the transfer matrix), asynchronous copies (events), and memory from a resource.

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::address_index::{self, Indexed};
use super::aligned::{allocate_aligned, free_aligned, Origin};
use super::block::{Block, ReturnBlock};
use super::device::{Device, HostAccess};
use super::error::{Error, Result};
use super::location::Location;
use super::mapping::HostMapping;
use super::native::Native;

mod adopt;

/// Who frees the allocation.
enum Owner {
    /// Its device, through [`Device::free`].
    Device,
    /// Its device, with the larger allocation it is the aligned part of.
    Aligned(Origin),
    /// The deleter it was adopted with, and what the trace calls its source.
    Deleter(Box<dyn FnOnce(&Native) + Send + Sync>, &'static str),
    /// The resource it is on loan from, with the block to give back.
    Loan(Arc<dyn ReturnBlock>, Block),
    /// Given back already ([`Memory::take_loan`]): dropping does nothing.
    Released,
}

/// One untyped allocation at one location: the umem-style layer under `Buffer`.
///
/// It frees itself on drop (through its backend, through the deleter it was adopted
/// with, or back to the resource it came from). Every operation is bounds-checked: an
/// out-of-range copy is an error and writes nothing.
///
/// ```
/// use locus::{Location, Memory};
///
/// let at = *locus::available().last().unwrap(); // a device when there is one
/// let host = Memory::new(Location::Host, 1024)?;
/// host.write(0, &[7u8; 1024])?;
/// let there = Memory::new(at, 1024)?;
/// let route = host.copy_to(0, &there, 0, 1024)?; // umem's copy_to, on the planner's route
/// println!("{route}");
/// let mut back = [0u8; 16];
/// there.read(512, &mut back)?;
/// assert_eq!(back, [7u8; 16]);
/// assert!(there.read(1020, &mut back).is_err()); // out of range: an error, nothing read
/// # Ok::<(), locus::Error>(())
/// ```
pub struct Memory {
    device: Arc<dyn Device>,
    native: Native,
    len: usize,
    owner: Mutex<Owner>,
    /// Given back to its resource ([`Memory::take_loan`]): every later operation through
    /// any handle of it is an error, never a use of a block someone else may now hold.
    released: AtomicBool,
    /// Set while `before_host_use` holds a wait (see [`Memory::wait_before_host_use`]).
    waits: AtomicBool,
    /// What a synchronous operation waits for first: the queue's earlier work on a
    /// stream-ordered block handed out again on that queue.
    before_host_use: Mutex<Option<HostWait>>,
    /// Its entry in the address index ([`lookup`](crate::lookup)),
    /// removed before the allocation is freed or given back.
    indexed: Mutex<Option<Indexed>>,
    /// Its id in the trace ([`trace`](super::trace)), 0 when nobody listened as it was
    /// made (its free is then not traced either).
    traced: u64,
}

/// Who provides memory with this owner, as the trace names it.
fn source_of(owner: &Owner) -> std::borrow::Cow<'static, str> {
    match owner {
        Owner::Device | Owner::Aligned(_) => "device".into(),
        Owner::Deleter(_, source) => (*source).into(),
        Owner::Loan(lender, _) => lender.lender_name().into(),
        Owner::Released => "released".into(),
    }
}

thread_local! {
    /// True while this thread runs work queued before (see [`run_queued`]).
    static RUNNING_QUEUED_WORK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `job`, work queued earlier (a locus worker thread runs it): memory it uses may
/// have been given back by its owner since, which is allowed (`release_after` orders
/// the block's reuse after exactly this work), so the released check does not apply.
pub(crate) fn run_queued<R>(job: impl FnOnce() -> R) -> R {
    let was = RUNNING_QUEUED_WORK.with(|r| r.replace(true));
    let out = job();
    RUNNING_QUEUED_WORK.with(|r| r.set(was));
    out
}

/// A wait a synchronous operation makes first (see [`Memory::wait_before_host_use`]).
type HostWait = Box<dyn FnOnce() -> Result<()> + Send>;

impl Memory {
    /// Memory over `native`, entered in the address index.
    fn assemble(device: Arc<dyn Device>, native: Native, len: usize, owner: Owner) -> Memory {
        let lender = match &owner {
            Owner::Loan(lender, _) => Some(Arc::downgrade(lender)),
            _ => None,
        };
        let indexed = address_index::enter_memory(&native, len, device.location(), lender);
        let traced = if super::trace::listening() {
            let id = super::trace::next_allocation_id();
            super::trace::emit(super::trace::TraceEvent::Allocated {
                id,
                location: device.location(),
                bytes: len,
                kind: native.memory_kind(),
                source: &source_of(&owner),
            });
            id
        } else {
            0
        };
        Memory {
            device,
            native,
            len,
            owner: Mutex::new(owner),
            released: AtomicBool::new(false),
            waits: AtomicBool::new(false),
            before_host_use: Mutex::new(None),
            indexed: Mutex::new(indexed),
            traced,
        }
    }

    /// Allocates `bytes` on `device` (aligned to [`ALIGNMENT`](super::device::ALIGNMENT)).
    pub fn on(device: &Arc<dyn Device>, bytes: usize) -> Result<Memory> {
        Memory::on_aligned(device, bytes, super::device::ALIGNMENT)
    }

    /// Allocates `bytes` of memory of `kind` on `device` (pinned host or managed memory
    /// of a CUDA / HIP device, SYCL USM shared or host, ...); a kind the device does not
    /// offer is an error naming what it offers. The arguments in `Memory::new_kind`'s
    /// order (and C's `locus_memory_new_kind`): where, what kind, how many bytes.
    pub fn on_kind(
        device: &Arc<dyn Device>,
        kind: super::native::MemoryKind,
        bytes: usize,
    ) -> Result<Memory> {
        let native = device.allocate_kind(bytes, kind)?;
        Ok(Memory::from_native(Arc::clone(device), native, bytes))
    }

    /// Allocates `bytes` on `device` at an address that is a multiple of `align` (any
    /// power of two; umem's `aligned_alloc`). See [`Native::address`] for what the
    /// address is on each technology.
    pub fn on_aligned(device: &Arc<dyn Device>, bytes: usize, align: usize) -> Result<Memory> {
        let (native, origin) = allocate_aligned(
            device.as_ref(),
            bytes,
            align,
            super::native::MemoryKind::Default,
        )?;
        Ok(Memory::assemble(
            Arc::clone(device),
            native,
            bytes,
            origin.map_or(Owner::Device, Owner::Aligned),
        ))
    }

    /// The address of the allocation this memory was carved from (umem's
    /// `aligned_origin`): the larger allocation behind an over-aligned one, else its own
    /// address ([`Native::address`]).
    pub fn aligned_origin(&self) -> u64 {
        let owner = self.owner.lock().unwrap_or_else(|e| e.into_inner());
        match &*owner {
            Owner::Aligned(origin) => origin.native.address(),
            Owner::Loan(_, block) => block
                .origin()
                .map_or(self.native.address(), |o| o.native.address()),
            _ => self.native.address(),
        }
    }

    /// Wraps a native allocation that `device` made with its own allocator and frees on
    /// drop (backends use this for kinds other than the default, e.g. SYCL shared USM).
    #[cfg_attr(
        not(any(feature = "sycl", feature = "cuda", feature = "hip")),
        allow(dead_code)
    )]
    pub(crate) fn from_native(device: Arc<dyn Device>, native: Native, len: usize) -> Memory {
        Memory::assemble(device, native, len, Owner::Device)
    }

    /// Memory on loan from a resource: `block`, which goes back to `lender` when the
    /// memory is dropped (the device never frees it).
    ///
    /// # Safety
    /// `block` is a live allocation of at least `len` bytes of `device`.
    pub unsafe fn on_loan(
        device: Arc<dyn Device>,
        len: usize,
        lender: Arc<dyn ReturnBlock>,
        block: Block,
    ) -> Memory {
        Memory::assemble(
            device,
            block.native().duplicate(),
            len,
            Owner::Loan(lender, block),
        )
    }

    /// Takes the loan out of memory on loan from a resource, so that the caller gives the
    /// block back itself (e.g. once running work is done); dropping the memory then does
    /// nothing. `None` (and nothing changes) for memory not on loan.
    ///
    /// From then on every operation through any handle of this memory is an error (the
    /// block may be someone else's): it is never read or written again through it.
    pub fn take_loan(&self) -> Option<(Arc<dyn ReturnBlock>, Block)> {
        let mut owner = self.owner.lock().unwrap_or_else(|e| e.into_inner());
        if !matches!(*owner, Owner::Loan(..)) {
            return None;
        }
        self.released.store(true, Ordering::Release);
        // Out of the index before the block can be handed out again.
        drop(
            self.indexed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        match std::mem::replace(&mut *owner, Owner::Released) {
            Owner::Loan(lender, block) => Some((lender, block)),
            _ => None,
        }
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

    /// The host address of the start of the allocation when host code reaches it with
    /// plain loads and stores ([`HostAccess::Pointer`]: host memory, OpenMP's initial
    /// device, USM a CPU reaches, pinned host memory), whatever its technology: what a
    /// backend hands its runtime as a host pointer without knowing another backend's
    /// handle types.
    pub fn host_pointer(&self) -> Option<*mut u8> {
        (self.host_access() == HostAccess::Pointer).then(|| self.native.address() as *mut u8)
    }

    /// True once the memory went back to its resource ([`Memory::take_loan`],
    /// `release_after`): every operation on it is refused.
    pub fn is_released(&self) -> bool {
        self.released.load(Ordering::Acquire)
    }

    /// Makes the next synchronous operation (read, write, fill, map, blocking copy) run
    /// `wait` first: for a block handed out again on a queue whose earlier work may still
    /// use it, so that work on the queue needs no wait and host access does.
    pub fn wait_before_host_use(&self, wait: impl FnOnce() -> Result<()> + Send + 'static) {
        *self
            .before_host_use
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(Box::new(wait));
        self.waits.store(true, Ordering::Release);
    }

    /// Runs the wait [`Memory::wait_before_host_use`] set, once.
    pub(crate) fn settle_before_host_use(&self) -> Result<()> {
        if !self.waits.load(Ordering::Acquire) {
            return Ok(());
        }
        let wait = self
            .before_host_use
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.waits.store(false, Ordering::Release);
        wait.map_or(Ok(()), |w| w())
    }

    /// Checks that the memory is still held and `range` fits; `what` names the operation
    /// in the error.
    pub(crate) fn check(&self, what: &'static str, offset: usize, len: usize) -> Result<()> {
        if self.is_released() && !RUNNING_QUEUED_WORK.with(std::cell::Cell::get) {
            return Err(Error::Invalid(format!(
                "{}: {what} of the memory at {:#x} ({} bytes), which was given back to its resource \
                 (release_after): it cannot be used any more; allocate again",
                self.location(),
                self.native.address(),
                self.len
            )));
        }
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
        super::shutdown::check_runtime_alive(self.location(), "write")?;
        self.settle_before_host_use()?;
        if src.is_empty() {
            return Ok(());
        }
        super::trace::traced_copy(
            || super::trace::CopyTrace::host_io(self.location(), false, src.len()),
            || self.device.write(&self.native, offset, src),
        )
    }

    /// Copies bytes at `offset` out to the host.
    pub fn read(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.check("read", offset, dst.len())?;
        super::shutdown::check_runtime_alive(self.location(), "read")?;
        self.settle_before_host_use()?;
        if dst.is_empty() {
            return Ok(());
        }
        let len = dst.len();
        super::trace::traced_copy(
            || super::trace::CopyTrace::host_io(self.location(), true, len),
            || self.device.read(&self.native, offset, dst),
        )
    }

    /// Fills `range` with `pattern` repeated; the range length must be a multiple of the
    /// pattern length.
    pub fn fill(&self, range: Range<usize>, pattern: &[u8]) -> Result<()> {
        let len = self.check_range("fill", &range)?;
        super::shutdown::check_runtime_alive(self.location(), "fill")?;
        self.settle_before_host_use()?;
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

    /// The length of `range` once it is known to lie inside the memory; a reversed range
    /// is an error, like one out of bounds.
    pub(crate) fn check_range(&self, what: &'static str, range: &Range<usize>) -> Result<usize> {
        if range.start > range.end {
            return Err(Error::Invalid(format!(
                "{}: {what} of the reversed range {}..{}; a range runs from its start up to its end",
                self.location(),
                range.start,
                range.end
            )));
        }
        let len = range.end - range.start;
        self.check(what, range.start, len)?;
        Ok(len)
    }

    /// True when `len` bytes at `offset` and `len` bytes at `other_offset` of `other`
    /// are ranges of this same allocation that overlap.
    pub fn overlaps(&self, offset: usize, other: &Memory, other_offset: usize, len: usize) -> bool {
        std::ptr::eq(self, other)
            && len > 0
            && offset < other_offset.saturating_add(len)
            && other_offset < offset.saturating_add(len)
    }

    /// Maps `range` for host access in place. Fails with
    /// [`Error::NotHostAccessible`] when [`Memory::host_access`] is `None`.
    pub fn map(self: &Arc<Self>, range: Range<usize>, write: bool) -> Result<HostMapping> {
        HostMapping::new(Arc::clone(self), range, write)
    }

    /// Maps a range of a borrowed memory for reading, for the duration of `f`. Several
    /// threads may read one memory at once: each gets a shared view.
    pub(crate) fn with_host_bytes<R>(
        &self,
        offset: usize,
        len: usize,
        f: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        self.with_host_range(offset, len, false, |ptr| {
            // SAFETY: `ptr` addresses `len` mapped bytes of this allocation, valid until
            // the unmap after `f`; the view is shared (read-only) and does not escape `f`.
            f(unsafe { std::slice::from_raw_parts(ptr, len) })
        })
    }

    /// Maps a range of a borrowed memory for writing, for the duration of `f`.
    pub(crate) fn with_host_bytes_mut<R>(
        &self,
        offset: usize,
        len: usize,
        f: impl FnOnce(&mut [u8]) -> Result<R>,
    ) -> Result<R> {
        self.with_host_range(offset, len, true, |ptr| {
            // SAFETY: as in `with_host_bytes`; the callers (copies into this range, whose
            // destination the caller chose) hold the only view that writes the range.
            f(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
        })
    }

    fn with_host_range<R>(
        &self,
        offset: usize,
        len: usize,
        write: bool,
        f: impl FnOnce(*mut u8) -> Result<R>,
    ) -> Result<R> {
        self.check("map", offset, len)?;
        self.settle_before_host_use()?;
        if self.host_access() == HostAccess::None {
            return Err(Error::NotHostAccessible {
                location: self.location(),
            });
        }
        if len == 0 {
            return f(std::ptr::NonNull::<u64>::dangling().as_ptr().cast());
        }
        let ptr = self.device.map(&self.native, offset, len, write)?;
        let result = f(ptr);
        // SAFETY: `ptr` came from `map` on this allocation and `f`'s view is gone.
        let unmapped = unsafe { self.device.unmap(&self.native, ptr) };
        let value = result?;
        unmapped?;
        Ok(value)
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // Out of the index before the address can be handed out again.
        drop(
            self.indexed
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        let owner = std::mem::replace(
            self.owner.get_mut().unwrap_or_else(|e| e.into_inner()),
            Owner::Released,
        );
        if self.traced != 0 {
            super::trace::emit(super::trace::TraceEvent::Freed {
                id: self.traced,
                location: self.location(),
                bytes: self.len,
                source: &source_of(&owner),
            });
        }
        // At the process's end a runtime may have shut down already: its memory is left to
        // the process's end (the host's is freed as always).
        let runtime_gone = !self.location().is_host() && super::shutdown::is_shutting_down();
        match owner {
            Owner::Device | Owner::Aligned(_) if runtime_gone => {}
            Owner::Deleter(deleter, _) => deleter(&self.native),
            Owner::Loan(lender, block) => lender.return_block(block),
            // SAFETY: the native handle came from this device's `allocate` (or its own
            // allocator, `from_native`), and this is the one place that frees it;
            // dropping the `Memory` proves nothing uses it.
            Owner::Device => unsafe { self.device.free(&self.native, self.len) },
            // SAFETY: as above; the handle and its origin came from one
            // `allocate_aligned` on this device.
            Owner::Aligned(origin) => unsafe {
                free_aligned(self.device.as_ref(), &self.native, self.len, Some(&origin))
            },
            Owner::Released => {}
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
