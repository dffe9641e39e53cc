//! The trace from C: a Chrome trace file (`locus_trace_start` / `locus_trace_finish`,
//! or `LOCUS_TRACE=run.json` for a whole run), and callbacks for profilers and tools in
//! the style of Kokkos-tools (`locus_trace_set_callbacks`): the begin and end of every
//! copy, every allocation and free, every kernel launch.

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};

use locus_rs::trace::{self as lt, ChromeTrace, SinkHandle, TraceEvent, TraceSink};

use crate::text::text_arg;
use crate::{call, Fail, LocusStatus};

/// A copy began: its span (the same in its `end_copy`), source and destination
/// locations, bytes and route kind (`"direct"`, `"peer"`, `"mapped"`, `"staged"`).
pub type LocusTraceBeginCopy = Option<
    unsafe extern "C" fn(
        data: *mut c_void,
        span: u64,
        src: *const c_char,
        dst: *const c_char,
        bytes: usize,
        route: *const c_char,
    ),
>;
/// A copy ended: its span, whether it succeeded, and its seconds.
pub type LocusTraceEndCopy =
    Option<unsafe extern "C" fn(data: *mut c_void, span: u64, ok: bool, seconds: f64)>;
/// Memory was allocated (or adopted, or handed out by a resource: `source` says which):
/// its id (the same in its `deallocate`), location and bytes.
pub type LocusTraceAllocate = Option<
    unsafe extern "C" fn(
        data: *mut c_void,
        id: u64,
        location: *const c_char,
        bytes: usize,
        source: *const c_char,
    ),
>;
/// Memory was freed: its id, location and bytes.
pub type LocusTraceDeallocate =
    Option<unsafe extern "C" fn(data: *mut c_void, id: u64, location: *const c_char, bytes: usize)>;
/// A kernel ran: where, its name, and its seconds (until the launch returned).
pub type LocusTraceLaunch = Option<
    unsafe extern "C" fn(
        data: *mut c_void,
        location: *const c_char,
        kernel: *const c_char,
        seconds: f64,
    ),
>;

/// What `locus_trace_set_callbacks` calls; a NULL member is not called. Every callback
/// runs on the thread that did the work (a queued copy's `end_copy` on a locus thread),
/// must not unwind, and may call locus (work it asks for is not traced).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LocusTraceCallbacks {
    /// Passed to every callback.
    pub data: *mut c_void,
    /// Before a copy (a queued one: when it is submitted).
    pub begin_copy: LocusTraceBeginCopy,
    /// After it (a queued one: when locus sees it done).
    pub end_copy: LocusTraceEndCopy,
    /// After an allocation.
    pub allocate: LocusTraceAllocate,
    /// Before a free.
    pub deallocate: LocusTraceDeallocate,
    /// After a launch returned.
    pub launch: LocusTraceLaunch,
}

struct Callbacks(LocusTraceCallbacks);

// SAFETY: the callbacks and `data` are the caller's; `locus_trace_set_callbacks`'s
// contract makes them callable from any thread.
unsafe impl Send for Callbacks {}
// SAFETY: as above: nothing here is mutated after it is made.
unsafe impl Sync for Callbacks {}

fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

impl TraceSink for Callbacks {
    fn event(&self, event: &TraceEvent<'_>) {
        let c = &self.0;
        match *event {
            TraceEvent::CopyBegan {
                span,
                src,
                dst,
                bytes,
                route,
                ..
            } => {
                if let Some(f) = c.begin_copy {
                    let (s, d, r) = (
                        c_text(&src.to_string()),
                        c_text(&dst.to_string()),
                        c_text(route.name()),
                    );
                    // SAFETY: the caller's contract (see `locus_trace_set_callbacks`);
                    // the strings live until the call returns.
                    unsafe { f(c.data, span, s.as_ptr(), d.as_ptr(), bytes, r.as_ptr()) };
                }
            }
            TraceEvent::Copied {
                span,
                ok,
                start,
                end,
                ..
            } => {
                if let Some(f) = c.end_copy {
                    let seconds = end.saturating_duration_since(start).as_secs_f64();
                    // SAFETY: as above.
                    unsafe { f(c.data, span, ok, seconds) };
                }
            }
            TraceEvent::Allocated {
                id,
                location,
                bytes,
                source,
                ..
            } => {
                if let Some(f) = c.allocate {
                    let (l, s) = (c_text(&location.to_string()), c_text(source));
                    // SAFETY: as above.
                    unsafe { f(c.data, id, l.as_ptr(), bytes, s.as_ptr()) };
                }
            }
            TraceEvent::Freed {
                id,
                location,
                bytes,
                ..
            } => {
                if let Some(f) = c.deallocate {
                    let l = c_text(&location.to_string());
                    // SAFETY: as above.
                    unsafe { f(c.data, id, l.as_ptr(), bytes) };
                }
            }
            TraceEvent::Launched {
                location,
                kernel,
                start,
                end,
            } => {
                if let Some(f) = c.launch {
                    let (l, k) = (c_text(&location.to_string()), c_text(kernel));
                    let seconds = end.saturating_duration_since(start).as_secs_f64();
                    // SAFETY: as above.
                    unsafe { f(c.data, l.as_ptr(), k.as_ptr(), seconds) };
                }
            }
            _ => {}
        }
    }
}

static CALLBACKS: Mutex<Option<SinkHandle>> = Mutex::new(None);
static FILE: Mutex<Option<ChromeTrace>> = Mutex::new(None);

/// Calls `callbacks` for every copy, allocation, free and launch from now on, replacing
/// the callbacks set before; NULL removes them. The struct is copied: it need not
/// outlive the call. A call already under way on another thread may still reach the
/// callbacks replaced.
///
/// # Safety
/// `callbacks` is NULL or points to a `LocusTraceCallbacks` whose functions are safe to
/// call from any thread with its `data`, never unwind, and stay loaded until they are
/// replaced or removed.
#[no_mangle]
pub unsafe extern "C" fn locus_trace_set_callbacks(
    callbacks: *const LocusTraceCallbacks,
) -> LocusStatus {
    call("locus_trace_set_callbacks", || {
        // SAFETY: NULL or a valid struct (the contract above), read once here.
        let given = unsafe { callbacks.as_ref() }.copied();
        let sink = given.map(|c| lt::add_sink(Arc::new(Callbacks(c))));
        let old = std::mem::replace(
            &mut *CALLBACKS.lock().unwrap_or_else(|e| e.into_inner()),
            sink,
        );
        drop(old);
        Ok(())
    })
}

/// Starts writing every allocation, free, copy (pair, route, bytes), launch and wait to
/// a new file at `path` in the Chrome trace format (open it in https://ui.perfetto.dev,
/// or `locus trace summary path`), ending a trace this call started before.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn locus_trace_start(path: *const c_char) -> LocusStatus {
    call("locus_trace_start", || {
        let path = text_arg(path, "path")?;
        let trace = ChromeTrace::create(path)?;
        let old = FILE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(trace);
        if let Some(old) = old {
            old.finish()?;
        }
        Ok(())
    })
}

/// Ends the trace `locus_trace_start` started and completes its file; nothing when none
/// was started.
#[no_mangle]
pub extern "C" fn locus_trace_finish() -> LocusStatus {
    call("locus_trace_finish", || {
        let trace = FILE.lock().unwrap_or_else(|e| e.into_inner()).take();
        match trace {
            Some(t) => t.finish().map_err(Fail::from),
            None => Ok(()),
        }
    })
}
