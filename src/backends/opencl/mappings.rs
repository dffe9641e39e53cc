//! Host mappings of OpenCL buffers, one per buffer, shared by everyone mapping it.
//!
//! Two threads mapping one buffer at once (copies out of one buffer to several
//! locations, a user's mapping beside a copy) each made a mapping of their own, and one's
//! unmap pulled the memory from under the other still reading it: the process crashed
//! inside PoCL's and Intel's runtimes. Here a buffer is mapped once, whole, for reading and
//! writing (host access maps only on host-unified devices, where a mapping is the
//! buffer's own memory, no copy), counted, and unmapped when the last user is done.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use opencl3::types::cl_mem;

use crate::core::error::Result;

/// The open mapping of each buffer mapped now, by `cl_mem` address.
#[derive(Default)]
pub(super) struct Mappings(Mutex<HashMap<usize, Shared>>);

struct Shared {
    /// The host address of the buffer's byte 0.
    host: usize,
    /// Users of the mapping now.
    users: usize,
}

impl Mappings {
    fn table(&self) -> MutexGuard<'_, HashMap<usize, Shared>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The host address of `mem`'s byte 0, counted until [`Mappings::release`]: the open
    /// mapping's, or one `map_whole` makes when there is none. Held across `map_whole`,
    /// so a buffer is never mapped twice at once.
    pub(super) fn acquire(
        &self,
        mem: cl_mem,
        map_whole: impl FnOnce() -> Result<*mut u8>,
    ) -> Result<*mut u8> {
        let mut table = self.table();
        if let Some(shared) = table.get_mut(&(mem as usize)) {
            shared.users += 1;
            return Ok(shared.host as *mut u8);
        }
        let host = map_whole()?;
        table.insert(
            mem as usize,
            Shared {
                host: host as usize,
                users: 1,
            },
        );
        Ok(host)
    }

    /// Counts one user of `mem`'s mapping out; the last one unmaps it with `unmap`
    /// (given the mapping's host address), under the table's lock so that no new mapping
    /// of the buffer starts before the old one is gone. `None` when `mem` has no open
    /// mapping here.
    pub(super) fn release(
        &self,
        mem: cl_mem,
        unmap: impl FnOnce(*mut u8) -> Result<()>,
    ) -> Option<Result<()>> {
        let mut table = self.table();
        let shared = table.get_mut(&(mem as usize))?;
        shared.users -= 1;
        if shared.users > 0 {
            return Some(Ok(()));
        }
        let host = shared.host as *mut u8;
        table.remove(&(mem as usize));
        Some(unmap(host))
    }
}
