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
        crate::core::fork::check("Memory::from_resource")?;
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
        crate::core::fork::check("Memory::from_resource_on")?;
        let block = resource.allocate_on(bytes, ALIGNMENT, queue)?;
        let memory = Memory::from_block(resource, block, bytes)?;
        // The block may have been freed on `queue` with work of the queue's still using
        // it: work on the queue comes after that work by itself; a synchronous use (a
        // `write`, a `read`) waits for it first.
        let pending = queue.pending();
        if !pending.is_empty() {
            memory.wait_before_host_use(move || {
                pending.iter().map(Event::wait).fold(Ok(()), Result::and)
            });
        }
        Ok(memory)
    }

    fn from_block(
        resource: &Arc<dyn MemoryResource>,
        block: Block,
        bytes: usize,
    ) -> Result<Memory> {
        let device = match super::device_of(&**resource) {
            Ok(d) => d,
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
    /// work still holds this memory (the work keeps its own handle until it is done).
    ///
    /// It takes the caller's handle, so the memory cannot be used through it afterwards;
    /// any other handle of it that the caller kept is refused from then on (every
    /// operation through it is an error naming the memory). Memory not from a resource
    /// is freed when its last handle goes. A second release of the same memory is an
    /// error, and changes nothing.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use locus::{resource, Event, Location, Memory, Queue};
    /// let pool = resource::default_for(Location::Host)?;
    /// let a = Arc::new(Memory::from_resource(&pool, 64)?);
    /// a.write(0, &[0xee; 4])?;
    /// a.release_after(Queue::new(), Event::done())?;
    /// # Ok::<(), locus::Error>(())
    /// ```
    ///
    /// Using it afterwards does not compile:
    ///
    /// ```compile_fail
    /// use std::sync::Arc;
    /// use locus::{resource, Event, Location, Memory, Queue};
    /// let pool = resource::default_for(Location::Host)?;
    /// let a = Arc::new(Memory::from_resource(&pool, 64)?);
    /// a.release_after(Queue::new(), Event::done())?;
    /// a.write(0, &[0xee; 4])?; // use after release
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn release_after(self: Arc<Self>, queue: Queue, event: Event) -> Result<()> {
        match self.take_loan() {
            Some((lender, block)) => {
                lender.return_block_after(block, &(queue, event));
                Ok(())
            }
            None if self.is_released() => Err(crate::core::error::Error::Invalid(format!(
                "{}: release_after of the memory at {:#x} ({} bytes), which was given back \
                 already: a block is released once",
                self.location(),
                self.native().address(),
                self.len()
            ))),
            None => Ok(()),
        }
    }
}
