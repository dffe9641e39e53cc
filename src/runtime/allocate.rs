//! Memory by location: [`Memory::new`], [`Memory::from_vec`] and [`Memory::adopt`] find
//! the location's device in the registry.

use crate::core::error::Result;
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::Native;
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
        Memory::on_kind(registry().device(location)?, bytes, kind)
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
        let device = std::sync::Arc::clone(registry().device(location)?);
        // SAFETY: forwarded from the caller's contract (the device is `location`'s).
        unsafe { Memory::adopt_on(device, native, len, deleter) }
    }
}
