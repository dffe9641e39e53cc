//! The typed errors of failed driver calls ([`GpuError`]: the call, its `CUresult`, the
//! code's name and text as the driver a `CudaApi` calls gives them).

use super::*;

impl CudaApi {
    /// The typed error of a failed call of this driver: the call, the code, and the
    /// code's name and text as the driver gives them.
    pub(super) fn err(
        &self,
        call: &'static str,
    ) -> impl Fn(cudarc_result::DriverError) -> GpuError + '_ {
        move |e| GpuError {
            call,
            code: e.0 as i32,
            name: format!(
                "{}: {}",
                self.error_text(e.0, true),
                self.error_text(e.0, false)
            ),
            out_of_memory: e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        }
    }

    /// The driver's name (`name`) or description of `code`.
    fn error_text(&self, code: sys::CUresult, name: bool) -> String {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: the driver writes the address of a static string (or nothing) into a
        // local.
        let rc = unsafe {
            match name {
                true => self.driver.cuGetErrorName(code, &mut p),
                false => self.driver.cuGetErrorString(code, &mut p),
            }
        };
        if rc != sys::CUresult::CUDA_SUCCESS || p.is_null() {
            return format!("{code:?}");
        }
        // SAFETY: a NUL-terminated string the driver owns for the process.
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    }
}
