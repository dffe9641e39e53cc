//! Memory by location: [`Memory::new`], [`Memory::from_vec`] and [`Memory::adopt`] find
//! the location's device in the registry.

use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::Native;
use crate::core::registration::HostRegistration;
use crate::runtime::registry::registry;

impl Memory {
    /// Allocates `bytes` at `location` (zero-initialised contents are not promised;
    /// use [`Memory::fill`]).
    pub fn new(location: Location, bytes: usize) -> Result<Memory> {
        Memory::on(registry().device(location)?, bytes)
    }

    /// Allocates `bytes` of memory of `kind` at `location` (see
    /// [`MemoryKind`](crate::core::native::MemoryKind)).
    pub fn new_kind(
        location: Location,
        kind: crate::core::native::MemoryKind,
        bytes: usize,
    ) -> Result<Memory> {
        Memory::on_kind(registry().device(location)?, kind, bytes)
    }

    /// Allocates `bytes` at `location` at an address that is a multiple of `align`, any
    /// power of two (umem's `aligned_alloc`); [`Memory::aligned_origin`] gives the
    /// allocation it was carved from. Through a resource, with its pools:
    /// [`Memory::from_resource_aligned`].
    pub fn new_aligned(location: Location, bytes: usize, align: usize) -> Result<Memory> {
        Memory::on_aligned(registry().device(location)?, bytes, align)
    }

    /// Adopts a host `Vec` without copying; the vector is dropped with the memory.
    pub fn from_vec<T: bytemuck::Pod + Send + Sync>(vec: Vec<T>) -> Memory {
        Memory::host_vec(registry().host(), vec)
    }

    /// Adopts a host `Vec` without copying and registers it in place ("pins" it where it
    /// lies) with every runtime whose copies need page-locked memory for DMA: CUDA's
    /// `cuMemHostRegister`, HIP's `hipHostRegister` (each once, for all its devices).
    /// Copies between it and those devices then run at the speed of the driver's own
    /// pinned memory, where pageable memory is staged by the driver. Other locations
    /// use the memory as it is (they read host memory in place or copy it as any host
    /// memory). The registrations end, before the vector is freed, when the memory is
    /// dropped.
    ///
    /// Registering costs about as much as a few copies of the range (the driver locks
    /// every page): it pays for memory that moves again and again.
    ///
    /// A runtime that refuses (memory another library registered already, the
    /// driver's own limits) is an error naming it; nothing stays registered then.
    ///
    /// ```
    /// use locus::{Location, Memory};
    /// let host = Memory::from_vec_registered(vec![1.0f32; 1 << 20])?;
    /// let at = locus::available().into_iter().last().unwrap_or(Location::Host);
    /// let there = Memory::new(at, host.len())?;
    /// host.copy_to(0, &there, 0, host.len())?;
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn from_vec_registered<T: bytemuck::Pod + Send + Sync>(mut vec: Vec<T>) -> Result<Memory> {
        let len = std::mem::size_of_val(vec.as_slice());
        // SAFETY: `ptr` is the vector's buffer of `len` bytes, which moves (unreallocated)
        // into the memory and lives until it is dropped; the memory drops these
        // registrations first. A refusal drops the ones made, before the vector.
        let registrations = unsafe { register_host_memory(vec.as_mut_ptr().cast(), len) }?;
        Ok(Memory::host_vec_with(registry().host(), vec, registrations))
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
        // SAFETY: forwarded from the caller's contract.
        unsafe { Memory::adopt_as(location, native, len, "adopted", deleter) }
    }

    /// [`Memory::adopt`], named `source` in the trace.
    ///
    /// # Safety
    /// As [`Memory::adopt`].
    pub(crate) unsafe fn adopt_as(
        location: Location,
        native: Native,
        len: usize,
        source: &'static str,
        deleter: impl FnOnce(&Native) + Send + Sync + 'static,
    ) -> Result<Memory> {
        let device = std::sync::Arc::clone(registry().device(location)?);
        // SAFETY: forwarded from the caller's contract (the device is `location`'s).
        unsafe { Memory::adopt_on_as(device, native, len, source, deleter) }
    }
}

/// Registers `len` bytes of host memory at `ptr` in place ("pins" it where it lies) with
/// every runtime whose copies need page-locked memory for DMA, once per runtime (CUDA's
/// `cuMemHostRegister`, HIP's `hipHostRegister`, each portable: for all its devices).
/// Dropping the registrations undoes them. None are made for an empty range, or on a
/// machine without such a runtime. A runtime that refuses is an error naming it, and
/// the registrations made before it are undone. [`Memory::from_vec_registered`] is the
/// safe way in for memory locus may own.
///
/// # Safety
/// `ptr` is valid for `len` bytes for as long as the returned registrations live, and
/// no copy from or to it is in flight when they are dropped.
pub unsafe fn register_host_memory(ptr: *mut u8, len: usize) -> Result<Vec<HostRegistration>> {
    let mut done: Vec<HostRegistration> = Vec::new();
    if len == 0 {
        return Ok(done);
    }
    if (ptr as usize).checked_add(len).is_none() {
        return Err(Error::Invalid(format!(
            "register_host_memory: {len} bytes at {ptr:p} run past the end of the address space; pass the memory's real start and length"
        )));
    }
    for device in registry().devices() {
        let technology = device.location().technology();
        if done.iter().any(|r| r.location().technology() == technology) {
            continue; // one registration covers every device of a runtime
        }
        if let Some(runtime) = device.host_registration() {
            // SAFETY: per this function's contract.
            done.push(unsafe { runtime.register_host(ptr, len) }?);
        }
    }
    Ok(done)
}
