//! HipApi's kernel compilation against a simulated runtime and hiprtc (issue 48, item 5):
//! the real call layer (`result.rs`) runs, only the libraries are stand-ins. The simulated
//! hiprtc keeps hiprtc's rules: without `--offload-arch` it cannot find the device's
//! architecture (it looks for the unversioned `libamdhip64.so`, which a runtime install
//! lacks) and the compile fails; a source that includes `<hip/hip_runtime.h>` fails (its
//! headers are built in).

use std::ffi::{c_char, CStr};
use std::sync::{Arc, Mutex};

use super::entry_points::{HipRuntime, Hiprtc};
use super::rtc_sys::{
    hiprtcProgram, hiprtcResult, hiprtcResult_HIPRTC_ERROR_COMPILATION, hiprtcResult_HIPRTC_SUCCESS,
};
use super::*;
use crate::backends::cuda_hip::GpuApi;

/// A runtime of one device, 0, current; modules load and name their functions.
pub(super) struct Runtime;

impl HipRuntime for Runtime {
    unsafe fn hipGetDevice(&self, device: *mut std::os::raw::c_int) -> hipError_t {
        // SAFETY: the caller's out-pointer.
        unsafe { *device = 0 };
        hipError_t_hipSuccess
    }
    unsafe fn hipSetDevice(&self, _: std::os::raw::c_int) -> hipError_t {
        hipError_t_hipSuccess
    }
    unsafe fn hipModuleLoadData(
        &self,
        module: *mut hipModule_t,
        _: *const std::os::raw::c_void,
    ) -> hipError_t {
        // SAFETY: the caller's out-pointer; a made-up, non-null handle.
        unsafe { *module = 0x1000 as hipModule_t };
        hipError_t_hipSuccess
    }
    unsafe fn hipModuleGetFunction(
        &self,
        function: *mut hipFunction_t,
        _: hipModule_t,
        _: *const c_char,
    ) -> hipError_t {
        // SAFETY: as above.
        unsafe { *function = 0x2000 as hipFunction_t };
        hipError_t_hipSuccess
    }
}

/// hiprtc as its rules go; the options of every compile kept (a clone shares them, so
/// the test reads what the compiler was told).
#[derive(Default, Clone)]
pub(super) struct Compiler(Arc<Told>);

#[derive(Default)]
pub(super) struct Told {
    source: Mutex<String>,
    options: Mutex<Vec<Vec<String>>>,
    log: Mutex<String>,
}

impl Hiprtc for Compiler {
    unsafe fn hiprtcCreateProgram(
        &self,
        program: *mut hiprtcProgram,
        source: *const c_char,
        _: *const c_char,
        _: std::os::raw::c_int,
        _: *mut *const c_char,
        _: *mut *const c_char,
    ) -> hiprtcResult {
        // SAFETY: a NUL-terminated source and the caller's out-pointer.
        unsafe {
            *self.0.source.lock().unwrap() = CStr::from_ptr(source).to_string_lossy().into();
            *program = 0x3000 as hiprtcProgram;
        }
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcCompileProgram(
        &self,
        _: hiprtcProgram,
        count: std::os::raw::c_int,
        options: *mut *const c_char,
    ) -> hiprtcResult {
        let given: Vec<String> = (0..count as usize)
            .map(|i| {
                // SAFETY: the caller passes `count` NUL-terminated options.
                unsafe { CStr::from_ptr(*options.add(i)) }
                    .to_string_lossy()
                    .into()
            })
            .collect();
        self.0.options.lock().unwrap().push(given.clone());
        let why = if self
            .0
            .source
            .lock()
            .unwrap()
            .contains("#include <hip/hip_runtime.h>")
        {
            Some("hip/hip_runtime.h: file not found (hiprtc's headers are built in)")
        } else if !given.iter().any(|o| o.starts_with("--offload-arch=gfx")) {
            Some("cannot find libamdhip64.so to ask the device's architecture; pass --offload-arch")
        } else {
            None
        };
        match why {
            Some(why) => {
                *self.0.log.lock().unwrap() = why.into();
                hiprtcResult_HIPRTC_ERROR_COMPILATION
            }
            None => hiprtcResult_HIPRTC_SUCCESS,
        }
    }
    unsafe fn hiprtcGetProgramLogSize(&self, _: hiprtcProgram, size: *mut usize) -> hiprtcResult {
        // SAFETY: the caller's out-pointer.
        unsafe { *size = self.0.log.lock().unwrap().len() + 1 };
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcGetProgramLog(&self, _: hiprtcProgram, log: *mut c_char) -> hiprtcResult {
        let text = self.0.log.lock().unwrap().clone();
        // SAFETY: the caller's buffer of the size above.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr().cast(), log, text.len());
            *log.add(text.len()) = 0;
        }
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcGetCodeSize(&self, _: hiprtcProgram, size: *mut usize) -> hiprtcResult {
        // SAFETY: the caller's out-pointer.
        unsafe { *size = 16 };
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcGetCode(&self, _: hiprtcProgram, code: *mut c_char) -> hiprtcResult {
        // SAFETY: the caller's buffer of the size above.
        unsafe { std::ptr::write_bytes(code, 0x7f, 16) };
        hiprtcResult_HIPRTC_SUCCESS
    }
    unsafe fn hiprtcDestroyProgram(&self, _: *mut hiprtcProgram) -> hiprtcResult {
        hiprtcResult_HIPRTC_SUCCESS
    }
}

const KERNEL: &str = "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }";

#[test]
fn hiprtc_is_told_the_devices_architecture_and_compiles() {
    let compiler = Compiler::default();
    let api = HipApi::simulated(
        Box::new(Runtime),
        Box::new(compiler.clone()),
        vec![Some("gfx90a:sramecc+:xnack-".into())],
    );
    api.compile(KERNEL, "k")
        .expect("compiles for the device's architecture");
    let options = compiler.0.options.lock().unwrap().clone();
    assert!(
        options[0].contains(&"--offload-arch=gfx90a:sramecc+:xnack-".to_string()),
        "{options:?}"
    );
}

#[test]
fn without_an_architecture_or_with_the_runtime_header_the_compile_fails_naming_hiprtc() {
    let compiler = Compiler::default();
    let api = HipApi::simulated(Box::new(Runtime), Box::new(compiler.clone()), vec![None]);
    let e = api.compile(KERNEL, "k").unwrap_err().to_string();
    assert!(
        e.contains("hiprtcCompileProgram") && e.contains("--offload-arch"),
        "{e}"
    );
    let api = HipApi::simulated(
        Box::new(Runtime),
        Box::new(compiler),
        vec![Some("gfx1100".into())],
    );
    let with_header = format!("#include <hip/hip_runtime.h>\n{KERNEL}");
    let e = api.compile(&with_header, "k").unwrap_err().to_string();
    assert!(e.contains("hip_runtime.h"), "{e}");
}
