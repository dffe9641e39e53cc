//! [`SamHeadroom`]: system-allocated memory for a GPU that pages it in on use, with
//! headroom left on the GPU (RMM's `sam_headroom_memory_resource`).

use std::sync::Arc;

use super::{Block, MemoryResource};
use crate::core::device::Device;
use crate::core::device::ALIGNMENT;
use crate::core::error::{Error, Result};
use crate::core::location::Location;

/// Host memory (the system's allocation: locus's host upstream) for a GPU with pageable
/// memory access (HMM, ATS), which uses it in place. System-allocated memory migrates
/// to the GPU on use and is not migrated back, so a GPU filled that way leaves other
/// allocations of its own out of memory. As RMM's resource of that name, each
/// allocation prefers the GPU for as much of it as leaves `headroom` bytes of the GPU's
/// memory free (measured at the allocation), and the host for the rest.
///
/// Its blocks are host memory (`location()` is the host); the GPU's kernels use them in
/// place. Checking the GPU's free memory costs a driver call per allocation: route small
/// sizes elsewhere ([`Binning`](super::Binning)), as RMM advises.
pub struct SamHeadroom {
    gpu: Arc<dyn Device>,
    host: Arc<dyn MemoryResource>,
    headroom: usize,
}

impl SamHeadroom {
    /// For the GPU at `gpu`, keeping `headroom` bytes of its memory free. An error
    /// naming the GPU where it does not use host memory in place.
    pub fn new(gpu: Location, headroom: usize) -> Result<SamHeadroom> {
        let device = Arc::clone(crate::runtime::registry::registry().device(gpu)?);
        SamHeadroom::on(device, headroom)
    }

    /// As [`SamHeadroom::new`], for a device made outside the registry.
    pub fn on(gpu: Arc<dyn Device>, headroom: usize) -> Result<SamHeadroom> {
        let host = super::upstream(Location::Host)?;
        let host_device = host.device().ok_or_else(|| {
            Error::Invalid("SamHeadroom: the host's upstream resource has no device".into())
        })?;
        let (in_place, why) = crate::runtime::access::between(
            host_device.as_ref(),
            None,
            host_device.host_access_default(),
            gpu.as_ref(),
        );
        if !in_place {
            return Err(Error::Invalid(format!(
                "SamHeadroom: {} does not use system-allocated memory in place ({why}); use its own memory, managed memory or pinned host memory instead",
                gpu.location()
            )));
        }
        Ok(SamHeadroom {
            gpu,
            host,
            headroom,
        })
    }

    /// The headroom kept free on the GPU.
    pub fn headroom(&self) -> usize {
        self.headroom
    }
}

impl MemoryResource for SamHeadroom {
    fn location(&self) -> Location {
        Location::Host
    }
    fn device(&self) -> Option<Arc<dyn Device>> {
        self.host.device()
    }
    fn describe(&self) -> String {
        format!(
            "sam_headroom({}, {} bytes of headroom)",
            self.gpu.location(),
            self.headroom
        )
    }
    fn allocate(&self, bytes: usize, align: usize) -> Result<Block> {
        let block = self.host.allocate(bytes, align)?;
        match self.advise(&block) {
            Ok(()) => Ok(block),
            Err(e) => {
                self.host.deallocate(block);
                Err(e)
            }
        }
    }
    fn deallocate(&self, block: Block) {
        self.host.deallocate(block);
    }
}

impl SamHeadroom {
    /// Prefers the GPU for the part of `block` that fits above the headroom (whole
    /// 256-byte units from its start), the host for the rest.
    fn advise(&self, block: &Block) -> Result<()> {
        let bytes = block.bytes;
        if bytes == 0 {
            return Ok(());
        }
        let (free, _) = self.gpu.available_memory()?;
        let allocatable = usize::try_from(free)
            .unwrap_or(usize::MAX)
            .saturating_sub(self.headroom);
        let on_gpu = allocatable.min(bytes) / ALIGNMENT * ALIGNMENT;
        if on_gpu > 0 {
            self.gpu.prefer_location(&block.native, 0, on_gpu, true)?;
        }
        if on_gpu < bytes {
            self.gpu
                .prefer_location(&block.native, on_gpu, bytes - on_gpu, false)?;
        }
        Ok(())
    }
}
