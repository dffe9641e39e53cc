//! Every `LOCUS_*` environment variable, in one place: the table of them
//! ([`VARIABLES`]: name, accepted values, default, meaning, who reads it) and one typed
//! reader per kind of value. The library and the `locus` tool read their variables only
//! through these readers (`tests/config.rs` checks it, and that the table and the docs'
//! list name every variable the repository uses).
//!
//! A value that is set but not accepted is an [`Error::Invalid`] naming the variable,
//! the value and the accepted values. Where a safe default exists the caller goes on
//! with it after [`warn_once`] has said so on stderr.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Mutex;

use super::error::{Error, Result};
use super::size::parse_size;

/// One environment variable.
#[derive(Debug, Clone, Copy)]
pub struct Variable {
    /// Its name.
    pub name: &'static str,
    /// The values it accepts.
    pub accepts: &'static str,
    /// What holds when it is unset.
    pub default: &'static str,
    /// What it does.
    pub meaning: &'static str,
    /// Who reads it: `library`, `locus` (the tool), `tests`, `benches`, `examples`.
    pub read_by: &'static str,
}

const fn var(
    name: &'static str,
    accepts: &'static str,
    default: &'static str,
    meaning: &'static str,
    read_by: &'static str,
) -> Variable {
    Variable {
        name,
        accepts,
        default,
        meaning,
        read_by,
    }
}

/// Every `LOCUS_*` variable the library, the tool, the tests, benchmarks and examples
/// read, by name.
pub const VARIABLES: &[Variable] = &[
    var("LOCUS_ATEXIT_CHILD", "set by the test itself", "unset", "the location whose memory the child process of `tests/exit_pending.rs` reads in its `atexit` handler", "tests"),
    var("LOCUS_BACKENDS", "a comma-separated list of technologies (`opencl,sycl`)", "every technology", "which technologies are probed; the host always is", "library"),
    var("LOCUS_BENCH_LOCATIONS", "a comma-separated list of locations", "the first four available", "the locations of `benches/pipeline.rs`", "benches"),
    var("LOCUS_BENCH_MIB", "a whole number of MiB", "16 (pipeline), 64 (conversions)", "the buffer size of `benches/pipeline.rs` and `benches/conversions.rs`", "benches"),
    var("LOCUS_BENCH_REPS", "a whole number above zero", "each benchmark's own", "timed repetitions per measurement of the benchmarks in `benches/` (`locus bench` runs to its time budget instead)", "benches"),
    var("LOCUS_BENCH_TRACE", "`1`", "off", "`benches/pipeline.rs` prints when each call returned", "benches"),
    var("LOCUS_CACHE_DIR", "a directory of your own (not writable by others)", "`$XDG_CACHE_HOME/locus`, else `~/.cache/locus`, else `$TMPDIR/locus-<uid>`", "where compiled OpenMP kernels and the planner's calibration are kept (made 0700; refused when another user owns it)", "library"),
    var("LOCUS_CALIBRATION", "`off`, or a calibration file", "the file `locus calibrate` wrote for this machine", "the planner's measured costs: off, or another file", "library"),
    var("LOCUS_CAPI_BLESS", "set", "unset", "`cargo test -p locus-capi` rewrites `capi/include/locus.h` from the source instead of checking it", "tests"),
    var("LOCUS_CAPSULE_SEED", "a whole number", "a fixed seed", "replays one run of the DLPack capsule property test", "tests"),
    var("LOCUS_CUDA_CLANG", "a clang++ of LLVM 19 or newer", "set by `scripts/cuda-clang-env.sh`", "the compiler `capi/tests/run-hamr.sh` builds HAMR's CUDA programs with where no nvcc is", "tests"),
    var("LOCUS_CUDA_PATH", "a CUDA folder (`include`, `bin/ptxas`, `nvvm/libdevice`, `lib64`)", "`~/.cache/locus/cuda-11.8` (made by `scripts/cuda-clang-env.sh` from NVIDIA's wheels)", "the CUDA path clang compiles against", "tests"),
    var("LOCUS_EXIT_CHILD", "set by the test itself", "unset", "marks the child process of `tests/exit_pending.rs`", "tests"),
    var("LOCUS_EXIT_RUNS", "a whole number", "20", "how many processes `tests/exit_pending.rs` and `python/tests/test_exit.py` end with work pending, per combination of technologies", "tests"),
    var("LOCUS_EXIT_WAIT_S", "seconds, 0 to 3600", "10", "how long the end of the process waits for background work before it stops releasing native objects", "library"),
    var("LOCUS_EXPECT_HIP_NO_DEVICE", "set", "unset", "the tests expect HIP to load and say it has no device (CI's CPU machines)", "tests"),
    var("LOCUS_EXPECT_NO_LIBCUDA", "set", "unset", "the tests expect no CUDA driver library (CI's CPU machines)", "tests"),
    var("LOCUS_FUZZ_SAVE", "a directory", "unset", "where the fuzz tests save the inputs they generated", "tests"),
    var("LOCUS_FUZZ_SECS", "seconds", "1 (tests), 15 (CI's release step)", "how long each parser is fuzzed", "tests"),
    var("LOCUS_FUZZ_SEED", "a whole number", "a fixed seed", "the fuzz tests' random seed", "tests"),
    var("LOCUS_GPU_DIRECT_UPLOAD_MAX", "a size (`4MiB`, `65536`)", "the technology's own (every size on CUDA, none on HIP)", "up to which size a pageable upload to CUDA / HIP is the driver's own call rather than staged through pinned chunks", "library"),
    var("LOCUS_HIPRTC_ROOT", "a folder of unpacked Debian 13 packages (ROCm 5.7's HIP runtime and its C library)", "unset (`scripts/hiprtc-5.7-env.sh` sets it, making `~/.cache/locus/rocm-5.7`)", "the real-compiler test compiles every HIP kernel for gfx942 and gfx1100 with the hiprtc there, under that folder's loader", "tests"),
    var("LOCUS_IPC_HANDLE", "set by the test itself", "unset", "the handle the second process of `tests/ipc.rs` opens", "tests"),
    var("LOCUS_IPC_MAKE_AND_EXIT", "set by the test itself", "unset", "the second process of `tests/ipc.rs` that ends without freeing its shared memory", "tests"),
    var("LOCUS_IPC_MAKE_AND_HANG", "set by the test itself", "unset", "the second process of `tests/ipc.rs` that makes shared memory and is killed", "tests"),
    var("LOCUS_IPC_MAKE_ONE", "set by the test itself", "unset", "the third process of `tests/ipc.rs` whose shared memory reclaims a killed maker's", "tests"),
    var("LOCUS_IPC_SMALL_SHM", "set by the test itself", "unset", "the process of `tests/ipc.rs` run in a private 64 MiB `/dev/shm`", "tests"),
    var("LOCUS_JACOBI_N", "a whole number", "the benchmark's own", "the grid size of `benches/jacobi.rs`", "benches"),
    var("LOCUS_LOCATION", "a location (`opencl:1`)", "the host", "where `examples/choose_backend` runs", "examples"),
    var("LOCUS_LOG_FILE", "a file", "unset (`RMM_LOG_FILE` first, as RMM)", "the file `Logging::from_env` writes the allocation log to", "library"),
    var("LOCUS_MPI_CHUNK", "a size of 4 KiB or more", "the library's own", "the piece size of staged MPI transfers", "library"),
    var("LOCUS_MPI_DEVICE_AWARE", "`1`, `yes`, `true`, `0`, `no`, `false`", "what the MPI library says (`MPIX_Query_cuda_support`, ...)", "whether device memory is handed to MPI directly", "library"),
    var("LOCUS_MPI_ROUTE", "`staged`, `auto`", "`auto`", "`staged`: every MPI transfer through host memory", "library"),
    var("LOCUS_MPI_SAME_NODE", "`ipc`, `mpi`", "`ipc`", "`mpi`: messages between ranks of one node go through MPI's transport, not shared memory", "library"),
    var("LOCUS_MPI_TIMEOUT_S", "seconds (0: never)", "300", "how long an MPI call waits for its peer before it fails", "library"),
    var("LOCUS_OPENMP_CC", "a C compiler", "`$CC`, else `cc`", "the compiler of user OpenMP kernels", "library"),
    var("LOCUS_PROFILED_CHILD", "set by the test itself", "unset", "marks the profiled child processes of `tests/profiler_ranges.rs`", "tests"),
    var("LOCUS_PROFILER_RANGES", "`auto`, `off`, `nvtx`, `roctx`", "`auto`", "locus's copies as ranges and its allocations as marks in a vendor profiler: NVTX when a tool set `NVTX_INJECTION64_PATH` (Nsight Systems), ROCTX when an AMD profiler runs the process", "library"),
    var("LOCUS_REAL_COMPILER_CHILD", "set by the test itself", "unset", "marks the child process in which a real-hiprtc unit test compiles (comgr's LLVM and another in one process abort)", "tests"),
    var("LOCUS_REQUIRE", "a comma-separated list of locations or technologies", "unset", "`locus info` and the tests fail when one is missing", "locus, tests"),
    var("LOCUS_REQUIRE_COMPILERS", "a comma-separated list: `nvrtc`, `hiprtc`, `hiprtc-5.7`", "unset", "the real-compiler tests fail when a compiler named is missing, instead of printing SKIPPED (CI)", "tests"),
    var("LOCUS_SPIN_US", "microseconds, 0 or more", "50", "how long locus's worker threads and waiters spin before they sleep (0: never)", "library"),
    var("LOCUS_STRESS_MS", "milliseconds", "400 (tests), 1500 (CI's release step)", "how long each stress test runs", "tests"),
    var("LOCUS_STRESS_SEED", "a whole number", "a fixed seed", "replays one stress run", "tests"),
    var("LOCUS_SYCL_LIBRARY", "a path to `libDPCTLSyclInterface.so`", "searched in Python virtual environments", "which dpctl C API the SYCL backend loads", "library"),
    var("LOCUS_SYCL_VENV", "a Python virtual environment", "`~/.cache/locus/sycl-venv`", "where dpctl is looked for (and `scripts/sycl-env.sh` installs it)", "library"),
    var("LOCUS_TRACE", "a file (`run.json`)", "unset", "the whole run's trace, in the Chrome trace format Perfetto opens (allocations, copies with their routes, launches, waits)", "library"),
    var("LOCUS_TRACE_CHILD", "set by the test itself", "unset", "marks the child processes of `tests/trace.rs` (a run that dies mid-trace, an unwritable trace file, a whole run traced)", "tests"),
    var("LOCUS_WEBGPU_CONVERT", "`device`, `host`", "the device on discrete GPUs, the host on CPU adapters", "where WebGPU buffers' element conversions run", "library"),
    var("LOCUS_WEBGPU_MAPPABLE", "`1`, `0`", "`1`", "`0`: WebGPU storage buffers are never mapped in place (as on a discrete GPU)", "library"),
    var("LOCUS_WGPU_APP_ERROR_CHILD", "set by the test itself", "unset", "marks the child process of `tests/webgpu.rs` that makes a wgpu error of its own on locus's device", "tests"),
];

/// The value of `name` when it is set to something other than the empty string.
pub fn text(name: &'static str) -> Option<String> {
    debug_assert!(is_known(name), "{name} is not in config::VARIABLES");
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(|v| v.to_string_lossy().into_owned())
}

/// A path, when `name` is set (not empty).
pub fn path(name: &'static str) -> Option<PathBuf> {
    debug_assert!(is_known(name), "{name} is not in config::VARIABLES");
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Whether `name` is set at all (for markers whose value does not matter).
pub fn is_set(name: &'static str) -> bool {
    debug_assert!(is_known(name), "{name} is not in config::VARIABLES");
    std::env::var_os(name).is_some()
}

/// `1` / `yes` / `true` / `on` or `0` / `no` / `false` / `off`.
pub fn flag(name: &'static str) -> Result<Option<bool>> {
    let Some(value) = text(name) else {
        return Ok(None);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "yes" | "true" | "on" => Ok(Some(true)),
        "0" | "no" | "false" | "off" => Ok(Some(false)),
        _ => Err(rejected(name, &value)),
    }
}

/// One of `options` (compared after trimming).
pub fn choice(name: &'static str, options: &[&'static str]) -> Result<Option<&'static str>> {
    let Some(value) = text(name) else {
        return Ok(None);
    };
    options
        .iter()
        .find(|o| **o == value.trim())
        .copied()
        .map(Some)
        .ok_or_else(|| rejected(name, &value))
}

/// A number of type `T` that `accept` takes.
pub fn number<T: FromStr>(name: &'static str, accept: impl Fn(&T) -> bool) -> Result<Option<T>> {
    parse_number(name, text(name).as_deref(), accept)
}

/// [`number`] of a value already read (`None`: unset).
pub fn parse_number<T: FromStr>(
    name: &'static str,
    value: Option<&str>,
    accept: impl Fn(&T) -> bool,
) -> Result<Option<T>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.trim().parse::<T>() {
        Ok(n) if accept(&n) => Ok(Some(n)),
        _ => Err(rejected(name, value)),
    }
}

/// Seconds: a finite number, 0 or more.
pub fn seconds(name: &'static str) -> Result<Option<f64>> {
    number(name, |s: &f64| s.is_finite() && *s >= 0.0)
}

/// A size in bytes (`4MiB`, `65536`: [`parse_size`]).
pub fn size(name: &'static str) -> Result<Option<u64>> {
    let Some(value) = text(name) else {
        return Ok(None);
    };
    parse_size(&value)
        .map(Some)
        .map_err(|e| Error::Invalid(format!("{}; {e}", rejected(name, &value))))
}

/// The value `read` gives, or `None` after a warning on stderr (once per variable) that
/// names the variable, its value and what it accepts: for variables with a safe default.
pub fn or_warn<T>(read: Result<Option<T>>) -> Option<T> {
    read.unwrap_or_else(|e| {
        warn_once(&e.to_string());
        None
    })
}

/// Prints `locus: warning: {message}` on stderr, once per message.
pub fn warn_once(message: &str) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.iter().any(|m| m == message) {
        said.push(message.to_string());
        eprintln!("locus: warning: {message}");
    }
}

/// The variables of [`VARIABLES`] set in this process, with their values (for
/// `locus info`).
pub fn set_variables() -> Vec<(&'static Variable, String)> {
    VARIABLES
        .iter()
        .filter_map(|v| {
            std::env::var_os(v.name).map(|value| (v, value.to_string_lossy().into_owned()))
        })
        .collect()
}

/// The entry of `name` in [`VARIABLES`].
pub fn variable(name: &str) -> Option<&'static Variable> {
    VARIABLES.iter().find(|v| v.name == name)
}

fn is_known(name: &str) -> bool {
    variable(name).is_some()
}

fn rejected(name: &'static str, value: &str) -> Error {
    let accepts =
        variable(name).map_or("see the docs' list of environment variables", |v| v.accepts);
    Error::Invalid(format!(
        "{name}={value:?} is not accepted (it takes {accepts}); unset it or give one of those"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_each_name_once() {
        let names: Vec<&str> = VARIABLES.iter().map(|v| v.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
        assert!(names.iter().all(|n| n.starts_with("LOCUS_")));
    }

    #[test]
    fn a_rejected_value_names_the_variable_and_what_it_accepts() {
        let e = rejected("LOCUS_SPIN_US", "fast").to_string();
        assert!(
            e.contains("LOCUS_SPIN_US=\"fast\"") && e.contains("microseconds"),
            "{e}"
        );
    }
}
