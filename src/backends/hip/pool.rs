//! Locus's own stream-ordered pool per device (`hipMemPoolCreate`), as RMM's
//! `cuda_async_memory_resource` makes one: the device's default pool is shared with
//! every other stream-ordered allocator in the process (CuPy's and PyTorch's
//! `hipMallocAsync`), and tuning it would keep their freed memory from the system too.

use super::pool_sys::*;
use super::*;

impl HipApi {
    /// The current device's pool of locus's own, made through `calls` on first use:
    /// device memory of that device, no export handles, keeping all memory freed to it
    /// across synchronisations (release threshold: the most).
    pub(super) fn own_pool(&self, calls: &dyn HipPool) -> Result<hipMemPool_t, GpuError> {
        let ordinal = CURRENT.with(std::cell::Cell::get);
        let made = self
            .pools
            .get_or_make(ordinal as usize, "hipMemPoolCreate", || {
                let props = hipMemPoolProps {
                    allocType: hipMemAllocationType_hipMemAllocationTypePinned,
                    handleTypes: hipMemAllocationHandleType_hipMemHandleTypeNone,
                    location: hipMemLocation {
                        type_: hipMemLocationType_hipMemLocationTypeDevice,
                        id: ordinal as i32,
                    },
                    win32SecurityAttributes: std::ptr::null_mut(),
                    reserved: [0; 64],
                };
                let mut pool: hipMemPool_t = std::ptr::null_mut();
                // SAFETY: the device is current (the caller's contract for `alloc`); the
                // properties and the out-pointer are locals.
                self.check("hipMemPoolCreate", unsafe {
                    calls.hipMemPoolCreate(&mut pool, &props)
                })?;
                let mut threshold: u64 = u64::MAX;
                // SAFETY: the pool just made; the attribute's value is a u64 the call reads.
                let kept = self.check("hipMemPoolSetAttribute", unsafe {
                    calls.hipMemPoolSetAttribute(
                        pool,
                        hipMemPoolAttr_hipMemPoolAttrReleaseThreshold,
                        (&mut threshold as *mut u64).cast(),
                    )
                });
                if let Err(e) = kept {
                    // SAFETY: the pool just made, which nothing has allocated from.
                    let _ = unsafe { calls.hipMemPoolDestroy(pool) };
                    return Err(e);
                }
                Ok(pool as usize)
            })?;
        Ok(made as hipMemPool_t)
    }
}
