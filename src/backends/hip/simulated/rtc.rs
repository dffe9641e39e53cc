//! A simulated hiprtc behind [`Hiprtc`], keeping hiprtc's rules: without
//! `--offload-arch` it cannot find the device's architecture (it looks for the
//! unversioned `libamdhip64.so`, which a runtime install lacks) and the compile fails; a
//! source that includes `<hip/hip_runtime.h>` fails (its headers are built in); the
//! code object is an AMD GPU ELF object naming the source's kernels (what the simulated
//! runtime's `hipModuleLoadData` reads). The options of every compile are kept (a clone
//! shares them, so a test reads what the compiler was told).

use std::ffi::{c_char, c_int, CStr};
use std::sync::{Arc, Mutex};

use super::super::entry_points::Hiprtc;
use super::super::rtc_sys::*;
use crate::backends::cuda_hip::sim_model::elf_image;

#[derive(Default, Clone)]
pub(in crate::backends::hip) struct SimHiprtc(pub(in crate::backends::hip) Arc<Told>);

#[derive(Default)]
pub(in crate::backends::hip) struct Told {
    source: Mutex<String>,
    pub(in crate::backends::hip) options: Mutex<Vec<Vec<String>>>,
    log: Mutex<String>,
    code: Mutex<Vec<u8>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The kernels a HIP source defines (`__global__ void name(`).
fn kernels(source: &str) -> Vec<String> {
    source
        .split("__global__")
        .skip(1)
        .filter_map(|rest| {
            let head = rest.split('(').next()?;
            head.split_whitespace().last().map(str::to_string)
        })
        .collect()
}

impl Hiprtc for SimHiprtc {
    unsafe fn hiprtcGetErrorString(&self, _: hiprtcResult) -> *const c_char {
        c"an error of the simulated hiprtc".as_ptr()
    }
    unsafe fn hiprtcCreateProgram(
        &self,
        program: *mut hiprtcProgram,
        source: *const c_char,
        _: *const c_char,
        headers: c_int,
        _: *mut *const c_char,
        _: *mut *const c_char,
    ) -> hiprtcResult {
        if source.is_null() || headers < 0 {
            return hiprtcResult_HIPRTC_ERROR_INVALID_INPUT;
        }
        // SAFETY: a NUL-terminated source and the caller's out-pointer.
        unsafe {
            *lock(&self.0.source) = CStr::from_ptr(source).to_string_lossy().into();
            *program = 0x3000 as hiprtcProgram;
        }
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcCompileProgram(
        &self,
        _: hiprtcProgram,
        count: c_int,
        options: *mut *const c_char,
    ) -> hiprtcResult {
        let given: Vec<String> = (0..count.max(0) as usize)
            .map(|i| {
                // SAFETY: the caller passes `count` NUL-terminated options.
                unsafe { CStr::from_ptr(*options.add(i)) }
                    .to_string_lossy()
                    .into()
            })
            .collect();
        lock(&self.0.options).push(given.clone());
        let source = lock(&self.0.source).clone();
        let why = if source.contains("#include <hip/hip_runtime.h>") {
            Some("hip/hip_runtime.h: file not found (hiprtc's headers are built in)")
        } else if !given.iter().any(|o| o.starts_with("--offload-arch=gfx")) {
            Some("cannot find libamdhip64.so to ask the device's architecture; pass --offload-arch")
        } else {
            None
        };
        match why {
            Some(why) => {
                *lock(&self.0.log) = why.into();
                hiprtcResult_HIPRTC_ERROR_COMPILATION
            }
            None => {
                let names = kernels(&source);
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                // ELFOSABI_AMDGPU_HSA.
                *lock(&self.0.code) = elf_image(64, &names);
                hiprtcResult_HIPRTC_SUCCESS
            }
        }
    }
    unsafe fn hiprtcGetProgramLogSize(&self, _: hiprtcProgram, size: *mut usize) -> hiprtcResult {
        // SAFETY: the caller's out-pointer.
        unsafe { *size = lock(&self.0.log).len() + 1 };
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcGetProgramLog(&self, _: hiprtcProgram, log: *mut c_char) -> hiprtcResult {
        let text = lock(&self.0.log).clone();
        // SAFETY: the caller's buffer of the size above.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr().cast(), log, text.len());
            *log.add(text.len()) = 0;
        }
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcGetCodeSize(&self, _: hiprtcProgram, size: *mut usize) -> hiprtcResult {
        // SAFETY: the caller's out-pointer.
        unsafe { *size = lock(&self.0.code).len() };
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcGetCode(&self, _: hiprtcProgram, code: *mut c_char) -> hiprtcResult {
        let image = lock(&self.0.code).clone();
        // SAFETY: the caller's buffer of the size above.
        unsafe { std::ptr::copy_nonoverlapping(image.as_ptr().cast(), code, image.len()) };
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcDestroyProgram(&self, program: *mut hiprtcProgram) -> hiprtcResult {
        // SAFETY: the caller's program handle.
        match unsafe { *program } as usize {
            0x3000 => hiprtcResult_HIPRTC_SUCCESS,
            _ => hiprtcResult_HIPRTC_ERROR_INVALID_PROGRAM,
        }
    }
}
