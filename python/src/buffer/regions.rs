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
        let layout = select(
            &locus::Layout::row_major(&self.shape),
            index,
            "Buffer.region",
        )?;
        layout_region(&layout, self.itemsize).map(PyRegion)
    }

    fn __repr__(&self) -> String {
        format!(
            "RegionIndex(shape={:?}, itemsize={})",
            self.shape, self.itemsize
        )
    }
}

/// The layout numpy's basic `index` (integers, slices with positive steps, one `...`)
/// selects in `layout`, for `call`'s errors: IndexError naming the dimension.
pub(crate) fn select(
    layout: &locus::Layout,
    index: &Bound<'_, PyAny>,
    call: &str,
) -> PyResult<locus::Layout> {
    let items: Vec<Bound<'_, PyAny>> = match index.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![index.clone()],
    };
    let dims = layout.shape().len();
    let ellipses = items
        .iter()
        .filter(|i| i.is_instance_of::<PyEllipsis>())
        .count();
    let given = items.len() - ellipses;
    if ellipses > 1 || given > dims {
        return Err(PyIndexError::new_err(format!(
            "{call}: {} indices for shape {:?} (at most one ...)",
            items.len(),
            layout.shape()
        )));
    }
    let (mut out, mut d) = (layout.clone(), 0);
    let fail = |e: locus::Error| PyIndexError::new_err(format!("{call}: {e}"));
    for item in &items {
        if item.is_instance_of::<PyEllipsis>() {
            d += dims - given;
        } else if let Ok(slice) = item.cast::<PySlice>() {
            let n = out.shape()[d];
            let s = slice.indices(n as isize)?;
            if s.step <= 0 {
                return Err(PyIndexError::new_err(format!(
                    "{call}: dimension {d}: step {} (a view runs forward; reverse the data instead)",
                    s.step
                )));
            }
            if s.slicelength == 0 {
                return Err(PyIndexError::new_err(format!(
                    "{call}: dimension {d} of the selection is empty; a view holds at least one element"
                )));
            }
            let end = s.start as usize + (s.slicelength - 1) * s.step as usize + 1;
            out = out
                .slice_step(d, s.start as usize..end, s.step as usize)
                .map_err(fail)?;
            d += 1;
        } else {
            let n = out.shape()[d] as isize;
            let i: isize = item.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{call}: dimension {d}: {item} is not an integer, a slice or ..."
                ))
            })?;
            let at = if i < 0 { i + n } else { i };
            if at < 0 || at >= n {
                return Err(PyIndexError::new_err(format!(
                    "{call}: index {i} is out of range for dimension {d} of size {n}"
                )));
            }
            // The dimension goes (the next one takes its number); a 1-D layout keeps
            // one element, a view of one element.
            let before = out.shape().len();
            out = out.index(d, at as usize).map_err(fail)?;
            if out.shape().len() == before {
                d += 1;
            }
        }
    }
    Ok(out)
}

/// The region of `layout` in a buffer of `itemsize`-byte elements, as numpy's view of
/// the same elements gives it (`Region.of`: each dimension kept, no rows merged), or,
/// past three dimensions, with contiguous dimensions merged.
pub(crate) fn layout_region(layout: &locus::Layout, itemsize: usize) -> PyResult<locus::Region> {
    if layout.shape().len() <= 3 {
        let strides: Vec<isize> = layout
            .strides()
            .iter()
            .map(|&s| s.saturating_mul(itemsize).min(isize::MAX as usize) as isize)
            .collect();
        let offset = layout.offset().saturating_mul(itemsize);
        return locus::Region::from_strides(offset, layout.shape(), Some(&strides), itemsize)
            .map_err(py_err);
    }
    let region = match itemsize {
        1 => layout.region::<u8>(),
        2 => layout.region::<u16>(),
        4 => layout.region::<u32>(),
        _ => layout.region::<u64>(),
    };
    region.map_err(py_err)
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

pub(super) fn region_copy(
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
