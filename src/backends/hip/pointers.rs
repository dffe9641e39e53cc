//! What the HIP runtime says of an address it allocated or registered, whoever asked it
//! to (`hipPointerGetAttribute`): `locus::lookup`'s answer for memory locus did not make.

use std::ffi::{c_int, c_uint};

use super::cuda_hip::{GpuError, GpuPointer};
use super::sys::*;
use super::HipApi;

/// `hipMemoryTypeHost` as the runtime numbers it: ROCm 6 renumbered `hipMemoryType` to
/// CUDA's order (`Unregistered` 0, `Host` 1, `Device` 2), ROCm 5 started at `Host` 0.
fn is_host_type(memory_type: c_uint, runtime_version: c_int) -> bool {
    match runtime_version >= 60_000_000 {
        true => memory_type == 1,
        false => memory_type == 0,
    }
}

impl HipApi {
    /// One attribute of `ptr` into `T`; `Ok(None)` where the runtime does not know the
    /// address (`hipErrorInvalidValue`).
    ///
    /// # Safety
    /// `T` is the attribute's type as the runtime's documentation gives it.
    unsafe fn attribute<T: Default>(
        &self,
        attribute: hipPointer_attribute,
        ptr: u64,
    ) -> Result<Option<T>, GpuError> {
        let mut value = T::default();
        // SAFETY: the runtime writes one `T` (per the caller's contract) into a local; the
        // address is only looked up, never dereferenced.
        let rc = unsafe {
            self.raw.hipPointerGetAttribute(
                (&mut value as *mut T).cast(),
                attribute,
                ptr as hipDeviceptr_t,
            )
        };
        if rc == hipError_t_hipErrorInvalidValue {
            return Ok(None);
        }
        self.check("hipPointerGetAttribute", rc)
            .map(|()| Some(value))
    }

    /// [`GpuApi::pointer_range`](super::cuda_hip::GpuApi::pointer_range) for HIP.
    pub(super) fn query_pointer(&self, ptr: u64) -> Result<Option<GpuPointer>, GpuError> {
        // SAFETY: the memory type is an unsigned int (hipMemoryType).
        let memory_type = unsafe {
            self.attribute::<c_uint>(hipPointer_attribute_HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr)
        };
        let Some(memory_type) = memory_type? else {
            return Ok(None);
        };
        let range = |attribute| -> Result<Option<u64>, GpuError> {
            // SAFETY: the range start is a device pointer, the size a size_t (8 bytes).
            unsafe { self.attribute::<u64>(attribute, ptr) }
        };
        let (Some(base), Some(len)) = (
            range(hipPointer_attribute_HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR)?,
            range(hipPointer_attribute_HIP_POINTER_ATTRIBUTE_RANGE_SIZE)?,
        ) else {
            return Ok(None);
        };
        // SAFETY: a boolean the runtime writes as an unsigned int.
        let managed = unsafe {
            self.attribute::<c_uint>(hipPointer_attribute_HIP_POINTER_ATTRIBUTE_IS_MANAGED, ptr)?
        };
        // SAFETY: an int.
        let ordinal = unsafe {
            self.attribute::<c_int>(
                hipPointer_attribute_HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr,
            )?
        };
        let mut version: c_int = 0;
        // SAFETY: writes one int into a local.
        self.check("hipRuntimeGetVersion", unsafe {
            self.raw.hipRuntimeGetVersion(&mut version)
        })?;
        Ok(Some(GpuPointer::from_attributes(
            (base, len),
            is_host_type(memory_type, version),
            managed,
            ordinal,
        )))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_memory_is_told_apart_under_both_numberings() {
        // ROCm 5.7 (50_700_000): Host 0, Device 1; ROCm 6.2: Unregistered 0, Host 1.
        assert!(super::is_host_type(0, 50_700_000));
        assert!(!super::is_host_type(1, 50_700_000));
        assert!(super::is_host_type(1, 60_200_000));
        assert!(!super::is_host_type(2, 60_200_000));
    }
}
