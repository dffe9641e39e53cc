//! `locus.Buffer`'s regions: `buf.region[1:-1, 0]` (the region numpy's basic index
//! selects in the buffer's shape) and region copies between buffers in one call.

use pyo3::types::{PyEllipsis, PySlice, PyTuple};

use pyo3::exceptions::PyIndexError;

use super::*;
use crate::regions::PyRegion;

/// `Buffer.region`: indexed as numpy indexes an array of the buffer's shape, it gives the
/// `Region` of the elements selected, not a copy of them.
#[pyclass(frozen, module = "locus", name = "RegionIndex")]
pub(crate) struct PyRegionIndex {
    shape: Vec<usize>,
    itemsize: usize,
}

#[pymethods]
impl PyRegionIndex {
    /// The region `index` selects: integers and slices (positive steps), as many as the
    /// shape has dimensions or fewer (the rest whole), `...` for the dimensions between.
    /// `buf.region[:, 0]` is the first column of a 2-D buffer; `buf.region[1:-1, 1:-1]`
    /// its inside.
    fn __getitem__(&self, index: &Bound<'_, PyAny>) -> PyResult<PyRegion> {
        let items: Vec<Bound<'_, PyAny>> = match index.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![index.clone()],
        };
        let dims = self.shape.len();
        let ellipses = items
            .iter()
            .filter(|i| i.is_instance_of::<PyEllipsis>())
            .count();
        let given = items.len() - ellipses;
        if ellipses > 1 || given > dims {
            return Err(PyIndexError::new_err(format!(
                "Buffer.region: {} indices for a buffer of shape {:?} (at most one ...)",
                items.len(),
                self.shape
            )));
        }
        // C-order strides of the buffer's shape, in bytes.
        let mut strides = vec![self.itemsize as isize; dims];
        for d in (0..dims.saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * self.shape[d + 1] as isize;
        }
        let (mut offset, mut shape, mut out_strides) = (0isize, Vec::new(), Vec::new());
        let mut d = 0;
        for item in &items {
            if item.is_instance_of::<PyEllipsis>() {
                for _ in 0..dims - given {
                    shape.push(self.shape[d]);
                    out_strides.push(strides[d]);
                    d += 1;
                }
            } else if let Ok(slice) = item.cast::<PySlice>() {
                let n = self.shape[d];
                let s = slice.indices(n as isize)?;
                if s.step <= 0 {
                    return Err(PyIndexError::new_err(format!(
                        "Buffer.region: dimension {d}: step {} (a region runs forward; reverse the data instead)",
                        s.step
                    )));
                }
                offset += s.start * strides[d];
                shape.push(s.slicelength);
                out_strides.push(strides[d] * s.step);
                d += 1;
            } else {
                let n = self.shape[d] as isize;
                let i: isize = item.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "Buffer.region: dimension {d}: {item} is not an integer, a slice or ..."
                    ))
                })?;
                let at = if i < 0 { i + n } else { i };
                if at < 0 || at >= n {
                    return Err(PyIndexError::new_err(format!(
                        "Buffer.region: index {i} is out of range for dimension {d} of size {n}"
                    )));
                }
                offset += at * strides[d];
                d += 1;
            }
        }
        for rest in d..dims {
            shape.push(self.shape[rest]);
            out_strides.push(strides[rest]);
        }
        if let Some(z) = shape.iter().position(|&n| n == 0) {
            return Err(PyIndexError::new_err(format!(
                "Buffer.region: dimension {z} of the selection is empty; a region holds at least one element"
            )));
        }
        if shape.is_empty() {
            (shape, out_strides) = (vec![1], vec![self.itemsize as isize]);
        }
        locus::Region::from_strides(offset as usize, &shape, Some(&out_strides), self.itemsize)
            .map(PyRegion)
            .map_err(py_err)
    }

    fn __repr__(&self) -> String {
        format!(
            "RegionIndex(shape={:?}, itemsize={})",
            self.shape, self.itemsize
        )
    }
}

#[pymethods]
impl PyBuffer {
    /// Regions of this buffer by numpy's indexing over its shape: `buf.region[:, 0]`
    /// (a column), `buf.region[1:-1, 1:-1]` (the inside of a grid). Gives a `Region`
    /// for `copy_region_from` / `copy_region_to` and `locus.mpi`'s region messages.
    #[getter]
    fn region(&self) -> PyRegionIndex {
        PyRegionIndex {
            shape: self.dims(),
            itemsize: self.dtype.size,
        }
    }

    /// Checks `region` as a region of this buffer for `call` (locus.mpi's region
    /// messages check before anything is sent or received): ValueError naming the
    /// location, the call, the dimension and the limit.
    fn _check_region(&self, region: &PyRegion, call: &str) -> PyResult<()> {
        guarded(|| {
            let len = elements(&self.dims(), 1)?;
            let location = lock(&self.store).location();
            region
                .0
                .check_elements(location, call, "buffer's", (len, self.dtype.size))
                .map_err(py_err)
        })
    }

    /// Copies `src_region` of buffer `src` into `region` of this buffer (None: the source
    /// region's packed layout from the start), wherever each is current, in one region
    /// copy (the runtime's rectangle copy, or packed once): returns the route. Both
    /// regions are checked first: out of range or splitting elements is an error and
    /// nothing is written. The GIL is released meanwhile.
    ///
    /// ```python
    /// grid = locus.Buffer("opencl:0", (64, 64), dtype="float32", fill=1.0)
    /// face = locus.Buffer("host", 64, dtype="float32")
    /// face.copy_region_from(grid, grid.region[:, 63])
    /// ```
    #[pyo3(signature = (src, src_region, region = None))]
    fn copy_region_from(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyBuffer>,
        src_region: &PyRegion,
        region: Option<&PyRegion>,
    ) -> PyResult<String> {
        region_copy(py, src.get(), src_region, self, region)
    }

    /// Copies `region` of this buffer into `dst_region` of buffer `dst` (None: packed
    /// from the start); see `copy_region_from`.
    #[pyo3(signature = (dst, region, dst_region = None))]
    fn copy_region_to(
        &self,
        py: Python<'_>,
        dst: &Bound<'_, PyBuffer>,
        region: &PyRegion,
        dst_region: Option<&PyRegion>,
    ) -> PyResult<String> {
        region_copy(py, self, region, dst.get(), dst_region)
    }
}

fn region_copy(
    py: Python<'_>,
    src: &PyBuffer,
    src_region: &PyRegion,
    dst: &PyBuffer,
    dst_region: Option<&PyRegion>,
) -> PyResult<String> {
    guarded(|| {
        if std::ptr::eq(src, dst) {
            return Err(PyValueError::new_err(
                "a region copy within one buffer: copy the source region into a buffer of its own first",
            ));
        }
        if src.dtype != dst.dtype {
            return Err(PyTypeError::new_err(format!(
                "region copy: the destination holds {}, the source {}",
                dst.dtype.name, src.dtype.name
            )));
        }
        if dst.readonly {
            return Err(PyValueError::new_err(
                "this buffer adopted read-only memory: it cannot be copied into",
            ));
        }
        let (sr, dr) = (
            src_region.0,
            dst_region.map_or(src_region.0.packed(), |r| r.0),
        );
        crate::detach(py, || {
            let (mut dst_store, mut src_store) = locked_pair(dst, src)?;
            // Data written through open handles (DLPack, numpy views) counts on both sides.
            src.sync_writers(&mut src_store)?;
            dst.sync_writers(&mut dst_store)?;
            dst_store.copy_region_from(&dr, &src_store, &sr)
        })
        .map(|route| route.to_string())
        .map_err(py_err)
    })
}
