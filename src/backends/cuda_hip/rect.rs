//! The GPU device's rectangle copies ([`RectCopies`]): the driver's 3-D copy
//! ([`GpuApi::copy_rect`]: `cuMemcpy3DAsync`, `hipMemcpy3DAsync`) on locus's stream,
//! waited for, between the device's memory and host memory or within the device.

use super::api::{GpuRect, RectEnd};
use super::*;
use crate::core::rect_copy::{RectCopies, RectCopy};
use crate::core::region::Region;

/// One end at `address` (the region's first byte: a normalized region's origin is its
/// offset) with the region's pitches.
fn end(address: u64, host: bool, region: &Region) -> RectEnd {
    RectEnd {
        address,
        host,
        pitch: region.row_pitch,
        // A normalized, rect-ready region's slice pitch is a whole number of rows.
        rows_per_plane: region.slice_pitch / region.row_pitch.max(1),
    }
}

impl<A: GpuApi> RectCopies for GpuDevice<A> {
    fn rect_call(&self, _direction: Direction) -> &'static str {
        A::RECT_CALL.unwrap_or("the driver's rectangle copy")
    }

    fn copy_rect(&self, copy: RectCopy<'_>) -> Result<()> {
        let device = |native: &Native, region: &Region| -> Result<RectEnd> {
            let (ptr, _) = self.ptr(native)?;
            Ok(end(ptr + region.origin[0] as u64, false, region))
        };
        let host = |ptr: *const u8, region: &Region| {
            end(ptr as u64 + region.origin[0] as u64, true, region)
        };
        let (src, dst, extent) = match copy {
            RectCopy::Write {
                src,
                src_region,
                dst,
                dst_region,
            } => (
                host(src.as_ptr(), &src_region),
                device(dst, &dst_region)?,
                src_region.extent,
            ),
            RectCopy::Read {
                src,
                src_region,
                dst,
                dst_region,
            } => (
                device(src, &src_region)?,
                host(dst.as_ptr(), &dst_region),
                src_region.extent,
            ),
            RectCopy::Within {
                src,
                src_region,
                dst,
                dst_region,
            } => (
                device(src, &src_region)?,
                device(dst, &dst_region)?,
                src_region.extent,
            ),
        };
        let rect = GpuRect {
            src,
            dst,
            width: extent[0],
            height: extent[1],
            depth: extent[2],
        };
        let _current = self.activate()?;
        // SAFETY: both regions were checked inside their memory (the host slices cover
        // theirs) and apart from each other; the copy is waited for before the borrows
        // end.
        unsafe { self.api.copy_rect(&rect, true) }.map_err(|e| self.fail("rectangle copy", e))
    }
}
