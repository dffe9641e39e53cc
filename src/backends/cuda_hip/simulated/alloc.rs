//! Allocation in the simulated driver: device memory is host memory, aligned as the
//! real calls align it, filled with a pattern (so that reading memory nothing wrote
//! shows), and counted against the device's memory (the stream-ordered pool's kept
//! memory serves its allocations first).

use super::*;

/// What `cuMemAlloc`, `cuMemAllocFromPoolAsync`, `cuMemAllocHost` and `cuMemAllocManaged`
/// guarantee for the start of an allocation.
pub(super) const DRIVER_ALIGNMENT: usize = 256;

impl Strict {
    pub(super) fn alloc_now(&self, kind: GpuMemory, bytes: usize) -> Result<u64, GpuError> {
        let call = match kind {
            GpuMemory::StreamOrdered => "cuMemAllocFromPoolAsync",
            _ => "cuMemAlloc",
        };
        let ordinal = self.enter(call)?;
        if kind == GpuMemory::StreamOrdered {
            let mut pools = self.pools.lock().unwrap_or_else(|e| e.into_inner());
            let made = pools.get_mut(ordinal as usize).is_some_and(|pool| {
                // The pool's kept memory serves the allocation first.
                pool.0 = pool.0.saturating_sub(bytes);
                // Locus's own pool, made (and told to keep freed memory) on first use,
                // as CudaApi / HipApi make theirs.
                !std::mem::replace(&mut pool.1, true)
            });
            // The pools' lock released before the state's (queued frees take them in
            // the other order).
            drop(pools);
            if made {
                let mut state = self.lock();
                state.calls.push("cuMemPoolCreate");
                state.calls.push("cuMemPoolSetAttribute");
            }
        }
        let used = self.used();
        if bytes > self.memory.saturating_sub(used) {
            return Err(error(
                call,
                OUT_OF_MEMORY,
                "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            ));
        }
        // The real calls return memory aligned to at least 256 bytes, for every kind.
        let Ok(layout) = std::alloc::Layout::from_size_align(bytes.max(1), DRIVER_ALIGNMENT) else {
            return Err(error(
                call,
                OUT_OF_MEMORY,
                "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            ));
        };
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        if raw.is_null() {
            return Err(error(
                call,
                OUT_OF_MEMORY,
                "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
            ));
        }
        // SAFETY: `raw` is a fresh allocation of `layout.size()` bytes.
        unsafe { raw.write_bytes(0xa5, layout.size()) };
        let ptr = raw as u64;
        self.sizes().insert(ptr, (bytes, ordinal, kind));
        Ok(ptr)
    }
}
