//! `locus.Memory.reachable_from(locations, nbytes)`: memory every listed location uses in
//! place, asked for by the locations rather than by a technology's memory kind.

use super::*;
use crate::memory::PyMemory;

#[pymethods]
impl PyMemory {
    /// `nbytes` that every location in `locations` uses in place, of the best kind they
    /// share (the owner's own memory, managed, USM shared, SVM, host-visible, USM host or
    /// pinned host memory); a `ValueError` names, for each kind tried, the location that
    /// does not reach it. `locus.reachable_kind(locations)` says which it would be.
    #[staticmethod]
    fn reachable_from(py: Python<'_>, locations: Vec<String>, nbytes: usize) -> PyResult<PyMemory> {
        guarded(|| {
            let at = locations
                .iter()
                .map(|l| parse_location(l))
                .collect::<PyResult<Vec<Location>>>()?;
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
        let at = locations
            .iter()
            .map(|l| parse_location(l))
            .collect::<PyResult<Vec<Location>>>()?;
        let reach = crate::detach(py, || locus::reachable_kind(&at)).map_err(py_err)?;
        let out = PyDict::new(py);
        out.set_item("location", reach.location.to_string())?;
        out.set_item("kind", reach.kind.name())?;
        out.set_item("reason", reach.reason)?;
        Ok(out)
    })
}
