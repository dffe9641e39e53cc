//! [`Tracking`]: records every live allocation and reports leaks (RMM's `tracking_resource_adaptor`).

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use super::{Block, MemoryResource};
use crate::core::error::Result;
use crate::core::location::Location;
use crate::runtime::event::Event;
use crate::runtime::queue::Queue;

/// Records every live allocation; the ones still alive when it is dropped are reported
/// as leaks (and can be listed any time with [`Tracking::leaks`]). Blocks are recorded
/// by their handle ([`Native::key`](crate::Native::key)), so the block's id stays the
/// inner resource's own.
pub struct Tracking {
    inner: Arc<dyn MemoryResource>,
    live: Mutex<LiveBlocks>,
}

/// Each live block's size and the thread that made it, by its handle's key.
type LiveBlocks = rustc_hash::FxHashMap<(u64, u64), (usize, ThreadId)>;

impl Tracking {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn MemoryResource>) -> Tracking {
        Tracking {
            inner,
            live: Mutex::new(LiveBlocks::default()),
        }
    }

    /// The allocations alive now: (bytes, thread that made it).
    pub fn leaks(&self) -> Vec<(usize, String)> {
        self.live
            .lock()
            .map(|m| {
                m.values()
                    .map(|(bytes, thread)| (*bytes, format!("{thread:?}")))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn record(&self, block: Result<Block>) -> Result<Block> {
        let block = block?;
        thread_local! {
            static ME: ThreadId = std::thread::current().id();
        }
        let thread = ME.with(|id| *id);
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(block.native.key(), (block.bytes, thread));
        Ok(block)
    }

    fn forget(&self, block: &Block) {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&block.native.key());
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
        self.record(self.inner.allocate(bytes, align))
    }
    fn allocate_on(&self, bytes: usize, align: usize, queue: Queue) -> Result<Block> {
        self.record(self.inner.allocate_on(bytes, align, queue))
    }
    fn deallocate(&self, block: Block) {
        self.forget(&block);
        self.inner.deallocate(block);
    }
    fn deallocate_after(&self, block: Block, queue: Queue, event: Event) {
        self.forget(&block);
        self.inner.deallocate_after(block, queue, event);
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
