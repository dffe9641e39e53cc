//! The simulated run-time compiler (NVRTC, hiprtc) and launcher: the rules a real one
//! enforces on the sources locus hands it and on the sizes of a launch.

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

/// Refuses a launch the driver would: a zero or oversized grid, more work items along x
/// than the driver takes (`max_items_x`), a block of more than 1024 threads.
pub(super) fn check_launch(
    grid: [u32; 3],
    block: [u32; 3],
    max_items_x: u64,
) -> Result<(), GpuError> {
    let threads = block.iter().map(|&b| u64::from(b)).product::<u64>();
    if grid.contains(&0)
        || block.contains(&0)
        || grid[0] > i32::MAX as u32
        || grid[1] > 65_535
        || grid[2] > 65_535
        || threads > 1024
        || u64::from(grid[0]) * u64::from(block[0]) > max_items_x
    {
        return Err(error(
            "cuLaunchKernel",
            INVALID_VALUE,
            &format!("CUDA_ERROR_INVALID_VALUE: grid {grid:?}, block {block:?}"),
        ));
    }
    Ok(())
}
