//! `hipMemcpy3DAsync` in the simulated runtime: linear memory only (no arrays), then the
//! shared model's rules for a rectangle copy (`cuda_hip/sim_model/rect.rs`), each end's
//! memory taken from the copy's kind.

use super::super::sys::*;
use super::SimHip;
use crate::backends::cuda_hip::sim_model::SimRectEnd;

impl SimHip {
    /// # Safety
    /// `parms` is NULL or valid for a read.
    pub(super) unsafe fn rect(
        &self,
        parms: *const hipMemcpy3DParms,
        stream: hipStream_t,
    ) -> hipError_t {
        const CALL: &str = "hipMemcpy3DAsync";
        // SAFETY: the caller's pointer, NULL or valid.
        let Some(p) = (unsafe { parms.as_ref() }) else {
            return hipError_t_hipErrorInvalidValue;
        };
        let (src_device, dst_device) = match p.kind {
            k if k == hipMemcpyKind_hipMemcpyHostToDevice => (false, true),
            k if k == hipMemcpyKind_hipMemcpyDeviceToHost => (true, false),
            k if k == hipMemcpyKind_hipMemcpyDeviceToDevice => (true, true),
            k if k == hipMemcpyKind_hipMemcpyHostToHost => (false, false),
            _ => (true, true),
        };
        if !p.srcArray.is_null() || !p.dstArray.is_null() {
            self.0.record(CALL, stream as usize);
            return hipError_t_hipErrorInvalidValue;
        }
        let end = |ptr: &hipPitchedPtr, at: &hipPos, device: bool| SimRectEnd {
            address: ptr.ptr as usize + at.x + (at.z * ptr.ysize + at.y) * ptr.pitch,
            device,
            pitch: ptr.pitch,
            rows_per_plane: ptr.ysize,
        };
        let ends = (
            end(&p.srcPtr, &p.srcPos, src_device),
            end(&p.dstPtr, &p.dstPos, dst_device),
        );
        let extent = [p.extent.width, p.extent.height, p.extent.depth];
        Self::result(self.0.rect(CALL, stream as usize, ends, extent))
    }
}
