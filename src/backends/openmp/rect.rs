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
        let (dst, dst_dev, src, src_dev, sr, dr) = match copy {
            RectCopy::Within {
                src,
                src_region,
                dst,
                dst_region,
            } => (
                // SAFETY: both regions were checked inside their memories; the origins
                // are their first bytes.
                unsafe { ptr_of(dst).add(dst_region.origin[0]) },
                self.device_number,
                // SAFETY: as for the destination.
                unsafe { ptr_of(src).add(src_region.origin[0]).cast_const() },
                self.device_number,
                src_region,
                dst_region,
            ),
            RectCopy::Write {
                src,
                src_region,
                dst,
                dst_region,
            } => (
                // SAFETY: as above; the host slice starts at the source region's first
                // byte and covers it.
                unsafe { ptr_of(dst).add(dst_region.origin[0]) },
                self.device_number,
                src.as_ptr(),
                self.initial_device,
                src_region,
                dst_region,
            ),
            RectCopy::Read {
                src,
                src_region,
                dst,
                dst_region,
            } => (
                dst.as_mut_ptr(),
                self.initial_device,
                // SAFETY: as above.
                unsafe { ptr_of(src).add(src_region.origin[0]).cast_const() },
                self.device_number,
                src_region,
                dst_region,
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
