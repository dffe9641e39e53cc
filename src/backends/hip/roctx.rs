//! ROCTX ranges for AMD's profilers (rocprof, rocprofv3, Omnitrace): locus's copies as
//! ranges (`roctxRangeStartA` / `roctxRangeStop`), its allocations and frees as marks
//! (`roctxMarkA`), through the ROCTX library the profiler intercepts, loaded at run time.

use std::ffi::{c_char, CString};

use crate::core::profiler_ranges::ProfilerRanges;

/// The ROCTX libraries, newest first (rocprofiler-sdk's, then roctracer's).
const LIBRARIES: [&str; 4] = [
    "librocprofiler-sdk-roctx.so.1",
    "librocprofiler-sdk-roctx.so",
    "libroctx64.so.4",
    "libroctx64.so",
];

type RangeStartA = unsafe extern "C" fn(*const c_char) -> u64;
type RangeStop = unsafe extern "C" fn(u64);
type MarkA = unsafe extern "C" fn(*const c_char);

/// ROCTX's calls.
pub struct Roctx {
    start: RangeStartA,
    stop: RangeStop,
    mark: MarkA,
}

/// Whether an AMD profiler runs this process: its library preloaded or named as a tool.
pub fn profiled() -> bool {
    ["LD_PRELOAD", "ROCP_TOOL_LIBRARIES", "HSA_TOOLS_LIB"]
        .iter()
        .filter_map(std::env::var_os)
        .any(|v| {
            let v = v.to_string_lossy();
            v.contains("rocprof") || v.contains("roctracer")
        })
}

/// Loads ROCTX; an error naming each library tried when none loads (the library kept
/// loaded for the rest of the run).
pub fn attach() -> Result<Roctx, String> {
    let (library, name) =
        crate::backends::loading::load_first(&LIBRARIES).map_err(|e| e.to_string())?;
    let fail = |e: libloading::Error| format!("{name}: {}", crate::backends::loading::dl_error(&e));
    // SAFETY: the symbols are ROCTX's C functions of these signatures (roctx.h); the
    // library stays loaded (forgotten below), so the copied pointers stay valid.
    let roctx = unsafe {
        Roctx {
            start: *library
                .get::<RangeStartA>(b"roctxRangeStartA\0")
                .map_err(fail)?,
            stop: *library
                .get::<RangeStop>(b"roctxRangeStop\0")
                .map_err(fail)?,
            mark: *library.get::<MarkA>(b"roctxMarkA\0").map_err(fail)?,
        }
    };
    std::mem::forget(library);
    Ok(roctx)
}

impl ProfilerRanges for Roctx {
    fn start(&self, name: &CString) -> u64 {
        // SAFETY: ROCTX's call, with a NUL-terminated string that lives for the call.
        unsafe { (self.start)(name.as_ptr()) }
    }

    fn end(&self, id: u64) {
        // SAFETY: ROCTX's call, with an id `roctxRangeStartA` returned.
        unsafe { (self.stop)(id) }
    }

    fn mark(&self, name: &CString) {
        // SAFETY: as in `start`.
        unsafe { (self.mark)(name.as_ptr()) }
    }
}
