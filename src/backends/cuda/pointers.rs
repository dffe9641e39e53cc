//! What the CUDA driver says of an address it allocated or registered, whoever asked it
//! to (`cuPointerGetAttribute`): `locus::lookup`'s answer for memory locus did not make.

use std::ffi::{c_int, c_uint};

use cudarc::driver::sys::{CUmemorytype, CUpointer_attribute as A, CUresult};

use super::cuda_hip::{GpuError, GpuPointer};
use super::CudaApi;

impl CudaApi {
    /// One attribute of `ptr` into `T`; `Ok(None)` where the driver does not know the
    /// address (`CUDA_ERROR_INVALID_VALUE`).
    ///
    /// # Safety
    /// `T` is the attribute's type as the driver's documentation gives it.
    unsafe fn attribute<T: Default>(&self, attribute: A, ptr: u64) -> Result<Option<T>, GpuError> {
        let mut value = T::default();
        // SAFETY: the driver writes one `T` (per the caller's contract) into a local; the
        // address is only looked up, never dereferenced.
        let rc = unsafe {
            self.driver
                .cuPointerGetAttribute((&mut value as *mut T).cast(), attribute, ptr)
        };
        match rc {
            CUresult::CUDA_SUCCESS => Ok(Some(value)),
            CUresult::CUDA_ERROR_INVALID_VALUE => Ok(None),
            other => Err(self.err("cuPointerGetAttribute")(
                cudarc::driver::result::DriverError(other),
            )),
        }
    }

    /// [`GpuApi::pointer_range`](super::cuda_hip::GpuApi::pointer_range) for CUDA.
    pub(super) fn query_pointer(&self, ptr: u64) -> Result<Option<GpuPointer>, GpuError> {
        // SAFETY: the memory type is an unsigned int (CUmemorytype).
        let memory_type =
            unsafe { self.attribute::<c_uint>(A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr) };
        let Some(memory_type) = memory_type? else {
            return Ok(None);
        };
        let host = memory_type == CUmemorytype::CU_MEMORYTYPE_HOST as c_uint;
        let device = memory_type == CUmemorytype::CU_MEMORYTYPE_DEVICE as c_uint;
        if !host && !device {
            // Arrays have no linear address; 0 is pageable memory the driver reaches in
            // place (HMM), which it did not allocate.
            return Ok(None);
        }
        let range = |attribute| -> Result<Option<u64>, GpuError> {
            // SAFETY: the range start is a CUdeviceptr; the size a size_t (8 bytes).
            unsafe { self.attribute::<u64>(attribute, ptr) }
        };
        let (Some(base), Some(len)) = (
            range(A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)?,
            range(A::CU_POINTER_ATTRIBUTE_RANGE_SIZE)?,
        ) else {
            return Ok(None);
        };
        // SAFETY: a boolean the driver writes as an unsigned int.
        let managed = unsafe { self.attribute::<c_uint>(A::CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr)? };
        // SAFETY: an int.
        let ordinal =
            unsafe { self.attribute::<c_int>(A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)? };
        Ok(Some(GpuPointer::from_attributes(
            (base, len),
            host,
            managed,
            ordinal,
        )))
    }
}
