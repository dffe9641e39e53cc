//! Placement from Python: `locus.Memory.reachable_from(locations, nbytes)`, memory every
//! listed location uses in place, asked for by the locations rather than by a
//! technology's memory kind; and `Memory.prefetch`, memory that migrates moved ahead of
//! its use.

use super::*;
use crate::memory::PyMemory;

/// Each location named in `locations`.
fn parse_all(locations: &[String]) -> PyResult<Vec<Location>> {
    locations.iter().map(|l| parse_location(l)).collect()
}

#[pymethods]
impl PyMemory {
    /// `nbytes` that every location in `locations` uses in place, of the best kind they
    /// share (the owner's own memory, managed, USM shared, SVM, host-visible, USM host or
    /// pinned host memory); a `ValueError` names, for each kind tried, the location that
    /// does not reach it. `locus.reachable_kind(locations)` says which it would be.
    #[staticmethod]
    fn reachable_from(py: Python<'_>, locations: Vec<String>, nbytes: usize) -> PyResult<PyMemory> {
        guarded(|| {
            let at = parse_all(&locations)?;
            let inner =
                crate::detach(py, || Memory::reachable_from(&at, nbytes)).map_err(py_err)?;
            Ok(PyMemory::wrap(Arc::new(inner)))
        })
    }
}

/// Where memory every one of `locations` uses in place would live and of what kind:
/// `{"location": ..., "kind": ..., "reason": ...}`; a `ValueError` when none does.
#[pyfunction]
pub fn reachable_kind<'py>(
    py: Python<'py>,
    locations: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    guarded(|| {
        let at = parse_all(&locations)?;
        let reach = crate::detach(py, || locus::reachable_kind(&at)).map_err(py_err)?;
        let out = PyDict::new(py);
        out.set_item("location", reach.location.to_string())?;
        out.set_item("kind", reach.kind.name())?;
        out.set_item("reason", reach.reason)?;
        Ok(out)
    })
}

#[pymethods]
impl PyMemory {
    /// Starts moving `nbytes` from `offset` (to the end when `None`) to `location` ahead
    /// of its use there (SYCL's `queue.prefetch` of USM shared memory) and returns at
    /// once: `(event, moved, why)`. Memory that does not migrate is left where it is,
    /// `moved` False and `why` saying so; the data is valid either way.
    #[pyo3(signature = (location, nbytes = None, offset = 0))]
    fn prefetch(
        &self,
        py: Python<'_>,
        location: &str,
        nbytes: Option<usize>,
        offset: usize,
    ) -> PyResult<(crate::events::PyEvent, bool, String)> {
        guarded(|| {
            let m = self.mem()?;
            let to = parse_location(location)?;
            let end = match nbytes {
                Some(n) => offset.checked_add(n).ok_or_else(|| {
                    PyValueError::new_err(format!("prefetch of {n} bytes at {offset}: too large"))
                })?,
                None => m.len().max(offset),
            };
            let outcome = crate::detach(py, || m.prefetch_to(to, offset..end)).map_err(py_err)?;
            Ok((
                crate::events::PyEvent {
                    inner: outcome.event,
                },
                outcome.moved,
                outcome.why,
            ))
        })
    }
}
