//! OpenMP's rectangle copy ([`RectCopies`]): `omp_target_memcpy_rect` between the host
//! (the initial device) and this device, or within it, one call (OpenMP's copies are
//! synchronous: done when it returns).

use super::*;
use crate::core::device::Direction;
use crate::core::rect_copy::{RectCopies, RectCopy};
use crate::core::region::Region;

/// A normalized, rect-ready region as `omp_target_memcpy_rect` takes it (bytes as the
/// elements, outermost dimension first): its volume, and the dimensions of the array it
/// lies in (planes, rows of a plane, bytes of a row); addressed from its first byte, so
/// every offset is 0. A single row is one dimension, a single plane two.
fn rect_dims(r: &Region) -> (usize, [usize; 3], [usize; 3]) {
    let [w, h, d] = r.extent;
    match (h, d) {
        (1, 1) => (1, [w, 0, 0], [w, 0, 0]),
        (_, 1) => (2, [h, w, 0], [h, r.row_pitch, 0]),
        _ => (
            3,
            [d, h, w],
            [d, r.slice_pitch / r.row_pitch.max(1), r.row_pitch],
        ),
    }
}

impl RectCopies for OpenMpDevice {
    fn rect_call(&self, _direction: Direction) -> &'static str {
        "omp_target_memcpy_rect"
    }

    fn copy_rect(&self, copy: RectCopy<'_>) -> Result<()> {
        // A region's first byte in this device's memory: the origin of a normalized
        // region, checked inside its memory.
        let first = |native: &Native, region: &Region| {
            // SAFETY: the region was checked inside the memory, so its first byte is too.
            unsafe { ptr_of(native).add(region.origin[0]) }
        };
        let (here, host) = (self.device_number, self.initial_device);
        // (destination and its device, source and its device, the two regions); a host
        // slice starts at its region's first byte.
        let (dst, dst_dev, src, src_dev, sr, dr) = match copy {
            RectCopy::Within {
                src,
                src_region: sr,
                dst,
                dst_region: dr,
            } => (
                first(dst, &dr),
                here,
                first(src, &sr).cast_const(),
                here,
                sr,
                dr,
            ),
            RectCopy::Write {
                src,
                src_region: sr,
                dst,
                dst_region: dr,
            } => (first(dst, &dr), here, src.as_ptr(), host, sr, dr),
            RectCopy::Read {
                src,
                src_region: sr,
                dst,
                dst_region: dr,
            } => (
                dst.as_mut_ptr(),
                host,
                first(src, &sr).cast_const(),
                here,
                sr,
                dr,
            ),
        };
        let (dims, volume, src_dims) = rect_dims(&sr);
        let (_, _, dst_dims) = rect_dims(&dr);
        let api = api().map_err(|e| self.unavailable(e.to_string()))?;
        // SAFETY: both pointers address their regions' first bytes on their devices; the
        // regions were checked inside their memories and rect-ready (the slice pitch a
        // whole number of rows), so the dimensions describe arrays that hold them; the
        // arrays live for the call.
        let rc = unsafe {
            (api.memcpy_rect)(
                dst.cast(),
                src.cast(),
                dims as i32,
                volume.as_ptr(),
                dst_dims.as_ptr(),
                src_dims.as_ptr(),
                dst_dev,
                src_dev,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        Err(Error::Backend {
            location: self.location,
            call: "omp_target_memcpy_rect",
            message: format!(
                "returned {rc} for a rectangle of {:?} bytes x rows x planes",
                sr.extent
            ),
            hint: "check that both memories belong to the device numbers given".into(),
        })
    }
}
