//! Copies of 2-D and 3-D regions between any two memories (`locus_memory_copy_region`):
//! the runtime's own rectangle copy where one reaches both, else packed or run by run.

use crate::handles::{LocusMemory, MEMORY};
use crate::{call, Fail, LocusStatus};

/// A rectangle of bytes in one memory, as `clEnqueueCopyBufferRect` and CUDA's
/// `CUDA_MEMCPY3D` address it: byte `(x, y, z)` is at `x + y * row_pitch + z *
/// slice_pitch`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LocusRegion {
    /// Where it starts: x in bytes, y in rows, z in planes.
    pub origin: [usize; 3],
    /// Its size: width in bytes, rows, planes (each at least 1).
    pub extent: [usize; 3],
    /// Bytes from one row to the next.
    pub row_pitch: usize,
    /// Bytes from one plane to the next.
    pub slice_pitch: usize,
}

fn region_arg(p: *const LocusRegion, what: &str) -> Result<locus_rs::Region, Fail> {
    // SAFETY: a non-NULL region pointer points to a `LocusRegion` the caller owns for
    // the call (the header's contract).
    let r = unsafe { p.as_ref() }
        .ok_or_else(|| Fail::new(LocusStatus::LocusErrorNull, format!("{what} is NULL")))?;
    Ok(locus_rs::Region {
        origin: r.origin,
        extent: r.extent,
        row_pitch: r.row_pitch,
        slice_pitch: r.slice_pitch,
    })
}

/// Copies region `*src_region` of `src` to region `*dst_region` of `dst` (one extent,
/// any pitches), at any two locations, in one call (umem's `copy_to` for a rectangle).
/// Both regions are checked first: nothing is written when either lies outside its
/// memory, has a zero extent, rows or planes that overlap, or the two share bytes of one
/// memory.
///
/// # Safety
/// `src_region` and `dst_region` are NULL or point to `LocusRegion`s.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_copy_region(
    src: *const LocusMemory,
    src_region: *const LocusRegion,
    dst: *const LocusMemory,
    dst_region: *const LocusRegion,
) -> LocusStatus {
    call("locus_memory_copy_region", || {
        let (s, d) = (MEMORY.get(src, "src")?, MEMORY.get(dst, "dst")?);
        let (sr, dr) = (
            region_arg(src_region, "src_region")?,
            region_arg(dst_region, "dst_region")?,
        );
        s.copy_region_to(&sr, &d, &dr)?;
        Ok(())
    })
}
