//! The CUDA device: [`CudaDevice`], the device type CUDA and HIP share (`cuda_hip`) over this
//! backend's calls ([`CudaApi`]). Its `Device` implementation is `cuda_hip/device.rs`.

use super::*;

/// The CUDA device at one location: `locus::device_as::<CudaDevice>(location)`.
pub type CudaDevice = GpuDevice<CudaApi>;

/// Which way [`CudaDevice::raw_memcpy`] copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawCopy {
    /// Host memory to this device (`cuMemcpyHtoD`).
    HostToDevice,
    /// This device to host memory (`cuMemcpyDtoH`).
    DeviceToHost,
    /// Within this device (`cuMemcpyDtoD`, then `cuCtxSynchronize`).
    DeviceToDevice,
    /// Within this device as locus's synchronous copy makes it, without locus around it:
    /// `cuMemcpyDtoDAsync` on locus's non-blocking stream, then `cuStreamSynchronize`
    /// (for `benches/cuda_copies.rs`, which tells the stream's cost from locus's).
    DeviceToDeviceOnStream,
    /// Within this device: `cuMemcpyDtoDAsync` on the legacy NULL stream, then
    /// `cuStreamSynchronize` of it.
    DeviceToDeviceOnNullStream,
}

impl CudaDevice {
    /// `locus bench`'s raw baseline: `len` bytes copied with the synchronous driver call
    /// a user writes by hand, this device's primary context made current; no stream,
    /// event, bounds check or counter of locus's. `cuMemcpyDtoD` returns before the copy
    /// is done, so it is followed by `cuCtxSynchronize`.
    ///
    /// # Safety
    /// `dst` and `src` hold `len` bytes each and do not overlap: device pointers of this
    /// device, or host addresses, as `direction` says.
    pub unsafe fn raw_memcpy(
        &self,
        direction: RawCopy,
        dst: u64,
        src: u64,
        len: usize,
    ) -> crate::core::error::Result<()> {
        let api = self.api();
        api.activate(self.ordinal())
            .map_err(|e| self.fail("raw copy", e))?;
        let (call, outcome) = match direction {
            // SAFETY: per the caller's contract; the context is current.
            RawCopy::HostToDevice => ("cuMemcpyHtoD", unsafe {
                result::memcpy_htod_sync(dst, std::slice::from_raw_parts(src as *const u8, len))
            }),
            // SAFETY: as above.
            RawCopy::DeviceToHost => ("cuMemcpyDtoH", unsafe {
                result::memcpy_dtoh_sync(std::slice::from_raw_parts_mut(dst as *mut u8, len), src)
            }),
            // SAFETY: as above; then a plain context-wide wait.
            RawCopy::DeviceToDevice => ("cuMemcpyDtoD", unsafe {
                result::memcpy_dtod_sync(dst, src, len)
                    .and_then(|()| sys::cuCtxSynchronize().result())
            }),
            RawCopy::DeviceToDeviceOnStream | RawCopy::DeviceToDeviceOnNullStream => {
                let stream = if direction == RawCopy::DeviceToDeviceOnStream {
                    api.stream_handle(self.ordinal()) as sys::CUstream
                } else {
                    result::stream::null()
                };
                // SAFETY: as above; the stream is this device's (alive as long as `self`)
                // or the NULL stream, which always exists.
                ("cuMemcpyDtoDAsync", unsafe {
                    result::memcpy_dtod_async(dst, src, len, stream)
                        .and_then(|()| result::stream::synchronize(stream))
                })
            }
        };
        outcome.map_err(|e| self.fail("raw copy", err(call)(e)))
    }
}
