//! Locus's own stream-ordered pool per device (`hipMemPoolCreate`), as RMM's
//! `cuda_async_memory_resource` makes one: the device's default pool is shared with
//! every other stream-ordered allocator in the process (CuPy's and PyTorch's
//! `hipMallocAsync`), and tuning it would keep their freed memory from the system too.

use super::pool_sys::*;
use super::*;

impl HipApi {
    /// The current device's pool of locus's own, made on first use (null on a runtime
    /// without pools, whose allocation then answers not supported): device memory of that
    /// device, no export handles, keeping all memory freed to it across synchronisations
    /// (release threshold: the most).
    pub(super) fn own_pool(&self) -> Result<hipMemPool_t, GpuError> {
        let Some(calls) = &self.pool else {
            return Ok(std::ptr::null_mut());
        };
        let ordinal = CURRENT.with(std::cell::Cell::get);
        let mut pools = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        let slot = pools.get_mut(ordinal as usize).ok_or_else(|| {
            GpuError::other("hipMemPoolCreate", format!("no HIP device {ordinal}"))
        })?;
        if *slot != 0 {
            return Ok(*slot as hipMemPool_t);
        }
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
        *slot = pool as usize;
        Ok(pool)
    }
}
