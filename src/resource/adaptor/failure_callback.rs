//! [`FailureCallback`]: calls back on a failed allocation and retries (RMM's `failure_callback_resource_adaptor`).

use std::sync::Arc;

use crate::core::block::Block;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::resource::MemoryResource;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// Calls `on_failure(bytes)` when an allocation runs out of memory
/// ([`Error::OutOfMemory`](crate::Error::OutOfMemory)); when it returns true (it freed
/// something), the allocation is tried again, up to `retries` times. Any other error
/// (a bad alignment, a missing device) is returned at once, without a callback.
pub struct FailureCallback {
    inner: Arc<dyn MemoryResource>,
    on_failure: Box<dyn Fn(usize) -> bool + Send + Sync>,
    retries: usize,
}

impl FailureCallback {
    /// The resource this one takes its memory from (RMM's `get_upstream_resource`).
    pub fn upstream(&self) -> &Arc<dyn MemoryResource> {
        &self.inner
    }

    /// Wraps `inner`.
    pub fn new(
        inner: Arc<dyn MemoryResource>,
        retries: usize,
        on_failure: impl Fn(usize) -> bool + Send + Sync + 'static,
    ) -> FailureCallback {
        FailureCallback {
            inner,
            on_failure: Box::new(on_failure),
            retries,
        }
    }
}

impl MemoryResource for FailureCallback {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn device(&self) -> Option<std::sync::Arc<dyn crate::core::device::Device>> {
        self.inner.device()
    }
    fn describe(&self) -> String {
        format!("failure-callback({})", self.inner.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        self.retrying(bytes, |inner| inner.allocate(bytes, align))
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        self.retrying(bytes, |inner| inner.allocate_on(bytes, align, queue))
    }
    fn deallocate(&self, block: Block) {
        self.inner.deallocate(block);
    }
    fn deallocate_after(&self, block: Block, queue: Queue, event: Event) {
        self.inner.deallocate_after(block, queue, event);
    }
}

impl FailureCallback {
    /// Runs `allocate`, calling back and trying again while it runs out of memory.
    fn retrying(
        &self,
        bytes: usize,
        allocate: impl Fn(&dyn MemoryResource) -> Result<Block>,
    ) -> Result<Block> {
        let mut calls = 0;
        loop {
            match allocate(self.inner.as_ref()) {
                Ok(b) => return Ok(b),
                Err(e) if e.is_out_of_memory() && calls < self.retries => {
                    calls += 1;
                    if !(self.on_failure)(bytes) {
                        return Err(called(e, calls, false));
                    }
                }
                Err(e) if e.is_out_of_memory() && calls > 0 => return Err(called(e, calls, true)),
                Err(e) => return Err(e),
            }
        }
    }
}

/// An out-of-memory error that says how often the callback ran, and whether the
/// retries ran out.
fn called(mut e: Error, calls: usize, at_limit: bool) -> Error {
    if let Error::OutOfMemory { reason, .. } = &mut e {
        let limit = if at_limit {
            " (its limit of retries)"
        } else {
            ""
        };
        reason.push_str(&format!(
            "; the failure callback was called {calls} times{limit}"
        ));
    }
    e
}
