//! `locus.trace(path)` and the scopes behind `locus.statistics` (RMM's Python
//! statistics API): the trace of what locus allocated, copied, launched and waited for,
//! written to a Chrome trace file, and counters of it in a stack of scopes.

use locus::trace::{ChromeTrace, ScopeStatistics};
use locus::RouteKind;

use super::*;

/// A trace file being written: `with locus.trace("run.json"):` (open the file in
/// https://ui.perfetto.dev, or `locus trace summary run.json`).
#[pyclass(name = "Trace", module = "locus")]
pub struct PyTrace {
    trace: Mutex<Option<ChromeTrace>>,
    path: String,
}

#[pymethods]
impl PyTrace {
    /// Starts writing every event from now on to a new file at `path`.
    #[new]
    fn new(path: std::path::PathBuf) -> PyResult<Self> {
        guarded(|| {
            let trace = ChromeTrace::create(&path).map_err(py_err)?;
            Ok(PyTrace {
                trace: Mutex::new(Some(trace)),
                path: path.display().to_string(),
            })
        })
    }

    /// The file's path.
    #[getter]
    fn path(&self) -> String {
        self.path.clone()
    }

    /// Stops tracing and closes the file (the file is complete after this).
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        guarded(|| {
            let trace = lock(&self.trace).take();
            match trace {
                Some(t) => crate::detach(py, || t.finish()).map_err(py_err),
                None => Ok(()),
            }
        })
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.finish(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let open = lock(&self.trace).is_some();
        format!(
            "locus.Trace({:?}, {})",
            self.path,
            if open { "writing" } else { "finished" }
        )
    }
}

/// A scope's counts as a dict: RMM's six statistics, then the copies per route kind.
fn scope_dict<'py>(py: Python<'py>, s: &ScopeStatistics) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("current_bytes", s.current_bytes)?;
    out.set_item("current_count", s.current_count)?;
    out.set_item("peak_bytes", s.peak_bytes)?;
    out.set_item("peak_count", s.peak_count)?;
    out.set_item("total_bytes", s.total_bytes)?;
    out.set_item("total_count", s.total_count)?;
    let (copies, bytes, seconds) = (PyDict::new(py), PyDict::new(py), PyDict::new(py));
    for kind in RouteKind::ALL {
        if s.copies_of(kind) > 0 {
            copies.set_item(kind.name(), s.copies_of(kind))?;
            bytes.set_item(kind.name(), s.bytes_of(kind))?;
            seconds.set_item(kind.name(), s.copy_seconds[kind as usize])?;
        }
    }
    out.set_item("copies", copies)?;
    out.set_item("copied_bytes", bytes)?;
    out.set_item("copy_seconds", seconds)?;
    Ok(out)
}

/// Pushes a scope; the counts of the one under it, or None when none was open.
#[pyfunction]
pub fn _push_statistics(py: Python<'_>) -> PyResult<Option<Bound<'_, PyDict>>> {
    locus::trace::push_statistics()
        .map(|s| scope_dict(py, &s))
        .transpose()
}

/// Pops the top scope (added to the one under it); its counts, or None when none is open.
#[pyfunction]
pub fn _pop_statistics(py: Python<'_>) -> PyResult<Option<Bound<'_, PyDict>>> {
    locus::trace::pop_statistics()
        .map(|s| scope_dict(py, &s))
        .transpose()
}

/// The top scope's counts so far, or None when none is open.
#[pyfunction]
pub fn _get_statistics(py: Python<'_>) -> PyResult<Option<Bound<'_, PyDict>>> {
    locus::trace::statistics()
        .map(|s| scope_dict(py, &s))
        .transpose()
}
