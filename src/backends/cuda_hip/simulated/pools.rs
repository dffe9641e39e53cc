//! The simulated driver's stream-ordered pools: what they keep, when they give it back,
//! and who may use their memory.

use super::*;

impl Strict {
    /// Bytes in use: live allocations and what the pools keep.
    pub(super) fn used(&self) -> usize {
        let live: usize = self.sizes().values().map(|(n, _, _)| n).sum();
        let pools = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        live + pools.iter().map(|(kept, _)| kept).sum::<usize>()
    }

    /// A synchronisation: the pool of `device` gives its kept memory back to the system
    /// unless its release threshold says keep it (CUDA's default threshold is 0).
    pub(super) fn trim_pool(&self, device: u32) {
        let mut pools = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(pool) = pools.get_mut(device as usize).filter(|p| !p.1) {
            pool.0 = 0;
        }
    }

    /// A kernel on `device` given a pointer into another device's pool memory: peer
    /// access covers `cuMemAlloc` memory, not the pool's, which needs
    /// `cuMemPoolSetAccess` (not modelled: locus never grants it).
    ///
    /// # Safety
    /// Each of `params` points to an 8-byte value (the backend's argument slots).
    pub(super) unsafe fn check_pool_access(
        &self,
        device: u32,
        params: &[*mut c_void],
    ) -> Result<(), GpuError> {
        let sizes = self.sizes();
        for &p in params {
            // SAFETY: per this function's contract.
            let value = unsafe { (p as *const u64).read_unaligned() };
            let foreign = sizes.iter().any(|(&start, &(bytes, owner, kind))| {
                kind == GpuMemory::StreamOrdered
                    && owner != device
                    && (start..start + bytes as u64).contains(&value)
            });
            if foreign {
                return Err(error(
                    "cuLaunchKernel",
                    ILLEGAL_ADDRESS,
                    &format!(
                        "CUDA_ERROR_ILLEGAL_ADDRESS: a kernel on device {device} used {value:#x}, stream-ordered pool memory of another device"
                    ),
                ));
            }
        }
        Ok(())
    }
}
