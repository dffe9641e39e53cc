//! Pointer attributes in the simulated driver: the device, memory type, range and
//! managedness of any address inside an allocation or registered host memory (an unknown
//! address is `CUDA_ERROR_INVALID_VALUE`, as for memory the driver never saw).

use std::ffi::{c_int, c_uint, c_void};

use cudarc::driver::sys::*;

use super::{out, SimCuda};
use crate::backends::cuda_hip::sim_model::{Found, Kind};

impl SimCuda {
    /// # Safety
    /// `data` is valid for a write of the attribute's type.
    pub(super) unsafe fn pointer_attribute(
        &self,
        data: *mut c_void,
        attribute: CUpointer_attribute,
        ptr: usize,
    ) -> CUresult {
        use CUpointer_attribute as A;
        let Some(found) = self.0.find(ptr) else {
            self.0.record("cuPointerGetAttribute", 0);
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        };
        self.0.record("cuPointerGetAttribute", 0);
        let host = matches!(
            found,
            Found::Registered(..) | Found::Allocation(_, _, Kind::Pinned)
        );
        match attribute {
            A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => {
                // SAFETY: an int, the attribute's type, per the caller's contract.
                unsafe { out(data.cast::<c_int>(), 0) }
            }
            A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE => {
                let kind = match host {
                    true => CUmemorytype::CU_MEMORYTYPE_HOST,
                    false => CUmemorytype::CU_MEMORYTYPE_DEVICE,
                };
                // SAFETY: an unsigned int, the attribute's type, per the caller's contract.
                unsafe { out(data.cast::<c_uint>(), kind as c_uint) }
            }
            A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR => {
                // SAFETY: a CUdeviceptr, the attribute's type, per the caller's contract.
                unsafe { out(data.cast::<u64>(), found.range().0 as u64) }
            }
            A::CU_POINTER_ATTRIBUTE_RANGE_SIZE => {
                // SAFETY: a size_t, the attribute's type, per the caller's contract.
                unsafe { out(data.cast::<usize>(), found.range().1) }
            }
            A::CU_POINTER_ATTRIBUTE_IS_MANAGED => {
                let managed = matches!(found, Found::Allocation(_, _, Kind::Managed));
                // SAFETY: as above.
                unsafe { out(data.cast::<c_uint>(), c_uint::from(managed)) }
            }
            other => {
                self.0.violation(format!(
                    "cuPointerGetAttribute({other:?}): an attribute the simulator does not model"
                ));
                CUresult::CUDA_ERROR_INVALID_VALUE
            }
        }
    }
}
