//! [`Upstream`]: the backend's raw allocation at one location (RMM's device memory
//! resources: `cuda_memory_resource` and its kin).

use std::sync::Arc;

use super::{Block, MemoryResource};
use crate::core::aligned::{allocate_aligned, free_aligned};
use crate::core::device::Device;
use crate::core::error::Result;
use crate::core::location::Location;
use crate::runtime::event::{when_done, Event};
use crate::runtime::queue::Queue;

/// The backend's raw allocation at one location (`clCreateBuffer`, `cuMemAlloc`, ...).
/// Any power-of-two alignment: beyond what the backend gives, the aligned part of a
/// larger allocation (its [`Block::origin`]).
pub struct Upstream {
    device: Arc<dyn Device>,
}

impl Upstream {
    /// The upstream resource of `device`.
    pub fn new(device: Arc<dyn Device>) -> Upstream {
        Upstream { device }
    }

    /// The device it allocates on.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
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

    fn describe(&self) -> String {
        format!("upstream({})", self.device.location())
    }

    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let (native, origin) = allocate_aligned(self.device.as_ref(), bytes, align)?;
        Ok(Block {
            native,
            bytes,
            id: 0,
            location: self.device.location(),
            origin: origin.map(Box::new),
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
    let device = Arc::clone(crate::runtime::registry::registry().device(location)?);
    Ok(Arc::new(Upstream::new(device)))
}
