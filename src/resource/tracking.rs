//! [`Tracking`]: records every live allocation and reports leaks (RMM's `tracking_resource_adaptor`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{Block, MemoryResource};
use crate::core::error::Result;
use crate::core::location::Location;

/// Records every live allocation; the ones still alive when it is dropped are reported
/// as leaks (and can be listed any time with [`Tracking::leaks`]).
pub struct Tracking {
    inner: Arc<dyn MemoryResource>,
    live: Mutex<HashMap<u64, (usize, String)>>,
    next: AtomicUsize,
}

impl Tracking {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn MemoryResource>) -> Tracking {
        Tracking {
            inner,
            live: Mutex::new(HashMap::new()),
            next: AtomicUsize::new(1),
        }
    }

    /// The allocations alive now: (bytes, thread that made it).
    pub fn leaks(&self) -> Vec<(usize, String)> {
        self.live
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }
}

impl MemoryResource for Tracking {
    fn location(&self) -> Location {
        self.inner.location()
    }
    fn describe(&self) -> String {
        format!("tracking({})", self.inner.describe())
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let mut block = self.inner.allocate(bytes, align)?;
        // The tracker keys blocks by its own id, kept in the high bits of the block's id
        // so that the inner resource still recognises its part.
        let key = self.next.fetch_add(1, Ordering::Relaxed) as u64;
        let thread = format!("{:?}", std::thread::current().id());
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key << 40 | block.id, (bytes, thread));
        block.id |= key << 40;
        Ok(block)
    }
    fn deallocate(&self, mut block: Block) {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&block.id);
        block.id &= (1 << 40) - 1;
        self.inner.deallocate(block);
    }
}

impl Drop for Tracking {
    fn drop(&mut self) {
        let leaks = self.leaks();
        if !leaks.is_empty() {
            let bytes: usize = leaks.iter().map(|l| l.0).sum();
            eprintln!(
                "locus: {} allocation(s) of {bytes} bytes at {} were never freed (tracking adaptor)",
                leaks.len(),
                self.location()
            );
        }
    }
}
