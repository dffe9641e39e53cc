//! [`Upstream`]: the backend's raw allocation at one location, of one memory kind
//! (RMM's device memory resources: `cuda_memory_resource`, `managed_memory_resource`,
//! `pinned_host_memory_resource`, `cuda_async_memory_resource`, and their kin for every
//! location).

use std::sync::Arc;

use super::{Block, MemoryResource};
use crate::core::aligned::{allocate_aligned, free_aligned};
use crate::core::device::{unsupported_kind, Device};
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::native::MemoryKind;
use crate::runtime::event::{when_done, Event};
use crate::runtime::queue::Queue;

/// The backend's raw allocation at one location (`clCreateBuffer`, `cuMemAlloc`, ...),
/// of one [`MemoryKind`] (the location's default unless made with [`Upstream::of_kind`]).
/// Any power-of-two alignment: beyond what the backend gives, the aligned part of a
/// larger allocation (its [`Block::origin`]).
pub struct Upstream {
    device: Arc<dyn Device>,
    kind: MemoryKind,
}

impl Upstream {
    /// The upstream resource of `device` (its default memory).
    pub fn new(device: Arc<dyn Device>) -> Upstream {
        Upstream {
            device,
            kind: MemoryKind::Default,
        }
    }

    /// The upstream resource of `device` that allocates `kind` (managed or pinned host
    /// memory of a CUDA / HIP device, the driver's stream-ordered pool, a SYCL USM kind).
    /// A kind the device does not offer is an error naming the location and the kinds it
    /// offers (`memory_kinds` on `dyn Device`).
    pub fn of_kind(device: Arc<dyn Device>, kind: MemoryKind) -> Result<Upstream> {
        let offered = device.memory_kinds();
        if !offered.contains(&kind) {
            return Err(unsupported_kind(device.location(), kind, &offered));
        }
        Ok(Upstream { device, kind })
    }

    /// The device it allocates on.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The kind of memory it allocates.
    pub fn kind(&self) -> MemoryKind {
        self.kind
    }
}

/// Frees `block` on `device` (it was made by an [`Upstream`] of that device).
fn free(device: &dyn Device, block: Block) {
    if block.location != device.location() || block.id != 0 {
        return; // not ours: leak rather than free twice
    }
    // SAFETY: the block came from `allocate_aligned` on this device (checked above as
    // far as the handle allows) and is given back exactly once (blocks are not Clone).
    unsafe { free_aligned(device, &block.native, block.bytes, block.origin.as_deref()) };
}

impl MemoryResource for Upstream {
    fn location(&self) -> Location {
        self.device.location()
    }
    fn device(&self) -> Option<Arc<dyn Device>> {
        Some(Arc::clone(&self.device))
    }

    fn describe(&self) -> String {
        match self.kind {
            MemoryKind::Default => format!("upstream({})", self.device.location()),
            kind => format!("upstream({}, {kind})", self.device.location()),
        }
    }

    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let (native, origin) = allocate_aligned(self.device.as_ref(), bytes, align, self.kind)?;
        Ok(Block {
            native,
            bytes,
            id: 0,
            location: self.device.location(),
            origin: origin.map(Box::new),
            tracking: 0,
        })
    }

    fn deallocate(&self, block: Block) {
        free(self.device.as_ref(), block);
    }

    /// Frees the block once `event` is done, without waiting here (the releaser thread
    /// waits when the work still runs).
    fn deallocate_after(&self, block: Block, _queue: Queue, event: Event) {
        let device = Arc::clone(&self.device);
        when_done(event, move || free(device.as_ref(), block));
    }
}

/// The upstream resource at `location`.
pub fn upstream(location: Location) -> Result<Arc<dyn MemoryResource>> {
    upstream_of_kind(location, MemoryKind::Default)
}

/// The upstream resource at `location` that allocates `kind` ([`Upstream::of_kind`]).
pub fn upstream_of_kind(location: Location, kind: MemoryKind) -> Result<Arc<dyn MemoryResource>> {
    let device = Arc::clone(crate::runtime::registry::registry().device(location)?);
    Ok(Arc::new(Upstream::of_kind(device, kind)?))
}

/// Managed (unified) memory of a CUDA or HIP device (RMM's `managed_memory_resource`:
/// `cuMemAllocManaged` / `hipMallocManaged`).
pub fn managed(location: Location) -> Result<Arc<dyn MemoryResource>> {
    upstream_of_kind(location, MemoryKind::Managed)
}

/// Page-locked host memory of a CUDA or HIP device (RMM's
/// `pinned_host_memory_resource`: `cuMemAllocHost` / `hipHostMalloc`); the blocks live
/// at the device's location and the host uses them in place.
pub fn pinned_host(location: Location) -> Result<Arc<dyn MemoryResource>> {
    upstream_of_kind(location, MemoryKind::PinnedHost)
}

/// A stream-ordered pool of locus's own per device (RMM's `cuda_async_memory_resource`:
/// `cuMemPoolCreate` / `hipMemPoolCreate`, then `cuMemAllocFromPoolAsync` /
/// `hipMallocFromPoolAsync` on the device's stream, freed in stream order; the device's
/// default pool, which other libraries share, is left as they set it), where the
/// driver has memory pools (CUDA 11.2+, ROCm 5.1+): an error naming the location
/// elsewhere.
pub fn stream_ordered(location: Location) -> Result<Arc<dyn MemoryResource>> {
    upstream_of_kind(location, MemoryKind::StreamOrdered)
}

/// The memory still available at `location` and its total, in bytes (RMM's
/// `available_device_memory`; see `available_memory` on `dyn Device`).
pub fn available_memory(location: Location) -> Result<(u64, u64)> {
    crate::runtime::registry::registry()
        .device(location)?
        .available_memory()
}

/// `percent` of the memory still available at `location`, rounded down to 256 bytes
/// (RMM's `percent_of_free_device_memory`): the usual initial size of a pool,
/// `Pool::new(upstream, percent_of_free_memory(location, 50)?, usize::MAX)`. `percent` is at
/// most 100.
pub fn percent_of_free_memory(location: Location, percent: u32) -> Result<usize> {
    if percent > 100 {
        return Err(Error::Invalid(format!(
            "{location}: {percent}% of the free memory asked; give a percentage from 0 to 100"
        )));
    }
    let (free, _) = available_memory(location)?;
    let bytes = u128::from(free) * u128::from(percent) / 100;
    let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    Ok(bytes & !255)
}
