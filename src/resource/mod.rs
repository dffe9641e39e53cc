//! Memory resources (RMM's model, for every location): a [`MemoryResource`] hands out
//! [`Block`]s of one location's memory. The [`Upstream`] resource is the backend's raw
//! allocation, of any memory kind the location offers ([`managed`], [`pinned_host`],
//! the driver's [`stream_ordered`] pool, SYCL's USM kinds through [`upstream_of_kind`]); [`Pool`] sub-allocates large upstream blocks (coalescing best fit),
//! [`Arena`] gives each thread its own pool, [`FixedSize`] hands out blocks of one size
//! and [`Binning`] routes sizes to bins; [`SamHeadroom`] is system-allocated memory for a
//! GPU that pages it in, with headroom kept on the GPU;
//! adaptors ([`adaptor`]) wrap any resource: [`Statistics`], [`Limiting`], [`Tracking`],
//! [`FailureCallback`] and [`Logging`] (a CSV that `locus replay` replays); every
//! resource built over another names it (`upstream()`). Each
//! location has a default resource, read and replaced at run time ([`default_for`],
//! [`set_default`]); buffers allocate through it.
//!
//! ```
//! use std::sync::Arc;
//! use locus::resource::{self, MemoryResource, Pool, Statistics};
//! use locus::{Buffer, Location};
//!
//! // Route the host's buffers through a pool, and count what it does.
//! let pool = Arc::new(Pool::new(resource::upstream(Location::Host)?, 1 << 20, 64 << 20));
//! let counted = Arc::new(Statistics::new(pool));
//! let previous = resource::set_default(Location::Host, counted.clone())?;
//! {
//!     let b = Buffer::<f32>::zeroed(Location::Host, 1000)?;
//!     assert_eq!(counted.totals().current_bytes, 4000);
//!     drop(b);
//! }
//! assert_eq!(counted.totals().current_bytes, 0);
//! resource::set_default(Location::Host, previous)?;
//! # Ok::<(), locus::Error>(())
//! ```

pub mod adaptor;
mod arena;
mod binning;
mod fixed_size;
mod memory;
mod pool;
mod sam_headroom;
mod upstream;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

pub use adaptor::{
    log_file_from_env, FailureCallback, Limiting, Logging, Statistics, StatisticsTotals, Tracking,
    LOG_FILE_ALIAS, LOG_FILE_VARIABLE, LOG_HEADER,
};
pub use arena::Arena;
pub use binning::Binning;
pub use fixed_size::FixedSize;
pub use pool::Pool;
pub use sam_headroom::SamHeadroom;
pub use upstream::{
    available_memory, managed, percent_of_free_memory, pinned_host, stream_ordered, upstream,
    upstream_of_kind, Upstream,
};

pub use crate::core::block::Block;
use crate::core::block::ReturnBlock;
use crate::core::error::{Error, Result};
use crate::core::location::Location;

/// A source of memory at one location.
pub trait MemoryResource: ReturnBlock {
    /// Where its memory lives.
    fn location(&self) -> Location;
    /// One line about it (for `locus info` and logs).
    fn describe(&self) -> String;
    /// The device whose memory it hands out, when it knows it (an [`Upstream`] does, and
    /// adaptors pass on their upstream's); `None`: the registry's device at its location.
    fn device(&self) -> Option<Arc<dyn crate::core::device::Device>> {
        None
    }
    /// `bytes` aligned to at least `align`.
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block>;
    /// Takes a block back. A block from another resource is refused (and leaked rather
    /// than freed twice).
    fn deallocate(&self, block: Block);
    /// Allocates for work on `queue`: a [`Pool`] may hand out memory freed on the same
    /// queue while that queue's earlier work still runs (the new owner's work on the
    /// queue runs after it). The default: [`MemoryResource::allocate`].
    fn allocate_on(
        &self,
        bytes: usize,
        align: usize,
        _queue: crate::runtime::queue::Queue,
    ) -> Result<Block> {
        self.allocate(bytes, align)
    }
    /// Takes a block back once `event` (work on `queue` still using it) is done. The
    /// default waits for the event, then deallocates.
    fn deallocate_after(
        &self,
        block: Block,
        _queue: crate::runtime::queue::Queue,
        event: crate::runtime::event::Event,
    ) {
        let _ = event.wait();
        self.deallocate(block);
    }
}

/// The device whose memory `resource` hands out: the one it names
/// ([`MemoryResource::device`]), else the registry's at its location.
pub(crate) fn device_of(
    resource: &dyn MemoryResource,
) -> Result<Arc<dyn crate::core::device::Device>> {
    match resource.device() {
        Some(device) => Ok(device),
        None => crate::runtime::registry::registry()
            .device(resource.location())
            .map(Arc::clone),
    }
}

static DEFAULTS: RwLock<Option<HashMap<Location, Arc<dyn MemoryResource>>>> = RwLock::new(None);

/// The resource buffers at `location` allocate from (its upstream unless replaced).
pub fn default_for(location: Location) -> Result<Arc<dyn MemoryResource>> {
    // Before any lock: one held at a fork stays held in the child.
    crate::core::fork::check(location)?;
    if let Some(r) = DEFAULTS
        .read()
        .ok()
        .and_then(|m| m.as_ref().and_then(|m| m.get(&location).cloned()))
    {
        return Ok(r);
    }
    // First use at this location: remember its upstream, so that later allocations
    // take the read path above instead of making a resource each time.
    let made = upstream(location)?;
    let mut guard = DEFAULTS.write().unwrap_or_else(|e| e.into_inner());
    Ok(Arc::clone(
        guard
            .get_or_insert_with(HashMap::new)
            .entry(location)
            .or_insert(made),
    ))
}

/// Replaces the default resource of `location` (thread safe); returns the previous one.
/// Memory already allocated goes back to the resource that made it. A resource whose
/// memory lives elsewhere is refused (a buffer made "at" `location` would silently live
/// at the resource's location).
pub fn set_default(
    location: Location,
    resource: Arc<dyn MemoryResource>,
) -> Result<Arc<dyn MemoryResource>> {
    if resource.location() != location {
        return Err(Error::Invalid(format!(
            "{location}: the default resource must allocate at {location}, and `{}` allocates at {}; make it over upstream({location})",
            resource.describe(),
            resource.location()
        )));
    }
    let mut guard = DEFAULTS.write().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    let previous = map.insert(location, resource);
    drop(guard);
    Ok(previous
        .unwrap_or_else(|| upstream(location).unwrap_or_else(|_| unreachable_upstream(location))))
}

/// An upstream for a location this machine does not have: every allocation fails with
/// the reason.
fn unreachable_upstream(location: Location) -> Arc<dyn MemoryResource> {
    struct Missing(Location);
    impl MemoryResource for Missing {
        fn location(&self) -> Location {
            self.0
        }
        fn describe(&self) -> String {
            format!("missing({})", self.0)
        }
        fn allocate(&self, _: usize, _: usize) -> Result<Block> {
            Err(Error::Unavailable {
                location: self.0,
                reason: crate::runtime::registry::registry().why_missing(self.0),
            })
        }
        fn deallocate(&self, _: Block) {}
    }
    Arc::new(Missing(location))
}

/// Every resource takes its blocks back as the core's [`ReturnBlock`], so memory on loan
/// from it holds the resource and the block inline.
impl<R: MemoryResource + ?Sized> ReturnBlock for R {
    fn return_block(&self, block: Block) {
        self.deallocate(block);
    }

    fn return_block_after(&self, block: Block, after: &dyn std::any::Any) {
        match after.downcast_ref::<(crate::runtime::queue::Queue, crate::runtime::event::Event)>() {
            Some((queue, event)) => self.deallocate_after(block, *queue, event.clone()),
            // Not this layer's token: the block cannot be known free; it is never given
            // back (leaked) rather than handed out under running work
            // (`Memory::release_after` always passes one).
            None => {
                let _never_given_back = block;
            }
        }
    }

    fn lender_name(&self) -> String {
        MemoryResource::describe(self)
    }
}
