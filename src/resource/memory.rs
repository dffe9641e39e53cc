//! [`Memory`] from a resource: [`Memory::from_resource`] and [`Memory::from_resource_on`]
//! take a block and give it back on drop; [`Memory::release_after`] gives it back once
//! running work is done.

use std::sync::Arc;

use super::{Block, MemoryResource};
use crate::core::block::ReturnBlock;
use crate::core::device::ALIGNMENT;
use crate::core::error::Result;
use crate::core::memory::Memory;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;
use crate::runtime::registry::registry;

impl Memory {
    /// Allocates `bytes` from `resource`; the memory goes back to it on drop.
    pub fn from_resource(resource: &Arc<dyn MemoryResource>, bytes: usize) -> Result<Memory> {
        Memory::from_resource_aligned(resource, bytes, ALIGNMENT)
    }

    /// Allocates `bytes` from `resource` at an address that is a multiple of `align`
    /// (any power of two; pools carve an aligned range, upstream pads when it must);
    /// [`Memory::aligned_origin`] gives the allocation it was carved from.
    pub fn from_resource_aligned(
        resource: &Arc<dyn MemoryResource>,
        bytes: usize,
        align: usize,
    ) -> Result<Memory> {
        let block = resource.allocate(bytes, align)?;
        Memory::from_block(resource, block, bytes)
    }

    /// Allocates `bytes` from `resource` for work on `queue`. Stream-ordered: a pool may
    /// hand out memory freed on the same queue whose earlier work is still running, so
    /// use it in work submitted on `queue` ([`Memory::copy_to_async_on`]), or after
    /// [`Queue::wait`], as with CUDA's stream-ordered allocations.
    pub fn from_resource_on(
        resource: &Arc<dyn MemoryResource>,
        bytes: usize,
        queue: Queue,
    ) -> Result<Memory> {
        let block = resource.allocate_on(bytes, ALIGNMENT, queue)?;
        Memory::from_block(resource, block, bytes)
    }

    fn from_block(
        resource: &Arc<dyn MemoryResource>,
        block: Block,
        bytes: usize,
    ) -> Result<Memory> {
        let device = match registry().device(resource.location()) {
            Ok(d) => Arc::clone(d),
            Err(e) => {
                resource.deallocate(block);
                return Err(e);
            }
        };
        let resource: Arc<dyn MemoryResource> = Arc::clone(resource);
        let lender: Arc<dyn ReturnBlock> = resource;
        // SAFETY: the block is a live allocation of at least `bytes` bytes of the
        // resource's device, which stays valid until it goes back to the resource.
        Ok(unsafe { Memory::on_loan(device, bytes, lender, block) })
    }

    /// Gives the memory back to its resource once `event` (the last work using it) is
    /// done, without waiting here: a [`Pool`](super::Pool) keeps the range aside
    /// and hands it out again only after the event. Safe to call while asynchronous
    /// work still holds this memory; the memory must not be used after this call.
    /// Memory not from a resource is freed when its last handle goes.
    pub fn release_after(self: &Arc<Self>, queue: Queue, event: Event) {
        if let Some((lender, block)) = self.take_loan() {
            lender.return_block_after(block, &(queue, event));
        }
    }
}
