//! HIP's rectangle copy: `hipMemcpy3DAsync` on locus's stream, a 2-D or 3-D region
//! between device memory and host memory or within the device, one call.

use super::*;
use crate::backends::cuda_hip::{GpuRect, RectEnd};

/// One end as HIP takes it: the base of its rows and their pitch, the origin 0 (locus's
/// ends start at the region's first byte).
fn pitched(end: &RectEnd, width: usize) -> hipPitchedPtr {
    hipPitchedPtr {
        ptr: end.address as *mut c_void,
        pitch: end.pitch,
        xsize: width,
        ysize: end.rows_per_plane,
    }
}

impl HipApi {
    /// `rect` in one `hipMemcpy3DAsync` on the current device's stream; `wait`
    /// synchronises it.
    ///
    /// # Safety
    /// As for [`GpuApi::copy_rect`].
    pub(super) unsafe fn copy_3d(&self, rect: &GpuRect, wait: bool) -> Result<(), GpuError> {
        let kind = match (rect.src.host, rect.dst.host) {
            (true, false) => hipMemcpyKind_hipMemcpyHostToDevice,
            (false, true) => hipMemcpyKind_hipMemcpyDeviceToHost,
            (false, false) => hipMemcpyKind_hipMemcpyDeviceToDevice,
            (true, true) => hipMemcpyKind_hipMemcpyHostToHost,
        };
        let origin = hipPos { x: 0, y: 0, z: 0 };
        let parms = hipMemcpy3DParms {
            srcArray: std::ptr::null_mut(),
            srcPos: origin,
            srcPtr: pitched(&rect.src, rect.width),
            dstArray: std::ptr::null_mut(),
            dstPos: origin,
            dstPtr: pitched(&rect.dst, rect.width),
            extent: hipExtent {
                width: rect.width,
                height: rect.height,
                depth: rect.depth,
            },
            kind,
        };
        // SAFETY: the struct lives for the call; every row is valid per the caller's
        // contract; the device is current.
        let rc = unsafe { self.raw.hipMemcpy3DAsync(&parms, self.stream()) };
        self.check("hipMemcpy3DAsync", rc)?;
        self.finish(wait)
    }
}
