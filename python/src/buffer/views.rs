//! `locus.View`: a strided view of a `locus.Buffer` (`buf.view((rows, cols))[1:-1, 0]`),
//! sliced as numpy slices, never a copy: read as numpy, copied to a location or into
//! another view in one region copy (only its elements move), and handed to DLPack
//! consumers with its strides.

use super::regions::{layout_region, region_copy, select};
use super::*;
use crate::regions::PyRegion;

/// A strided view of a buffer: its elements by shape and strides (row-major order of the
/// buffer's shape, sliced). Indexing it gives a view, not a copy.
#[pyclass(frozen, module = "locus", name = "View")]
pub(crate) struct PyView {
    buffer: Py<PyBuffer>,
    layout: locus::Layout,
}

#[pymethods]
impl PyBuffer {
    /// The buffer seen as a row-major array of `shape` (default: its own shape; the
    /// shape holds exactly its elements): a `View` to slice, read, copy and export.
    ///
    /// ```python
    /// grid = locus.Buffer("opencl:0", 64 * 48, dtype="float64")
    /// face = grid.view((64, 48))[1:-1, 0]      # a view: nothing moves
    /// face.to_numpy()                          # only its 62 elements move
    /// ```
    #[pyo3(signature = (shape = None))]
    fn view(slf: &Bound<'_, PyBuffer>, shape: Option<Vec<usize>>) -> PyResult<PyView> {
        let me = slf.get();
        let dims = me.dims();
        let shape = shape.unwrap_or_else(|| dims.clone());
        let len = elements(&dims, 1)?;
        let layout = locus::Layout::row_major(&shape);
        if shape.is_empty() || layout.len() != len {
            return Err(PyValueError::new_err(format!(
                "Buffer.view: the shape {shape:?} holds {} elements and the buffer {len}",
                layout.len()
            )));
        }
        Ok(PyView {
            buffer: slf.clone().unbind(),
            layout,
        })
    }
}

#[pymethods]
impl PyView {
    /// A view of the elements numpy's same index selects: integers, slices with
    /// positive steps, one `...`.
    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<PyView> {
        Ok(PyView {
            buffer: self.buffer.clone_ref(py),
            layout: select(&self.layout, index, "View")?,
        })
    }

    /// The extent of each dimension.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.layout.shape().to_vec()
    }

    /// The strides in bytes, as numpy gives them.
    #[getter]
    fn strides(&self) -> Vec<usize> {
        let size = self.buffer.get().dtype.size;
        self.layout.strides().iter().map(|s| s * size).collect()
    }

    /// The first element, in elements from the buffer's start.
    #[getter]
    fn offset(&self) -> usize {
        self.layout.offset()
    }

    /// The element type's name.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.buffer.get().dtype.name
    }

    /// The buffer it views.
    #[getter]
    fn buffer(&self, py: Python<'_>) -> Py<PyBuffer> {
        self.buffer.clone_ref(py)
    }

    /// The extent of the first dimension (numpy's `len`).
    fn __len__(&self) -> usize {
        self.layout.shape()[0]
    }

    /// The region of bytes it names in the buffer.
    #[getter]
    fn region(&self) -> PyResult<PyRegion> {
        layout_region(&self.layout, self.buffer.get().dtype.size).map(PyRegion)
    }

    /// A new buffer of the view's shape at `location` (default: the buffer's home)
    /// holding its elements: one region copy from wherever the data is current, which
    /// moves only them.
    #[pyo3(signature = (location = None))]
    fn copy(&self, py: Python<'_>, location: Option<&str>) -> PyResult<PyBuffer> {
        guarded(|| {
            let buffer = self.buffer.get();
            let at = match location {
                Some(l) => parse_location(l)?,
                None => lock(&buffer.store).location(),
            };
            let region = layout_region(&self.layout, buffer.dtype.size)?;
            let store = crate::detach(py, || -> locus::Result<Store> {
                let mut out = Store::zeroed(at, self.layout.len(), buffer.dtype.size)?;
                let mut src = buffer.store()?;
                buffer.sync_writers(&mut src)?;
                out.copy_region_from(&region.packed(), &src, &region)?;
                Ok(out)
            })
            .map_err(py_err)?;
            Ok(PyBuffer::wrap(
                store,
                buffer.dtype,
                self.layout.shape().to_vec(),
                false,
            ))
        })
    }

    /// The elements as a new numpy array of the view's shape (only they move, once: the
    /// array is the host buffer they were copied into, which it keeps alive).
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let copy = self.copy(py, Some("host"))?;
            let handle = Py::new(py, copy.handle(py, "host", true)?)?;
            PyBuffer::numpy(py)?.call_method1("asarray", (handle,))
        })
    }

    /// Copies the elements of view `src` (one shape) into this view's, in one region
    /// copy from wherever `src`'s buffer is current; the rest of this buffer keeps its
    /// data. Returns the route.
    fn copy_from(&self, py: Python<'_>, src: &PyView) -> PyResult<String> {
        guarded(|| {
            let (dst_buffer, src_buffer) = (self.buffer.get(), src.buffer.get());
            let (sr, dr) = match dst_buffer.dtype.size {
                1 => src.layout.region_pair::<u8>(&self.layout),
                2 => src.layout.region_pair::<u16>(&self.layout),
                4 => src.layout.region_pair::<u32>(&self.layout),
                _ => src.layout.region_pair::<u64>(&self.layout),
            }
            .map_err(|e| {
                PyValueError::new_err(format!("View.copy_from: {e}; nothing was copied"))
            })?;
            region_copy(
                py,
                src_buffer,
                &PyRegion(sr),
                dst_buffer,
                Some(&PyRegion(dr)),
            )
        })
    }

    /// `(device_type, device_id)` of the buffer's data at its home (DLPack's numbers).
    fn __dlpack_device__(&self, py: Python<'_>) -> PyResult<(i32, i32)> {
        self.buffer.get().__dlpack_device__(py)
    }

    /// A DLPack capsule of the view: the buffer's memory at its home read in place, with
    /// the view's offset, shape and strides (a consumer sees a strided tensor; nothing is
    /// copied unless `copy=True` or another `dl_device` asks for it).
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let args = (stream, max_version, dl_device, copy);
        self.buffer
            .get()
            .export_dlpack(py, args, Some(&self.layout))
    }

    fn __repr__(&self) -> String {
        let buffer = self.buffer.get();
        format!(
            "View(shape={:?}, strides={:?}, offset={}, dtype={}, of a buffer at {})",
            self.layout.shape(),
            self.strides(),
            self.layout.offset(),
            buffer.dtype.name,
            lock(&buffer.store).location()
        )
    }
}
