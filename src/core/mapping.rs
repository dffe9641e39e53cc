//! [`HostMapping`]: host access to a range of a [`Memory`] in place.

use std::ops::Range;
use std::sync::Arc;

use super::device::HostAccess;
use super::error::{Error, Result};
use super::memory::Memory;

/// Host access to a range of a [`Memory`] in place: a plain pointer for host-addressable
/// memory, or a map / unmap pair (an OpenCL buffer on a CPU device). Unmaps on drop.
pub struct HostMapping {
    memory: Arc<Memory>,
    ptr: *mut u8,
    len: usize,
    write: bool,
}

// SAFETY: the mapping is a host address range owned by this value; moving it to another
// thread moves the only handle to it (unmap is thread-safe in every backend).
unsafe impl Send for HostMapping {}
// SAFETY: shared access only hands out `&[u8]`.
unsafe impl Sync for HostMapping {}

impl HostMapping {
    pub(super) fn new(
        memory: Arc<Memory>,
        range: Range<usize>,
        write: bool,
    ) -> Result<HostMapping> {
        let len = memory.check_range("map", &range)?;
        if memory.host_access() == HostAccess::None {
            return Err(Error::NotHostAccessible {
                location: memory.location(),
            });
        }
        let ptr = if len == 0 {
            std::ptr::NonNull::<u64>::dangling().as_ptr().cast()
        } else {
            memory
                .device()
                .map(memory.native(), range.start, len, write)?
        };
        Ok(HostMapping {
            memory,
            ptr,
            len,
            write,
        })
    }

    /// The mapped bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` addresses `len` mapped bytes (or is dangling and aligned for
        // len 0) that stay valid until drop; `&self` stops a `&mut` view coexisting.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The mapped bytes, writable. Errors if the mapping was made read-only.
    pub fn as_mut_slice(&mut self) -> Result<&mut [u8]> {
        if !self.write {
            return Err(Error::Invalid(format!(
                "{}: this mapping is read-only; use access_mut to write",
                self.memory.location()
            )));
        }
        // SAFETY: as in `as_slice`, and `&mut self` makes this the only view.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// The host address of the first mapped byte.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// The memory this maps.
    pub fn memory(&self) -> &Arc<Memory> {
        &self.memory
    }
}

impl Drop for HostMapping {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: `ptr` came from `map` on this memory; no slice outlives `self`.
            // An unmap error cannot be reported from drop; the backends log nothing and
            // the memory stays valid, so it is ignored.
            let _ = unsafe { self.memory.device().unmap(self.memory.native(), self.ptr) };
        }
    }
}
