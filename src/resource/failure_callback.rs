//! [`FailureCallback`]: calls back on a failed allocation and retries (RMM's `failure_callback_resource_adaptor`).

use std::sync::Arc;

use super::{Block, MemoryResource};
use crate::core::error::Result;
use crate::core::location::Location;

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
    fn describe(&self) -> String {
        format!("failure-callback({})", self.inner.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let mut attempt = 0;
        loop {
            match self.inner.allocate(bytes, align) {
                Ok(b) => return Ok(b),
                Err(e)
                    if e.is_out_of_memory()
                        && attempt < self.retries
                        && (self.on_failure)(bytes) =>
                {
                    attempt += 1;
                    let _ = e;
                }
                Err(e) => return Err(e),
            }
        }
    }
    fn deallocate(&self, block: Block) {
        self.inner.deallocate(block);
    }
}
