//! `locus.Region` and `Memory.copy_region_to` / `copy_region_from`: a 2-D or 3-D
//! rectangle of bytes, made from numpy's shape and strides or from the runtimes' own
//! origin, extent and pitches, copied between any two memories in one call.

use super::*;
use crate::events::{events_of, PyEvent};
use crate::memory::PyMemory;
use crate::queues::PyQueue;

/// A 1- to 3-D rectangle of bytes in one memory (`locus::Region`).
#[pyclass(frozen, eq, module = "locus", name = "Region")]
#[derive(PartialEq)]
pub struct PyRegion(pub locus::Region);

#[pymethods]
impl PyRegion {
    /// The region a strided view describes, as numpy gives one: `shape` (1 to 3
    /// dimensions) in items of `itemsize` bytes, `strides` in bytes (None: C-contiguous),
    /// the first item at byte `offset`. `Region((4096,), (32768,), offset=24,
    /// itemsize=8)` is the column `grid[:, 3]` of a 4096 x 4096 float64 array.
    #[new]
    #[pyo3(signature = (shape, strides = None, offset = 0, itemsize = 1))]
    fn new(
        shape: Vec<usize>,
        strides: Option<Vec<isize>>,
        offset: usize,
        itemsize: usize,
    ) -> PyResult<PyRegion> {
        locus::Region::from_strides(offset, &shape, strides.as_deref(), itemsize)
            .map(PyRegion)
            .map_err(py_err)
    }

    /// The region of a numpy view of a larger array: `view` and `base` are numpy arrays
    /// (or anything with `__array_interface__`), `view` inside `base`'s bytes.
    #[staticmethod]
    fn of(view: &Bound<'_, PyAny>, base: &Bound<'_, PyAny>) -> PyResult<PyRegion> {
        let address = |a: &Bound<'_, PyAny>| -> PyResult<usize> {
            let data = a.getattr("__array_interface__")?.get_item("data")?;
            data.get_item(0)?.extract()
        };
        let (at, from) = (address(view)?, address(base)?);
        let offset = at.checked_sub(from).ok_or_else(|| {
            PyValueError::new_err("Region.of: the view starts before its base array")
        })?;
        let shape: Vec<usize> = view.getattr("shape")?.extract()?;
        let strides: Vec<isize> = view.getattr("strides")?.extract()?;
        let itemsize: usize = view.getattr("itemsize")?.extract()?;
        PyRegion::new(shape, Some(strides), offset, itemsize)
    }

    /// A region in the runtimes' own terms: `origin` = (x in bytes, row, plane), `extent`
    /// = (width in bytes, rows, planes), pitches in bytes (`slice_pitch` None: rows
    /// times `row_pitch`).
    #[staticmethod]
    #[pyo3(signature = (origin, extent, row_pitch, slice_pitch = None))]
    fn rect(
        origin: (usize, usize, usize),
        extent: (usize, usize, usize),
        row_pitch: usize,
        slice_pitch: Option<usize>,
    ) -> PyRegion {
        PyRegion(locus::Region {
            origin: [origin.0, origin.1, origin.2],
            extent: [extent.0, extent.1, extent.2],
            row_pitch,
            slice_pitch: slice_pitch.unwrap_or(row_pitch.saturating_mul(extent.1)),
        })
    }

    /// (x in bytes, row, plane).
    #[getter]
    fn origin(&self) -> (usize, usize, usize) {
        let [x, y, z] = self.0.origin;
        (x, y, z)
    }

    /// (width in bytes, rows, planes).
    #[getter]
    fn extent(&self) -> (usize, usize, usize) {
        let [w, h, d] = self.0.extent;
        (w, h, d)
    }

    /// Bytes from one row to the next.
    #[getter]
    fn row_pitch(&self) -> usize {
        self.0.row_pitch
    }

    /// Bytes from one plane to the next.
    #[getter]
    fn slice_pitch(&self) -> usize {
        self.0.slice_pitch
    }

    /// The bytes it holds.
    #[getter]
    fn nbytes(&self) -> usize {
        self.0.bytes().unwrap_or(usize::MAX)
    }

    /// The same extent packed tight from offset 0: a contiguous block's layout.
    fn packed(&self) -> PyRegion {
        PyRegion(self.0.packed())
    }

    fn __repr__(&self) -> String {
        format!("Region({})", self.0)
    }
}

fn region_via(name: &str) -> PyResult<locus::RegionVia> {
    locus::RegionRouteKind::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .map(locus::RegionVia::Kind)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "via: no region route '{name}' (the routes are {})",
                locus::RegionRouteKind::ALL.map(|k| k.name()).join(", ")
            ))
        })
}

#[pymethods]
impl PyMemory {
    /// Copies `region` of this memory to `dst_region` of `dst` (None: `region.packed()`,
    /// a contiguous block at the start of `dst`) on the planner's route, or the route
    /// `via` names (`"rect"`, `"packed"`, `"runs"`, `"contiguous"`); returns the route.
    #[pyo3(signature = (dst, region, dst_region = None, via = None))]
    fn copy_region_to(
        &self,
        py: Python<'_>,
        dst: &PyMemory,
        region: &PyRegion,
        dst_region: Option<&PyRegion>,
        via: Option<&str>,
    ) -> PyResult<String> {
        guarded(|| {
            let (src, to) = (self.mem()?, dst.mem()?);
            let via = via.map(region_via).transpose()?.unwrap_or_default();
            let (sr, dr) = (region.0, dst_region.map_or(region.0.packed(), |r| r.0));
            crate::detach(py, || src.copy_region_to_via(&sr, to, &dr, via))
                .map(|r| r.to_string())
                .map_err(py_err)
        })
    }

    /// Starts `copy_region_to` and returns its `Event` at once: after the events in
    /// `after`, and after everything submitted on `queue` before it when one is given.
    /// Both regions are checked now; both memories stay alive until the copy is done.
    #[pyo3(signature = (dst, region, dst_region = None, after = None, queue = None))]
    fn copy_region_to_async(
        &self,
        py: Python<'_>,
        dst: &PyMemory,
        region: &PyRegion,
        dst_region: Option<&PyRegion>,
        after: Option<&Bound<'_, PyAny>>,
        queue: Option<PyQueue>,
    ) -> PyResult<PyEvent> {
        guarded(|| {
            let (src, to, after) = (self.mem()?, dst.mem()?, events_of(after)?);
            let (sr, dr) = (region.0, dst_region.map_or(region.0.packed(), |r| r.0));
            crate::detach(py, || match queue {
                Some(q) => src.copy_region_to_async_on(q.inner, &sr, to, &dr, &after),
                None => src.copy_region_to_async(&sr, to, &dr, &after),
            })
            .map(|inner| PyEvent { inner })
            .map_err(py_err)
        })
    }

    /// Copies `src_region` of `src` into `region` of this memory (None: the source
    /// region's packed layout at the start); returns the route.
    #[pyo3(signature = (src, src_region, region = None))]
    fn copy_region_from(
        &self,
        py: Python<'_>,
        src: &PyMemory,
        src_region: &PyRegion,
        region: Option<&PyRegion>,
    ) -> PyResult<String> {
        src.copy_region_to(py, self, src_region, region, None)
    }
}
