//! See what moved, where and when: every allocation and free, copy (pair, route, path,
//! bytes, track, times), kernel launch and wait, as one stream of events.
//!
//! - [`ChromeTrace`] writes them to a file Perfetto and `chrome://tracing` open; so does
//!   `LOCUS_TRACE=run.json` for a whole run, and `locus bench --trace run.json`;
//!   `locus trace summary run.json` prints the routes that took the time.
//! - [`StatisticsScope`] / [`push_statistics`] / [`pop_statistics`] count allocations
//!   and copies in scopes, as RMM's statistics do.
//! - [`add_sink`] takes any listener of your own ([`TraceSink`]); the events also go to
//!   the `tracing` ecosystem (target `locus`, level `DEBUG`) when a subscriber wants them.
//!
//! With nobody listening, tracing costs an atomic load per operation.
//!
//! ```no_run
//! use locus::{trace::ChromeTrace, Location, Memory};
//!
//! let trace = ChromeTrace::create("run.json")?;
//! let a = Memory::new(Location::Host, 1 << 20)?;
//! let at = *locus::available().last().unwrap();
//! let b = Memory::new(at, 1 << 20)?;
//! a.copy_to(0, &b, 0, 1 << 20)?;
//! trace.finish()?; // open run.json in https://ui.perfetto.dev
//! # Ok::<(), locus::Error>(())
//! ```

mod chrome;
mod scopes;

use std::sync::Mutex;

pub use crate::core::trace::{add_sink, epoch, SinkHandle, TraceEvent, TraceSink, Track};
pub use chrome::ChromeTrace;
pub use scopes::{pop_statistics, push_statistics, statistics, ScopeStatistics, StatisticsScope};

/// The trace `LOCUS_TRACE` asked for, open until the process ends.
static FROM_ENV: Mutex<Option<ChromeTrace>> = Mutex::new(None);

/// Starts the trace `LOCUS_TRACE` names, once per process (a warning when the file cannot
/// be made: the program runs on untraced). Its array is closed at the process's end.
pub(crate) fn start_from_env() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let Some(path) = crate::core::config::path("LOCUS_TRACE") else {
            return;
        };
        match ChromeTrace::create(&path) {
            Ok(trace) => {
                *FROM_ENV.lock().unwrap_or_else(|e| e.into_inner()) = Some(trace);
                crate::core::shutdown::after_idle_at_exit(finish_from_env);
            }
            Err(e) => crate::core::config::warn_once(&format!("LOCUS_TRACE: {e}")),
        }
    });
}

/// Sends the trace to a vendor profiler running this process as its ranges and marks
/// (`LOCUS_PROFILER_RANGES`: `auto`, the default, attaches NVTX when an NVTX tool such
/// as Nsight Systems set `NVTX_INJECTION64_PATH` and ROCTX when an AMD profiler runs the
/// process; `nvtx` or `roctx` asks for one; `off`). Once per process; a profiler that
/// cannot be attached is a warning.
pub(crate) fn attach_profilers() {
    static ATTACHED: std::sync::Once = std::sync::Once::new();
    ATTACHED.call_once(|| {
        let setting = crate::core::config::or_warn(crate::core::config::choice(
            "LOCUS_PROFILER_RANGES",
            &["auto", "off", "nvtx", "roctx"],
        ))
        .unwrap_or("auto");
        #[cfg(feature = "cuda")]
        if matches!(setting, "auto" | "nvtx") {
            match crate::backends::cuda::nvtx::attach() {
                Ok(Some(nvtx)) => keep(add_sink(std::sync::Arc::new(
                    crate::core::profiler_ranges::RangeSink::new(nvtx),
                ))),
                Ok(None) if setting == "nvtx" => crate::core::config::warn_once(
                    "LOCUS_PROFILER_RANGES=nvtx: no NVTX tool runs this process (NVTX_INJECTION64_PATH is unset): run it under Nsight Systems (`nsys profile --trace=nvtx,cuda`)",
                ),
                Ok(None) => {}
                Err(e) => crate::core::config::warn_once(&format!(
                    "the NVTX tool could not be attached: {e}; locus's ranges will not show in the profiler"
                )),
            }
        }
        #[cfg(feature = "hip")]
        if setting == "roctx" || (setting == "auto" && crate::backends::hip::roctx::profiled()) {
            match crate::backends::hip::roctx::attach() {
                Ok(roctx) => keep(add_sink(std::sync::Arc::new(
                    crate::core::profiler_ranges::RangeSink::new(roctx),
                ))),
                Err(e) => crate::core::config::warn_once(&format!(
                    "ROCTX could not be loaded ({e}); locus's ranges will not show in the profiler: install ROCm's roctracer or rocprofiler-sdk"
                )),
            }
        }
        let _ = setting;
    });
}

/// Keeps a sink for the whole run.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn keep(sink: SinkHandle) {
    std::mem::forget(sink);
}

/// Closes the trace `LOCUS_TRACE` started (at the process's end, after its work).
fn finish_from_env() {
    let trace = FROM_ENV.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(Err(e)) = trace.map(ChromeTrace::finish) {
        eprintln!("locus: warning: LOCUS_TRACE: {e}");
    }
}
