//! `cuModuleLoadData` in the simulated driver: a cubin of the CUDA ABI (an ELF object
//! whose ABI byte is 0x33, or 0x41 for the newer ABI) loads when it is for the device's
//! architecture (same major version, minor no higher: an sm_80 cubin does not load on
//! the simulated 9.0 device, `CUDA_ERROR_NO_BINARY_FOR_GPU`); PTX loads when its ISA
//! version is one the driver knows (PTX 8.7 on CUDA 12.8, 9.0 on 13.0: a newer NVRTC's
//! PTX is `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`); anything else is
//! `CUDA_ERROR_INVALID_IMAGE`.

use cudarc::driver::sys::*;

use super::{out, SimCuda};
use crate::backends::cuda_hip::sim_model::{ptx_entries, read_image, Image};

/// The newest PTX ISA version a driver of `version` (12080: 12.8) loads.
pub(super) fn newest_ptx(version: i32) -> (u32, u32) {
    let (major, minor) = ((version / 1000) as u32, (version % 1000 / 10) as u32);
    match major {
        12 if minor <= 5 => (8, minor),
        12 => (8, minor - 1),
        13.. => (major - 4, minor),
        _ => (7, 8),
    }
}

/// The `.version X.Y` a PTX text declares.
fn ptx_version(ptx: &str) -> Option<(u32, u32)> {
    let rest = ptx.split(".version").nth(1)?.trim_start();
    let token: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let (major, minor) = token.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

impl SimCuda {
    /// # Safety
    /// `image` is a whole ELF object or NUL-terminated text; `module` is valid for a
    /// write.
    pub(super) unsafe fn load_module(&self, module: *mut CUmodule, image: *const u8) -> CUresult {
        const CALL: &str = "cuModuleLoadData";
        // SAFETY: per the caller's contract.
        let names = match unsafe { read_image(image) } {
            // The older cubin ABI keeps the architecture (`sm_XY`: XY) in e_flags' low
            // byte; the device here is 9.0.
            Image::Elf(0x33, flags, _) if !matches!(flags & 0xff, 90) => {
                self.0.record(CALL, 0);
                return CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU;
            }
            Image::Elf(0x33 | 0x41, _, names) => names,
            Image::Text(ptx) => match ptx_version(&ptx) {
                Some(v) if v <= newest_ptx(self.devices().version) => ptx_entries(&ptx),
                Some(_) => {
                    self.0.record(CALL, 0);
                    return CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
                }
                None => {
                    self.0.record(CALL, 0);
                    return CUresult::CUDA_ERROR_INVALID_IMAGE;
                }
            },
            Image::Elf(..) => {
                self.0.record(CALL, 0);
                return CUresult::CUDA_ERROR_INVALID_IMAGE;
            }
        };
        let handle = self.0.load_module(CALL, names);
        // SAFETY: the caller's out-pointer.
        unsafe { out(module, handle as CUmodule) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_driver_loads_ptx_up_to_its_own_isa_version() {
        assert_eq!(super::newest_ptx(12040), (8, 4));
        assert_eq!(super::newest_ptx(12080), (8, 7));
        assert_eq!(super::newest_ptx(12090), (8, 8));
        assert_eq!(super::newest_ptx(13000), (9, 0));
        assert_eq!(
            super::ptx_version("//\n.version 8.7\n.target sm_90"),
            Some((8, 7))
        );
    }
}
