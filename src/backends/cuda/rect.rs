//! CUDA's rectangle copy: `cuMemcpy3DAsync` on locus's stream, a 2-D or 3-D region
//! between device memory and host memory or within the device, one call.

use super::*;
use crate::backends::cuda_hip::{GpuRect, RectEnd};

/// The driver's description of one end, written into `copy`'s source or destination.
fn memory_type(end: &RectEnd) -> sys::CUmemorytype {
    if end.host {
        sys::CUmemorytype::CU_MEMORYTYPE_HOST
    } else {
        sys::CUmemorytype::CU_MEMORYTYPE_DEVICE
    }
}

impl CudaApi {
    /// `rect` in one `cuMemcpy3DAsync` on the current device's stream; `wait`
    /// synchronises it.
    ///
    /// # Safety
    /// As for [`GpuApi::copy_rect`].
    pub(super) unsafe fn copy_3d(&self, rect: &GpuRect, wait: bool) -> Result<(), GpuError> {
        let (s, d) = (&rect.src, &rect.dst);
        let null: *mut c_void = std::ptr::null_mut();
        // Every field named: no arrays, no LOD; the ends start at the regions' first bytes.
        let copy = sys::CUDA_MEMCPY3D {
            srcXInBytes: 0,
            srcY: 0,
            srcZ: 0,
            srcLOD: 0,
            srcMemoryType: memory_type(s),
            srcHost: if s.host {
                s.address as *const c_void
            } else {
                std::ptr::null()
            },
            srcDevice: if s.host { 0 } else { s.address },
            srcArray: null.cast(),
            reserved0: null,
            srcPitch: s.pitch,
            srcHeight: s.rows_per_plane,
            dstXInBytes: 0,
            dstY: 0,
            dstZ: 0,
            dstLOD: 0,
            dstMemoryType: memory_type(d),
            dstHost: if d.host {
                d.address as *mut c_void
            } else {
                null
            },
            dstDevice: if d.host { 0 } else { d.address },
            dstArray: null.cast(),
            reserved1: null,
            dstPitch: d.pitch,
            dstHeight: d.rows_per_plane,
            WidthInBytes: rect.width,
            Height: rect.height,
            Depth: rect.depth,
        };
        // SAFETY: the struct lives for the call (the driver reads it before returning);
        // every row is valid per the caller's contract; the context is current.
        unsafe { self.driver.cuMemcpy3DAsync_v2(&copy, self.stream()) }
            .result()
            .map_err(self.err("cuMemcpy3DAsync"))?;
        self.finish(wait)
    }
}
