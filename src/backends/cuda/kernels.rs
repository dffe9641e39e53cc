//! CUDA kernels: compiled at run time by NVRTC for the current device's architecture, as
//! a cubin (machine code the driver loads as is), cached and launched on the device's
//! stream by the code CUDA and HIP share (`cuda_hip/kernels.rs`).
//!
//! PTX left to the driver's JIT fails to load (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`)
//! when the toolkit's NVRTC is newer than the driver, and every process pays the JIT;
//! a cubin for `sm_XY` has neither problem. Only when NVRTC does not know the device's
//! architecture (a device newer than the toolkit) is PTX compiled instead, for the
//! driver to JIT.

use std::ffi::CString;

use cudarc::nvrtc::{result as nvrtc, sys as nvrtc_sys};

use super::*;

/// The NVRTC option that compiles machine code for compute capability `major.minor`.
pub(super) fn arch_option(major: i32, minor: i32) -> String {
    format!("--gpu-architecture=sm_{major}{minor}")
}

/// An NVRTC program, destroyed on drop.
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program`, destroyed once.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}

fn failed(call: &'static str) -> impl Fn(nvrtc::NvrtcError) -> GpuError {
    move |e| GpuError::other(call, format!("{e:?}"))
}

/// The compiler's log, for a program that did not compile.
fn log(program: &Program) -> String {
    // SAFETY: a live program.
    unsafe { nvrtc::get_program_log(program.0) }
        .map(|log| {
            let bytes: Vec<u8> = log
                .iter()
                .map(|&c| c as u8)
                .take_while(|&c| c != 0)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        })
        .unwrap_or_default()
}

/// Compiles `source` into the image `cuModuleLoadData` takes: a cubin for `arch`
/// (`major`, `minor`), or PTX when NVRTC does not know that architecture.
pub(super) fn compile_image(source: &str, arch: (i32, i32)) -> Result<Vec<u8>, GpuError> {
    let text =
        CString::new(source).map_err(|e| GpuError::other("nvrtcCreateProgram", e.to_string()))?;
    let program =
        Program(nvrtc::create_program(&text, None).map_err(failed("nvrtcCreateProgram"))?);
    // SAFETY: a live program; the options are plain strings.
    match unsafe { nvrtc::compile_program(program.0, &[arch_option(arch.0, arch.1)]) } {
        Ok(()) => {
            let mut size = 0usize;
            // SAFETY: a compiled program; `size` receives the cubin's length.
            unsafe { nvrtc_sys::nvrtcGetCUBINSize(program.0, &mut size) }
                .result()
                .map_err(failed("nvrtcGetCUBINSize"))?;
            let mut image = vec![0u8; size];
            // SAFETY: `image` holds `size` bytes.
            unsafe { nvrtc_sys::nvrtcGetCUBIN(program.0, image.as_mut_ptr().cast()) }
                .result()
                .map_err(failed("nvrtcGetCUBIN"))?;
            Ok(image)
        }
        Err(e) if e.0 == nvrtc_sys::nvrtcResult::NVRTC_ERROR_INVALID_OPTION => {
            // NVRTC older than the device: PTX for the driver to JIT.
            let ptx = cudarc::nvrtc::compile_ptx(source)
                .map_err(|e| GpuError::other("nvrtcCompileProgram", format!("{e:?}")))?;
            let mut image = ptx.to_src().into_bytes();
            image.push(0);
            Ok(image)
        }
        Err(e) => Err(GpuError::other(
            "nvrtcCompileProgram",
            format!("{e:?}: {}", log(&program)),
        )),
    }
}

/// NVRTC's version (major, minor), if the library answers.
fn nvrtc_version() -> Option<(i32, i32)> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two out-pointers to locals; NVRTC is loaded (it compiled the image whose
    // load failed).
    match unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) } {
        nvrtc_sys::nvrtcResult::NVRTC_SUCCESS => Some((major, minor)),
        _ => None,
    }
}

/// Why the driver refused an image NVRTC made, where the versions say: an NVRTC newer
/// than the driver (`driver`: `cuDriverGetVersion`'s number, 12080 for 12.8) makes code
/// the driver cannot load (PTX of a newer ISA version; across major versions, cubins
/// too), and the driver's own error does not say so.
pub(super) fn version_mismatch(nvrtc: (i32, i32), driver: i32) -> Option<String> {
    let driver_version = (driver / 1000, driver % 1000 / 10);
    (nvrtc > driver_version).then(|| {
        format!(
            "NVRTC {}.{} is newer than the CUDA driver {}.{}, which cannot load the code it \
             makes; install an NVRTC of the driver's version or older (`pip install \
             \"nvidia-cuda-nvrtc-cu{}=={}.{}.*\"`, or the toolkit's libnvrtc), or update \
             the NVIDIA driver",
            nvrtc.0,
            nvrtc.1,
            driver_version.0,
            driver_version.1,
            driver_version.0,
            driver_version.0,
            driver_version.1
        )
    })
}

impl CudaApi {
    /// `e`, a failed `cuModuleLoadData`, with the reason where NVRTC is newer than the
    /// driver (the image refused as invalid, of an unsupported PTX version, or with no
    /// code for this GPU).
    pub(super) fn explain_load_failure(&self, mut e: GpuError) -> GpuError {
        use sys::CUresult as R;
        let refused = [
            R::CUDA_ERROR_INVALID_IMAGE,
            R::CUDA_ERROR_NO_BINARY_FOR_GPU,
            R::CUDA_ERROR_INVALID_PTX,
            R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
        ];
        if !refused.iter().any(|&r| r as i32 == e.code) {
            return e;
        }
        let why = nvrtc_version()
            .zip(self.driver_version_number())
            .and_then(|(nvrtc, driver)| version_mismatch(nvrtc, driver));
        if let Some(why) = why {
            e.name = format!("{} ({why})", e.name);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn kernels_are_compiled_for_the_devices_own_architecture() {
        assert_eq!(super::arch_option(8, 6), "--gpu-architecture=sm_86");
        assert_eq!(super::arch_option(9, 0), "--gpu-architecture=sm_90");
    }

    /// Issue 61, item 8: a CUDA 13 NVRTC (from a wheel) on a 12.8 driver is named with
    /// both versions and what to install; an NVRTC of the driver's version or older is
    /// not blamed. On the code before, the driver's bare error was all the user saw.
    #[test]
    fn an_nvrtc_newer_than_the_driver_is_named_with_both_versions() {
        let why = super::version_mismatch((13, 0), 12080).unwrap();
        assert!(
            why.contains("NVRTC 13.0")
                && why.contains("CUDA driver 12.8")
                && why.contains("nvidia-cuda-nvrtc-cu12==12.8.*"),
            "{why}"
        );
        assert!(super::version_mismatch((12, 9), 12080).is_some());
        assert!(super::version_mismatch((12, 8), 12080).is_none());
        assert!(super::version_mismatch((12, 4), 13000).is_none());
    }
}
