//! `cuMemcpyBatchAsync` in the simulated driver: the driver's own argument rules first
//! (a driver older than 12.8 has no such call; not the legacy or per-thread NULL
//! stream; at least one attribute set, the first starting at copy 0, the starts
//! increasing and inside the batch; a valid source access order), then the shared
//! model's (`sim_model/batch.rs`); `failIdx` is the failing copy, or `SIZE_MAX` where
//! the error is the whole batch's.

use cudarc::driver::sys::*;

use super::SimCuda;

/// The copies: destinations, sources, sizes and their count.
type Copies = (*mut CUdeviceptr, *mut CUdeviceptr, *mut usize, usize);
/// The attribute sets, the copy each starts at, and their count.
type Attributes = (*mut CUmemcpyAttributes, *mut usize, usize);

impl SimCuda {
    /// # Safety
    /// Each array holds its count of entries; `fail_index` is valid for a write.
    pub(super) unsafe fn batch(
        &self,
        (dsts, srcs, sizes, count): Copies,
        (attrs, starts, attr_count): Attributes,
        fail_index: *mut usize,
        stream: CUstream,
    ) -> CUresult {
        const CALL: &str = "cuMemcpyBatchAsync";
        // SAFETY: the caller's out-pointer.
        unsafe { fail_index.write(usize::MAX) };
        if self.devices().version < 12080 {
            self.0.violation(format!(
                "{CALL} called on a CUDA {} driver, which does not have it",
                self.devices().version
            ));
            return CUresult::CUDA_ERROR_NOT_SUPPORTED;
        }
        // CU_STREAM_LEGACY (1), CU_STREAM_PER_THREAD (2) and NULL are refused.
        if (stream as usize) < 3 || count == 0 || attr_count == 0 || attr_count > count {
            self.0.record(CALL, stream as usize);
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        // SAFETY: `attr_count` entries each, per the caller's contract.
        let (attrs, starts) = unsafe {
            (
                std::slice::from_raw_parts(attrs, attr_count),
                std::slice::from_raw_parts(starts, attr_count),
            )
        };
        let orders_valid = attrs.iter().all(|a| {
            a.srcAccessOrder != CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_INVALID
        });
        let starts_valid = starts[0] == 0
            && starts.windows(2).all(|w| w[0] < w[1])
            && starts[attr_count - 1] < count;
        if !orders_valid || !starts_valid {
            self.0.record(CALL, stream as usize);
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        // SAFETY: `count` entries each, per the caller's contract.
        let copies: Vec<(usize, usize, usize)> = unsafe {
            (0..count)
                .map(|i| (*dsts.add(i) as usize, *srcs.add(i) as usize, *sizes.add(i)))
                .collect()
        };
        match self.0.batch(CALL, &copies, stream as usize) {
            Ok(()) => CUresult::CUDA_SUCCESS,
            Err((refusal, at)) => {
                if let Some(at) = at {
                    // SAFETY: the caller's out-pointer.
                    unsafe { fail_index.write(at) };
                }
                Self::code(refusal)
            }
        }
    }
}

impl SimCuda {
    /// `cuMemcpy3DAsync`: host and device ends only (no arrays), then the shared
    /// model's rules (`sim_model/rect.rs`).
    ///
    /// # Safety
    /// `copy` is NULL or valid for a read.
    pub(super) unsafe fn rect(&self, copy: *const CUDA_MEMCPY3D, stream: CUstream) -> CUresult {
        use crate::backends::cuda_hip::sim_model::SimRectEnd;
        const CALL: &str = "cuMemcpy3DAsync";
        // SAFETY: the caller's pointer, NULL or valid.
        let Some(c) = (unsafe { copy.as_ref() }) else {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        };
        let end =
            |kind: CUmemorytype, host: usize, device: CUdeviceptr, pitch, rows, at: [usize; 3]| {
                let address = match kind {
                    CUmemorytype::CU_MEMORYTYPE_HOST => host,
                    CUmemorytype::CU_MEMORYTYPE_DEVICE | CUmemorytype::CU_MEMORYTYPE_UNIFIED => {
                        device as usize
                    }
                    _ => return None,
                };
                let [x, y, z] = at;
                Some(SimRectEnd {
                    address: address + x + (z * rows + y) * pitch,
                    device: kind != CUmemorytype::CU_MEMORYTYPE_HOST,
                    pitch,
                    rows_per_plane: rows,
                })
            };
        let src = end(
            c.srcMemoryType,
            c.srcHost as usize,
            c.srcDevice,
            c.srcPitch,
            c.srcHeight,
            [c.srcXInBytes, c.srcY, c.srcZ],
        );
        let dst = end(
            c.dstMemoryType,
            c.dstHost as usize,
            c.dstDevice,
            c.dstPitch,
            c.dstHeight,
            [c.dstXInBytes, c.dstY, c.dstZ],
        );
        let (Some(src), Some(dst)) = (src, dst) else {
            self.0.record(CALL, stream as usize);
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        };
        let extent = [c.WidthInBytes, c.Height, c.Depth];
        Self::result(self.0.rect(CALL, stream as usize, (src, dst), extent))
    }
}
