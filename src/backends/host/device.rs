//! The host's [`Device`] implementation: the global allocator, `memcpy`, plain
//! pointers for host access.

use super::*;

impl Device for HostDevice {
    fn location(&self) -> Location {
        Location::Host
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        let ptr = if bytes >= pages::THRESHOLD {
            pages::map(bytes).map_err(|reason| Error::OutOfMemory {
                location: Location::Host,
                requested: bytes,
                by: "mmap".into(),
                reason: reason.to_string(),
            })?
        } else {
            let layout = layout(bytes)?;
            // SAFETY: the layout has a non-zero size.
            let ptr = unsafe { alloc::alloc_zeroed(layout) };
            if ptr.is_null() {
                return Err(Error::OutOfMemory {
                    location: Location::Host,
                    requested: bytes,
                    by: "alloc_zeroed".into(),
                    reason: "the global allocator returned null".into(),
                });
            }
            ptr
        };
        self.live.fetch_add(1, Ordering::Relaxed);
        Ok(Native::Host { ptr })
    }

    unsafe fn free(&self, native: &Native, bytes: usize) {
        if bytes >= pages::THRESHOLD {
            // SAFETY: per the caller's contract the pointer came from `allocate(bytes)`,
            // which mapped it (same size, same threshold).
            unsafe { pages::unmap(ptr_of(native), bytes) };
        } else if let Ok(layout) = layout(bytes) {
            // SAFETY: per the caller's contract the pointer came from `allocate(bytes)`,
            // which used this same layout.
            unsafe { alloc::dealloc(ptr_of(native), layout) };
        }
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, _native: &Native) -> HostAccess {
        HostAccess::Pointer
    }

    fn host_reach(&self) -> HostReach {
        HostReach::generic(HostAccess::Pointer)
    }

    fn executes_on_host(&self) -> bool {
        true
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        // SAFETY: `Memory` checked `offset + src.len()` against the allocation size, and
        // `src` cannot overlap the destination (it is borrowed from elsewhere).
        unsafe { std::ptr::copy(src.as_ptr(), ptr_of(dst).add(offset), src.len()) };
        Ok(())
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        // SAFETY: bounds checked by `Memory`; `dst` is an exclusive borrow.
        unsafe { std::ptr::copy(ptr_of(src).add(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn copy_within(
        &self,
        src: &Native,
        src_offset: usize,
        dst: &Native,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        // SAFETY: both ranges were bounds-checked by `Memory`; `copy` allows overlap.
        unsafe {
            std::ptr::copy(
                ptr_of(src).add(src_offset),
                ptr_of(dst).add(dst_offset),
                len,
            )
        };
        Ok(())
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        // SAFETY: bounds checked by `Memory`; the slice does not outlive this call and
        // nothing else writes the range during it (the caller holds the memory).
        let target = unsafe { std::slice::from_raw_parts_mut(ptr_of(dst).add(offset), len) };
        if pattern.iter().all(|&b| b == pattern[0]) {
            target.fill(pattern[0]);
        } else {
            for chunk in target.chunks_exact_mut(pattern.len()) {
                chunk.copy_from_slice(pattern);
            }
        }
        Ok(())
    }

    fn map(&self, native: &Native, offset: usize, _len: usize, _write: bool) -> Result<*mut u8> {
        // SAFETY: bounds checked by the caller.
        Ok(unsafe { ptr_of(native).add(offset) })
    }

    unsafe fn unmap(&self, _native: &Native, _ptr: *mut u8) -> Result<()> {
        Ok(())
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        let base = match parent {
            Native::Host { ptr } => *ptr,
            // Other variants exist only with other backends' features.
            #[allow(unreachable_patterns)]
            other => {
                return Err(Error::Invalid(format!(
                    "host: cannot sub-allocate inside {other:?}, which is not host memory (a resource over another device's memory must name its device)"
                )))
            }
        };
        // SAFETY: the sub-allocator keeps `offset + len` inside the parent allocation.
        let ptr = unsafe { base.add(offset) };
        Ok(Native::Host { ptr })
    }
    fn native_calls(&self) -> Option<&dyn NativeCalls> {
        Some(self)
    }

    fn host_memory_in_place(&self) -> Option<&dyn HostMemoryInPlace> {
        Some(self)
    }
}

// The host's own calls are `memcpy`: locus's write, read and copy.
native_calls_are_own!(HostDevice, |_direction| "memcpy");

impl HostMemoryInPlace for HostDevice {
    unsafe fn use_host_memory(&self, ptr: *mut u8, _len: usize) -> Result<InPlace> {
        Ok(InPlace::Address(Native::Host { ptr }))
    }
}
