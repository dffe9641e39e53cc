//! `locus` for Python: buffers at any location by name, declared access that numpy and
//! every DLPack consumer use without copying, and adoption of foreign memory.
//!
//! The Python package (`python/locus/__init__.py`) re-exports this module.

#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

mod adopt;
mod buffer;
mod consumer_streams;
mod dlpack;
mod dtype;
mod events;
mod foreign;
mod handle;
mod kernels;
mod memory;
mod mr;
mod numpy_allocator;
mod queues;
mod reachable;
mod regions;
mod store;
mod trace;
mod usm;
mod view;
mod writers;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use pyo3::exceptions::{
    PyAttributeError, PyBufferError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use locus::{HostAccess, HostMapping, Location, Memory, Native};

use buffer::PyBuffer;
use dlpack::{DLDataType, DLDevice};
use dtype::DType;
use foreign::Foreign;
use handle::Handle;
use store::{Served, Store};
use view::{closed_handle, copy_view, exported_wgpu_view, remember_wgpu_export, View};

pyo3::create_exception!(
    _locus,
    LocusError,
    PyRuntimeError,
    "A runtime error from a backend or a missing location; the message names the location, the call and what to do."
);

/// A locus error as a Python exception: bad arguments are `ValueError`, the rest
/// `LocusError`.
fn py_err(e: locus::Error) -> PyErr {
    match e {
        locus::Error::Invalid(_)
        | locus::Error::UnknownLocation { .. }
        | locus::Error::OutOfRange { .. }
        | locus::Error::LengthMismatch { .. } => PyValueError::new_err(e.to_string()),
        locus::Error::OutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
        other => LocusError::new_err(other.to_string()),
    }
}

/// Runs the body of a Python entry point. locus does not panic on any input a caller can
/// pass; should a bug make it, the panic becomes a `LocusError` that says so here,
/// instead of crossing into Python as pyo3's `PanicException` (a `BaseException`, which
/// `except Exception` does not catch).
///
/// It also counts the threads inside locus's entry points, so that the interpreter's end
/// waits for them ([`_interpreter_ending`]); a thread other than the one ending the
/// interpreter that enters once it is ending parks instead (see [`detach`]).
fn guarded<R>(body: impl FnOnce() -> PyResult<R>) -> PyResult<R> {
    let _inside = Inside::enter();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        Err(LocusError::new_err(format!(
            "internal error in locus: {what} (a bug: please report it with the call that made it; the buffer involved may be stale)"
        )))
    })
}

fn parse_location(name: &str) -> PyResult<Location> {
    name.trim().parse::<Location>().map_err(py_err)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How data at `src` reaches code at `dst` (the transfer matrix's answer):
/// `{"kind": "in-place" | "direct" | "mapped" | "peer" | "staged", "reason": ...}`.
#[pyfunction]
fn route<'py>(py: Python<'py>, src: &str, dst: &str) -> PyResult<Bound<'py, PyDict>> {
    guarded(|| {
        let (s, d) = (parse_location(src)?, parse_location(dst)?);
        let r = locus::transfer::access_route(locus::registry(), s, d).map_err(py_err)?;
        let out = PyDict::new(py);
        out.set_item("kind", r.kind.to_string())?;
        out.set_item("reason", &*r.reason)?;
        Ok(out)
    })
}

/// Transfer counters as `{"direct": {"calls": 2, "bytes": 8192}, ...}` (kinds never
/// taken left out).
fn totals_dict<'py>(
    py: Python<'py>,
    totals: &locus::TransferTotals,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for kind in locus::RouteKind::ALL {
        if totals.calls_of(kind) > 0 {
            let d = PyDict::new(py);
            d.set_item("calls", totals.calls_of(kind))?;
            d.set_item("bytes", totals.bytes_of(kind))?;
            out.set_item(kind.to_string(), d)?;
        }
    }
    Ok(out)
}

/// Every copy the library made in this process, per route kind (`Buffer.transfers`'s
/// form); `str` of the same: `transfer_totals_text()`.
#[pyfunction]
fn transfer_totals(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    guarded(|| totals_dict(py, &locus::transfer::global_stats().totals()))
}

/// The process-wide counters in one line (`moved 12 B in 1 copy (direct 1 x 12 B)`).
#[pyfunction]
fn transfer_totals_text() -> String {
    locus::transfer::global_stats().totals().to_string()
}

/// The copy paths the backends registered, as `(src technology, dst technology, name)`
/// (the generic paths every pair has are not listed).
#[pyfunction]
fn registered_paths() -> Vec<(String, String, &'static str)> {
    locus::registry()
        .matrix()
        .registered()
        .map(|(s, d, name)| (s.to_string(), d.to_string(), name))
        .collect()
}

/// Which allocation `address` lies in (`locus::lookup`): a dict with `location`, `base`,
/// `nbytes`, `offset`, `kind`, `resource` (the resource it is on loan from, or None),
/// `registered_with` (the locations whose runtimes registered it in place) and
/// `known_to_locus`. Any address inside live memory locus made, adopted or registered
/// answers (host, OpenMP, CUDA, HIP, SYCL USM; OpenCL and WebGPU buffers have no
/// address), then any the drivers present allocated (CuPy's, PyTorch's, dpctl's:
/// `known_to_locus` False; `base`, `nbytes` and `offset` None where the driver gives no
/// range, as SYCL); another is a `ValueError` naming it.
#[pyfunction]
fn lookup(py: Python<'_>, address: u64) -> PyResult<Bound<'_, PyDict>> {
    guarded(|| {
        let info = crate::detach(py, || locus::lookup(address)).map_err(py_err)?;
        let out = PyDict::new(py);
        out.set_item("location", info.location.to_string())?;
        // A driver that gives no range (SYCL USM) leaves base, nbytes and offset unknown.
        let range_known = info.known_to_locus || info.len > 0;
        out.set_item("base", range_known.then_some(info.base))?;
        out.set_item("nbytes", range_known.then_some(info.len))?;
        out.set_item("offset", range_known.then_some(info.offset))?;
        out.set_item("kind", info.kind.name())?;
        out.set_item("resource", info.resource)?;
        let with: Vec<String> = info.registered_with.iter().map(|l| l.to_string()).collect();
        out.set_item("registered_with", with)?;
        out.set_item("known_to_locus", info.known_to_locus)?;
        Ok(out)
    })
}

/// The locations this machine has, host first (`["host", "openmp:0", "opencl:0", ...]`).
#[pyfunction]
fn available() -> Vec<String> {
    locus::available().iter().map(|l| l.to_string()).collect()
}

/// The locations on each physical device the runtimes named, the host's CPUs first:
/// `[("the host's CPUs", ["host", "openmp:0", ...]), ("PCI 0000:65:00.0", ["cuda:0",
/// "opencl:1", "webgpu:0"])]`. A location whose runtime names no hardware is in none.
#[pyfunction]
fn physical_devices() -> Vec<(String, Vec<String>)> {
    locus::registry()
        .physical_devices()
        .into_iter()
        .map(|(d, ls)| (d.to_string(), ls.iter().map(|l| l.to_string()).collect()))
        .collect()
}

/// A numpy memory handler (NEP 49) over `resource` for arrays of at least `min_bytes`
/// (`locus.numpy_allocator` uses it); `None`: a pool over the first CUDA or HIP
/// device's pinned host memory, else over host memory.
#[pyfunction]
#[pyo3(signature = (resource, min_bytes))]
fn _numpy_handler(
    py: Python<'_>,
    resource: Option<PyRef<'_, mr::PyResource>>,
    min_bytes: usize,
) -> PyResult<Py<PyAny>> {
    guarded(|| {
        let resource = match resource {
            Some(r) => Arc::clone(&r.inner),
            None => crate::detach(py, default_numpy_resource).map_err(py_err)?,
        };
        numpy_allocator::make_handler(py, resource, min_bytes)
    })
}

/// numpy's arrays by default: a pool over the first GPU's pinned host memory (uploads
/// by DMA), else over the host's memory; made once per process.
fn default_numpy_resource() -> locus::Result<Arc<dyn locus::resource::MemoryResource>> {
    static DEFAULT: std::sync::OnceLock<Arc<dyn locus::resource::MemoryResource>> =
        std::sync::OnceLock::new();
    if let Some(r) = DEFAULT.get() {
        return Ok(Arc::clone(r));
    }
    let gpu = locus::available().into_iter().find(|l| {
        matches!(
            l.technology(),
            locus::Technology::Cuda | locus::Technology::Hip
        )
    });
    let upstream = match gpu {
        Some(at) => locus::resource::pinned_host(at)?,
        None => locus::resource::upstream(Location::Host)?,
    };
    let pool: Arc<dyn locus::resource::MemoryResource> =
        Arc::new(locus::resource::Pool::new(upstream, 64 << 20, usize::MAX));
    Ok(Arc::clone(DEFAULT.get_or_init(|| pool)))
}

/// Makes `handler` numpy's memory handler in the calling thread's context (`None`:
/// numpy's default) and returns the one it replaces.
#[pyfunction]
#[pyo3(signature = (handler))]
fn _numpy_set_handler(py: Python<'_>, handler: Option<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
    guarded(|| numpy_allocator::set_handler(py, handler.as_ref()))
}

/// Per technology: its locations here, or why it has none.
/// `{"opencl": {"locations": ["opencl:0"], "missing": None, "skipped": []}, ...}`.
#[pyfunction]
fn info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    guarded(|| {
        let registry = locus::registry();
        let out = PyDict::new(py);
        for t in locus::Technology::ALL {
            let entry = PyDict::new(py);
            let locations: Vec<String> = registry
                .locations()
                .into_iter()
                .filter(|l| l.technology() == t)
                .map(|l| l.to_string())
                .collect();
            entry.set_item("locations", locations)?;
            entry.set_item("missing", registry.missing().get(&t).cloned())?;
            entry.set_item(
                "skipped",
                registry.skipped().get(&t).cloned().unwrap_or_default(),
            )?;
            out.set_item(t.to_string(), entry)?;
        }
        Ok(out)
    })
}

/// Panics inside the entry-point guard (for the test that checks a panic reaches Python
/// as a `LocusError`, not as pyo3's `PanicException`). Not part of the API.
#[pyfunction]
fn _panic_for_tests(message: &str) -> PyResult<()> {
    guarded(|| panic!("{message}"))
}

/// The dtypes locus buffers hold.
#[pyfunction]
fn dtypes() -> Vec<&'static str> {
    dtype::DTYPES.iter().map(|d| d.name).collect()
}

/// The thread ending the interpreter, set by a Python `atexit` callback before
/// [`ENDING`].
static ENDER: std::sync::OnceLock<std::thread::ThreadId> = std::sync::OnceLock::new();

/// True once the interpreter has started ending (Python's `atexit`).
static ENDING: AtomicBool = AtomicBool::new(false);

/// Entry points running now, on every thread (a call inside another counts twice).
static IN_CALLS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Entry points running now on this thread.
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One thread inside one entry point, counted until dropped.
struct Inside;

impl Inside {
    /// Counts this thread in. Counted before any check of the interpreter's end: either
    /// the ending thread sees this thread inside, or this thread sees the end.
    fn count_in() -> Inside {
        IN_CALLS.fetch_add(1, Ordering::SeqCst);
        DEPTH.with(|d| d.set(d.get() + 1));
        Inside
    }

    /// Counts this thread in; parks it for good instead when the interpreter is ending
    /// on another thread (the thread holds the GIL here, as every entry point does).
    fn enter() -> Inside {
        let inside = Inside::count_in();
        if ending_elsewhere() {
            park_for_good(true);
        }
        inside
    }

    /// Counts in a thread of locus's own that is about to take the GIL; `None`, counted
    /// out again, when the interpreter is ending on another thread.
    fn enter_detached() -> Option<Inside> {
        let inside = Inside::count_in();
        (!ending_elsewhere()).then_some(inside)
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        IN_CALLS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Parks this thread until the process ends, counted out of every entry point it is in
/// and, when `attached`, after letting go of the GIL: the thread never runs Python code
/// or takes the GIL again, so CPython's end cannot unwind it through Rust frames.
fn park_for_good(attached: bool) -> ! {
    let depth = DEPTH.with(|d| d.replace(0));
    IN_CALLS.fetch_sub(depth, Ordering::SeqCst);
    if attached {
        // SAFETY: called from an entry point, which runs with the GIL held by this
        // thread; the thread state saved here is never restored (the thread parks for
        // good), as CPython allows for a thread that will not run Python code again.
        unsafe { pyo3::ffi::PyEval_SaveThread() };
    }
    loop {
        std::thread::park();
    }
}

/// True on a thread other than the one ending the interpreter, once it is ending.
fn ending_elsewhere() -> bool {
    ENDING.load(Ordering::SeqCst) && ENDER.get() != Some(&std::thread::current().id())
}

/// Runs at the start of the interpreter's end (Python's `atexit`, while daemon threads
/// still run and may still take the GIL): from now on a thread that enters locus, or
/// finishes a call without the GIL, parks instead; the threads inside locus's entry
/// points finish their calls before CPython starts ending (after that CPython ends a
/// thread that takes the GIL by unwinding it, which aborts the process when the unwind
/// meets Rust frames, pyo3's as well as locus's). Waits for them without the GIL, at
/// most five seconds.
#[pyfunction]
fn _interpreter_ending(py: Python<'_>) {
    let _ = ENDER.set(std::thread::current().id());
    ENDING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let start = std::time::Instant::now();
        while IN_CALLS.load(Ordering::SeqCst) > 0
            && start.elapsed() < std::time::Duration::from_secs(5)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    });
}

/// `py.detach(f)`: runs `f` without the GIL. A thread other than the one ending the
/// interpreter that finishes `f` once the interpreter is ending (a daemon thread in
/// the middle of a locus call) never takes the GIL back: CPython would end such a
/// thread with a forced unwind through Rust frames, which aborts the process ("FATAL:
/// exception not rethrown"). It parks instead, and ends with the process.
pub(crate) fn detach<T, F>(py: Python<'_>, f: F) -> T
where
    F: FnOnce() -> T + Send,
    T: Send,
{
    py.detach(move || {
        let out = f();
        if ending_elsewhere() {
            park_for_good(false);
        }
        out
    })
}

/// `Python::attach(f)` for a thread of locus's own (an asynchronous call's Python host
/// function, a resource's failure callback, a Python error turned into text there):
/// counted as inside locus, so the interpreter's end waits for it, and `None` without
/// touching Python once the interpreter is ending on another thread (CPython would end
/// such a thread with a forced unwind through Rust frames, which aborts the process).
pub(crate) fn attach<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    let _inside = Inside::enter_detached()?;
    Some(Python::attach(f))
}

/// A Python error as text, on any thread: `e.to_string()` takes the GIL, which a thread
/// of locus's own may no longer do once the interpreter is ending.
pub(crate) fn error_text(e: &PyErr) -> String {
    attach(|_| e.to_string()).unwrap_or_else(|| "a Python error (the interpreter is ending)".into())
}

/// The DLPack `(device_type, device_id)` of memory at `location`.
#[pyfunction]
fn dlpack_device(location: &str) -> PyResult<(i32, i32)> {
    guarded(|| {
        let d = dlpack::device_of_location(parse_location(location)?, None);
        Ok((d.device_type, d.device_id))
    })
}

/// The compiled part of the `locus` package.
#[pymodule]
fn _locus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBuffer>()?;
    m.add_class::<Handle>()?;
    m.add_class::<handle::HostView>()?;
    m.add_class::<memory::PyMemory>()?;
    m.add_class::<memory::PyMirror>()?;
    m.add_class::<regions::PyRegion>()?;
    m.add_class::<buffer::PyRegionIndex>()?;
    m.add_class::<buffer::PyView>()?;
    m.add_class::<events::PyEvent>()?;
    m.add_class::<events::PyTrigger>()?;
    m.add_class::<queues::PyQueue>()?;
    m.add_class::<kernels::PyKernel>()?;
    m.add_class::<kernels::PyCodelet>()?;
    m.add_class::<kernels::PyPendingCall>()?;
    m.add_class::<trace::PyTrace>()?;
    m.add_function(wrap_pyfunction!(trace::_push_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(trace::_pop_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(trace::_get_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(available, m)?)?;
    m.add_function(wrap_pyfunction!(route, m)?)?;
    m.add_function(wrap_pyfunction!(lookup, m)?)?;
    m.add_function(wrap_pyfunction!(reachable::reachable_kind, m)?)?;
    m.add_function(wrap_pyfunction!(adopt::adopt_context, m)?)?;
    m.add_function(wrap_pyfunction!(memory::copy_batch, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(physical_devices, m)?)?;
    m.add_function(wrap_pyfunction!(_numpy_handler, m)?)?;
    m.add_function(wrap_pyfunction!(_numpy_set_handler, m)?)?;
    m.add_function(wrap_pyfunction!(dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack_device, m)?)?;
    m.add_function(wrap_pyfunction!(transfer_totals, m)?)?;
    m.add_function(wrap_pyfunction!(transfer_totals_text, m)?)?;
    m.add_function(wrap_pyfunction!(registered_paths, m)?)?;
    m.add_function(wrap_pyfunction!(mr::reinitialize::use_pool, m)?)?;
    m.add_function(wrap_pyfunction!(mr::reinitialize::use_upstream, m)?)?;
    m.add_function(wrap_pyfunction!(mr::reinitialize::memory_statistics, m)?)?;
    mr::register(m)?;
    let ending = wrap_pyfunction!(_interpreter_ending, m)?;
    m.py()
        .import("atexit")?
        .call_method1("register", (ending,))?;
    m.add("LocusError", m.py().get_type::<LocusError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
