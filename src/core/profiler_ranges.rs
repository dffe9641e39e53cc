//! The trace as a vendor profiler's ranges: each copy a range from its begin to its end
//! (NVTX for Nsight Systems, ROCTX for rocprof), each allocation and free a mark, so that
//! locus's work shows on the profiler's timeline beside the kernels and driver calls.
//! A backend implements [`ProfilerRanges`] over its vendor's library; [`RangeSink`]
//! turns the trace into its calls.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Mutex;

use super::trace::{TraceEvent, TraceSink};

/// A profiler's range and mark calls (process-wide ranges: a copy may end on another
/// thread than the one it began on).
pub trait ProfilerRanges: Send + Sync {
    /// Opens a range named `name`; the id closes it.
    fn start(&self, name: &CString) -> u64;
    /// Closes the range `id`.
    fn end(&self, id: u64);
    /// Marks a point named `name`.
    fn mark(&self, name: &CString);
}

/// A trace sink that opens a profiler range per copy and marks allocations and frees.
pub struct RangeSink<P> {
    profiler: P,
    /// Open ranges by copy span.
    open: Mutex<HashMap<u64, u64>>,
}

impl<P: ProfilerRanges> RangeSink<P> {
    /// The sink over `profiler`.
    pub fn new(profiler: P) -> Self {
        RangeSink {
            profiler,
            open: Mutex::new(HashMap::new()),
        }
    }
}

fn name(text: String) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

impl<P: ProfilerRanges> TraceSink for RangeSink<P> {
    fn event(&self, event: &TraceEvent<'_>) {
        match *event {
            TraceEvent::CopyBegan {
                span,
                src,
                dst,
                bytes,
                route,
                ..
            } => {
                let id = self.profiler.start(&name(format!(
                    "locus copy {src} -> {dst} ({bytes} B, {})",
                    route.name()
                )));
                self.open
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(span, id);
            }
            TraceEvent::Copied { span, .. } => {
                let id = self
                    .open
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&span);
                if let Some(id) = id {
                    self.profiler.end(id);
                }
            }
            TraceEvent::Allocated {
                location,
                bytes,
                source,
                ..
            } => self.profiler.mark(&name(format!(
                "locus allocate {bytes} B at {location} ({source})"
            ))),
            TraceEvent::Freed {
                location, bytes, ..
            } => self
                .profiler
                .mark(&name(format!("locus free {bytes} B at {location}"))),
            _ => {}
        }
    }
}
