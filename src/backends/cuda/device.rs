//! The CUDA device: [`CudaDevice`], the device type CUDA and HIP share (`cuda_hip`) over this
//! backend's calls ([`CudaApi`]). Its `Device` implementation is `cuda_hip/device.rs`.

use super::*;

/// The CUDA device at one location: `locus::device_as::<CudaDevice>(location)`.
pub type CudaDevice = GpuDevice<CudaApi>;

/// How [`CudaDevice::raw_copy_within`] copies within one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawCopy {
    /// `cuMemcpyDtoD`, then `cuCtxSynchronize` (the native call of
    /// [`Memory::native_copy_to`](crate::core::memory::Memory::native_copy_to)).
    DeviceToDevice,
    /// As locus's synchronous copy makes it, without locus around it:
    /// `cuMemcpyDtoDAsync` on locus's non-blocking stream, then `cuStreamSynchronize`.
    DeviceToDeviceOnStream,
    /// `cuMemcpyDtoDAsync` on the legacy NULL stream, then `cuStreamSynchronize` of it.
    DeviceToDeviceOnNullStream,
}

impl CudaDevice {
    /// Copies the first `len` bytes of `src` to `dst`, two distinct allocations of this
    /// device, the way `how` says, with this device's primary context made current and
    /// no event, bounds check or counter of locus's around the driver calls: for
    /// `benches/cuda_copies.rs`, which tells the driver's cost, the stream's and locus's
    /// apart.
    pub fn raw_copy_within(
        &self,
        src: &Memory,
        dst: &Memory,
        len: usize,
        how: RawCopy,
    ) -> Result<()> {
        let (Native::Cuda { ptr: s, .. }, Native::Cuda { ptr: d, .. }) =
            (src.native(), dst.native())
        else {
            return Err(self.not_within(src, dst, how));
        };
        if src.location() != self.location()
            || dst.location() != self.location()
            || std::ptr::eq(src, dst)
        {
            return Err(self.not_within(src, dst, how));
        }
        // In range, and not memory given back to its resource.
        src.check("raw copy source", 0, len)?;
        dst.check("raw copy destination", 0, len)?;
        if how == RawCopy::DeviceToDevice {
            return src.native_copy_to(dst, len, &mut []);
        }
        let api = self.api();
        let _current = api
            .enter(self.ordinal())
            .map_err(|e| self.fail("raw copy", e))?;
        let stream = if how == RawCopy::DeviceToDeviceOnStream {
            api.stream_handle(self.ordinal()) as sys::CUstream
        } else {
            std::ptr::null_mut()
        };
        // SAFETY: both hold `len` bytes on this device (checked above) and are distinct
        // allocations, so they do not overlap; the stream is this device's (alive as
        // long as `self`) or the NULL stream, which always exists.
        unsafe {
            api.driver
                .cuMemcpyDtoDAsync_v2(*d, *s, len, stream)
                .result()
                .and_then(|()| api.driver.cuStreamSynchronize(stream).result())
        }
        .map_err(|e| self.fail("raw copy", api.err("cuMemcpyDtoDAsync")(e)))
    }

    fn not_within(&self, src: &Memory, dst: &Memory, how: RawCopy) -> Error {
        Error::Invalid(format!(
            "{}: raw_copy_within ({how:?}) needs two distinct memories at this location, not {} \
             and {}",
            self.location(),
            src.location(),
            dst.location()
        ))
    }
}
