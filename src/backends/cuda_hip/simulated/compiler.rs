//! The simulated run-time compiler (NVRTC, hiprtc): the rules a real one enforces on the
//! sources locus hands it.

use super::*;

/// Refuses what NVRTC or hiprtc would: no entry point, an included header (they compile
/// with their own built-in declarations and find no system header), an entry the
/// source does not define.
pub(super) fn check(source: &str, entry: &str) -> Result<(), GpuError> {
    if entry.is_empty() {
        return Err(GpuError::other("nvrtcCompileProgram", "no entry point"));
    }
    // NVRTC and hiprtc compile with their own built-in declarations and find no
    // system header: `#include <hip/hip_runtime.h>` fails on a real machine.
    if let Some(line) = source
        .lines()
        .find(|l| l.trim_start().starts_with("#include"))
    {
        return Err(GpuError::other(
            "nvrtcCompileProgram",
            format!("catastrophic error: cannot open source file ({line})"),
        ));
    }
    // Getting a function the module does not define fails (cuModuleGetFunction's
    // CUDA_ERROR_NOT_FOUND) on a real machine.
    if !source.contains(&format!("void {entry}(")) {
        return Err(GpuError::other(
            "cuModuleGetFunction",
            format!("named symbol not found: no kernel `{entry}` in the source"),
        ));
    }
    Ok(())
}
