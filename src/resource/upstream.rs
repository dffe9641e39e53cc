//! [`Upstream`]: the backend's raw allocation at one location (RMM's device memory
//! resources: `cuda_memory_resource` and its kin).

use std::sync::Arc;

use super::{Block, MemoryResource};
use crate::core::device::Device;
use crate::core::error::{Error, Result};
use crate::core::location::Location;

/// The backend's raw allocation at one location (`clCreateBuffer`, `cuMemAlloc`, ...).
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

impl MemoryResource for Upstream {
    fn location(&self) -> Location {
        self.device.location()
    }

    fn describe(&self) -> String {
        format!("upstream({})", self.device.location())
    }

    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let location = self.device.location();
        if align > crate::core::device::ALIGNMENT {
            return Err(Error::Invalid(format!(
                "{location}: upstream allocations are aligned to {} bytes; {align} was asked for (use a pool)",
                crate::core::device::ALIGNMENT
            )));
        }
        let max = self.device.info().max_allocation;
        if bytes as u64 > max {
            return Err(Error::TooLarge {
                location,
                requested: bytes,
                max: max as usize,
            });
        }
        Ok(Block {
            native: self.device.allocate(bytes)?,
            bytes,
            id: 0,
            location,
        })
    }

    fn deallocate(&self, block: Block) {
        if block.location != self.device.location() || block.id != 0 {
            return; // not ours: leak rather than free twice
        }
        // SAFETY: the block came from this device's `allocate` (checked above as far as
        // the handle allows) and is given back exactly once (blocks are not Clone).
        unsafe { self.device.free(&block.native, block.bytes) };
    }
}

/// The upstream resource at `location`.
pub fn upstream(location: Location) -> Result<Arc<dyn MemoryResource>> {
    let device = Arc::clone(crate::runtime::registry::registry().device(location)?);
    Ok(Arc::new(Upstream::new(device)))
}
