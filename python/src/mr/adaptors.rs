//! RMM's resource adaptors in Python: `StatisticsResourceAdaptor`,
//! `LimitingResourceAdaptor`, `TrackingResourceAdaptor`, `LoggingResourceAdaptor` and
//! `FailureCallbackResourceAdaptor`, each over an upstream resource it keeps alive.

use super::*;

/// Counts what passes through (RMM's `StatisticsResourceAdaptor`).
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "StatisticsResourceAdaptor")]
pub struct PyStatistics {
    stats: Arc<Statistics>,
}

#[pymethods]
impl PyStatistics {
    #[new]
    fn new(upstream_mr: Py<PyResource>) -> PyClassInitializer<PyStatistics> {
        let stats = Arc::new(Statistics::new(Arc::clone(&upstream_mr.get().inner)));
        let inner: Arc<dyn MemoryResource> = stats.clone();
        PyResource::init(inner, Some(upstream_mr), PyStatistics { stats })
    }

    /// `{"current_bytes", "current_count", "peak_bytes", "peak_count", "total_bytes",
    /// "total_count"}`, as RMM's `allocation_counts`.
    #[getter]
    fn allocation_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.stats.totals();
        let out = PyDict::new(py);
        out.set_item("current_bytes", t.current_bytes)?;
        out.set_item("current_count", t.current_count)?;
        out.set_item("peak_bytes", t.peak_bytes)?;
        out.set_item("peak_count", t.peak_count)?;
        out.set_item("total_bytes", t.total_bytes)?;
        out.set_item("total_count", t.total_count)?;
        Ok(out)
    }
}

/// Refuses allocations past `allocation_limit` bytes in use (RMM's
/// `LimitingResourceAdaptor`): `MemoryError`, as out of memory.
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "LimitingResourceAdaptor")]
pub struct PyLimiting {
    limiting: Arc<Limiting>,
    limit: usize,
}

#[pymethods]
impl PyLimiting {
    #[new]
    fn new(
        upstream_mr: Py<PyResource>,
        allocation_limit: &Bound<'_, PyAny>,
    ) -> PyResult<PyClassInitializer<PyLimiting>> {
        let limit = parse_bytes(allocation_limit)?;
        let limiting = Arc::new(Limiting::new(Arc::clone(&upstream_mr.get().inner), limit));
        let inner: Arc<dyn MemoryResource> = limiting.clone();
        Ok(PyResource::init(
            inner,
            Some(upstream_mr),
            PyLimiting { limiting, limit },
        ))
    }

    /// Bytes in use through it.
    fn get_allocated_bytes(&self) -> usize {
        self.limiting.used()
    }

    /// The limit in bytes.
    fn get_allocation_limit(&self) -> usize {
        self.limit
    }
}

/// Keeps every live allocation (RMM's `TrackingResourceAdaptor`): what is outstanding,
/// with the thread that made it.
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "TrackingResourceAdaptor")]
pub struct PyTracking {
    tracking: Arc<Tracking>,
}

#[pymethods]
impl PyTracking {
    #[new]
    #[pyo3(signature = (upstream_mr, capture_stacks = false))]
    fn new(
        upstream_mr: Py<PyResource>,
        capture_stacks: bool,
    ) -> PyResult<PyClassInitializer<PyTracking>> {
        if capture_stacks {
            return Err(PyValueError::new_err(
                "capture_stacks is not supported: locus tracks the size and the thread of each allocation",
            ));
        }
        let tracking = Arc::new(Tracking::with_threads(Arc::clone(&upstream_mr.get().inner)));
        let inner: Arc<dyn MemoryResource> = tracking.clone();
        Ok(PyResource::init(
            inner,
            Some(upstream_mr),
            PyTracking { tracking },
        ))
    }

    /// Bytes outstanding.
    fn get_allocated_bytes(&self) -> usize {
        self.tracking.leaks().iter().map(|(bytes, _)| bytes).sum()
    }

    /// The outstanding allocations, one line each (size and thread).
    fn get_outstanding_allocations_str(&self) -> String {
        self.tracking
            .leaks()
            .iter()
            .map(|(bytes, thread)| format!("{bytes} bytes, allocated by {thread}\n"))
            .collect()
    }
}

/// Logs every allocation and deallocation to a CSV file (RMM's
/// `LoggingResourceAdaptor`, with RMM's columns; `locus replay` replays it). Without
/// `log_file_name`, the file `LOCUS_LOG_FILE` names (RMM's `RMM_LOG_FILE`).
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "LoggingResourceAdaptor")]
pub struct PyLogging {
    file: String,
}

#[pymethods]
impl PyLogging {
    #[new]
    #[pyo3(signature = (upstream_mr, log_file_name = None))]
    fn new(
        upstream_mr: Py<PyResource>,
        log_file_name: Option<String>,
    ) -> PyResult<PyClassInitializer<PyLogging>> {
        guarded(|| {
            let upstream = Arc::clone(&upstream_mr.get().inner);
            let file = match log_file_name {
                Some(name) => name,
                None => resource::log_file_from_env()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            };
            let logging = if file.is_empty() {
                Logging::from_env(upstream)
            } else {
                Logging::to_file(upstream, &file)
            }
            .map_err(py_err)?;
            Ok(PyResource::init(
                Arc::new(logging),
                Some(upstream_mr),
                PyLogging { file },
            ))
        })
    }

    /// The log's path.
    fn get_file_name(&self) -> String {
        self.file.clone()
    }

    /// Writes what is buffered (every row is written as it happens: nothing is).
    fn flush(&self) {}
}

/// Retries per allocation a failure callback gets unless told otherwise.
const DEFAULT_MAX_RETRIES: usize = 100;

/// Calls `callback(nbytes)` when an allocation fails (RMM's
/// `FailureCallbackResourceAdaptor`): `True` retries, `False` lets the error through.
/// At most `max_retries` retries per allocation (RMM retries for as long as the callback
/// says so: a callback that answers `True` without freeing anything would spin forever).
#[pyclass(extends = PyResource, frozen, module = "locus.mr", name = "FailureCallbackResourceAdaptor")]
pub struct PyFailureCallback;

#[pymethods]
impl PyFailureCallback {
    #[new]
    #[pyo3(signature = (upstream_mr, callback, max_retries = DEFAULT_MAX_RETRIES))]
    fn new(
        upstream_mr: Py<PyResource>,
        callback: Py<PyAny>,
        max_retries: usize,
    ) -> PyClassInitializer<PyFailureCallback> {
        let upstream = Arc::clone(&upstream_mr.get().inner);
        let inner = FailureCallback::new(upstream, max_retries, move |bytes| {
            // No retry once the interpreter is ending on another thread.
            crate::attach(|py| {
                callback
                    .call1(py, (bytes,))
                    .and_then(|r| r.is_truthy(py))
                    .unwrap_or_else(|e| {
                        // An exception in the callback ends the retries; it is shown.
                        e.print(py);
                        false
                    })
            })
            .unwrap_or(false)
        });
        PyResource::init(Arc::new(inner), Some(upstream_mr), PyFailureCallback)
    }
}
