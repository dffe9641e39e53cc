//! Locus's own stream-ordered pool per device (`cuMemPoolCreate`), as RMM's
//! `cuda_async_memory_resource` makes one: the device's default pool is shared with
//! every other stream-ordered allocator in the process (CuPy's and PyTorch's
//! `cudaMallocAsync`), and tuning it (a release threshold that keeps freed memory)
//! would keep their freed memory from the system too; if another library made a
//! different pool current, `cuMemAllocAsync` would allocate from that one while locus
//! tuned the default.

use super::*;

impl CudaApi {
    /// The current device's pool of locus's own, made on first use: device memory of
    /// that device, no export handles, keeping all memory freed to it across
    /// synchronisations (release threshold: the most), so that the next stream-ordered
    /// allocation reuses it instead of asking the system.
    pub(super) fn own_pool(&self) -> Result<sys::CUmemoryPool, GpuError> {
        let ordinal = self.current_ordinal();
        let made = self.pools.get_or_make(ordinal, "cuMemPoolCreate", || {
            let props = sys::CUmemPoolProps {
                allocType: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
                handleTypes: sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
                location: sys::CUmemLocation {
                    type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                    id: ordinal as i32,
                },
                win32SecurityAttributes: std::ptr::null_mut(),
                maxSize: 0,
                usage: 0,
                reserved: [0; 54],
            };
            let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
            // SAFETY: the device's context is current (the caller's contract for
            // `alloc`); the properties and the out-pointer are locals.
            unsafe { self.driver.cuMemPoolCreate(&mut pool, &props) }
                .result()
                .map_err(self.err("cuMemPoolCreate"))?;
            let mut threshold: u64 = u64::MAX;
            // SAFETY: the pool just made; the attribute's value is a u64 the call reads.
            let kept = unsafe {
                self.driver.cuMemPoolSetAttribute(
                    pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    (&mut threshold as *mut u64).cast(),
                )
            };
            if let Err(e) = kept.result() {
                // SAFETY: the pool just made, which nothing has allocated from.
                let _ = unsafe { self.driver.cuMemPoolDestroy(pool) };
                return Err(self.err("cuMemPoolSetAttribute")(e));
            }
            Ok(pool as usize)
        })?;
        Ok(made as sys::CUmemoryPool)
    }
}
