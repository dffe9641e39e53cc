//! `locus.Buffer`'s copies: converted (`astype`), whole (`copy`), between buffers
//! (`copy_from`), ahead of use (`prefetch`), and its transfer counters.

use super::*;

#[pymethods]
impl PyBuffer {
    /// A new buffer of `dtype` holding these elements converted (numpy's `astype`,
    /// HAMR's converting copy), at `location` (default: this buffer's home), with Rust's
    /// `as` semantics: float to integer rounds toward zero and saturates, NaN becomes 0;
    /// integer to a narrower integer wraps; to a float rounds to nearest. Converted on the
    /// device where it runs a conversion kernel (OpenCL, SYCL; WebGPU through staging on
    /// a GPU), otherwise through host memory, never a full extra copy. `bool` converts as
    /// no Rust type does: `ValueError` (compare instead: `b.to_numpy() != 0`).
    ///
    /// ```python
    /// d = locus.Buffer("opencl:0", 4, dtype="float32", fill=2.5).astype("float64")
    /// ```
    #[pyo3(signature = (dtype, location=None))]
    fn astype(&self, py: Python<'_>, dtype: &str, location: Option<&str>) -> PyResult<PyBuffer> {
        guarded(|| {
            let to = DType::from_name(dtype)?;
            if to == self.dtype {
                return self.copy(py, location);
            }
            let target = location.map(parse_location).transpose()?;
            let (Some(from_element), Some(to_element)) = (self.dtype.element(), to.element())
            else {
                return Err(PyValueError::new_err(format!(
                    "astype from {} to {}: bool converts as no Rust element type does; compare instead (b.to_numpy() != 0)",
                    self.dtype.name, to.name
                )));
            };
            let store = crate::detach(py, || -> locus::Result<Store> {
                let mut store = self.store()?;
                // The source where the newest data is (an open write handle's
                // location, else the home): nothing moves first.
                let at = self.sync_writers(&mut store)?.unwrap_or(store.location());
                let target = target.unwrap_or(store.location());
                let count = store.count();
                let mut made = Store::zeroed(target, count, to.size)?;
                // Neither side stays mapped while the conversion maps what it needs.
                let mut src = store.access(at)?;
                drop(src.mapping.take());
                let mut dst = made.access_mut(target)?;
                drop(dst.mapping.take());
                src.memory
                    .convert_to(0, from_element, &dst.memory, 0, to_element, count)?;
                Ok(made)
            })
            .map_err(py_err)?;
            Ok(PyBuffer::wrap(store, to, self.dims(), false))
        })
    }

    /// A new buffer at `location` (default: this one's home) with a copy of the data.
    #[pyo3(signature = (location=None))]
    fn copy(&self, py: Python<'_>, location: Option<&str>) -> PyResult<PyBuffer> {
        guarded(|| {
            let target = location.map(parse_location).transpose()?;
            let store = crate::detach(py, || {
                let mut store = self.store()?;
                self.sync_writers(&mut store)?;
                store.to_location(target.unwrap_or(store.location()))
            })
            .map_err(py_err)?;
            Ok(PyBuffer::wrap(store, self.dtype, self.dims(), false))
        })
    }

    /// The transfer counters per route kind (`in-place`, `direct`, `mapped`, `peer`,
    /// `staged`): `{"direct": {"calls": 2, "bytes": 8192}, ...}`, kinds never taken left
    /// out. Every copy counts, reads and writes of the whole buffer included.
    #[getter]
    fn transfers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let totals = self.held(py)?.totals();
            crate::totals_dict(py, &totals)
        })
    }

    /// Copies `count` elements of `src` from `src_start` into this buffer at
    /// `dst_start` (default: the rest of `src`), wherever each lives, on the transfer
    /// matrix's route (umem's `copy_from`). Bounds-checked: out of range is an error and
    /// nothing is written. Returns the route's kind. The GIL is released meanwhile.
    #[pyo3(signature = (src, src_start=0, count=None, dst_start=0))]
    fn copy_from(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyBuffer>,
        src_start: usize,
        count: Option<usize>,
        dst_start: usize,
    ) -> PyResult<String> {
        guarded(|| {
            let src: &PyBuffer = src.get();
            if std::ptr::eq(src, self) {
                return Err(PyValueError::new_err(
                    "copy_from within one buffer: copy() the source range first",
                ));
            }
            if src.dtype != self.dtype {
                return Err(PyTypeError::new_err(format!(
                    "copy_from: this buffer holds {}, the source {}",
                    self.dtype.name, src.dtype.name
                )));
            }
            if self.readonly {
                return Err(PyValueError::new_err(
                    "this buffer adopted read-only memory: it cannot be copied into",
                ));
            }
            let src_len = elements(&src.dims(), 1)?;
            let count = count.unwrap_or_else(|| src_len.saturating_sub(src_start));
            let end = src_start
                .checked_add(count)
                .ok_or_else(|| PyValueError::new_err("copy_from: src_start + count overflows"))?;
            crate::detach(py, || {
                // Two locks, always in address order: two threads copying each way
                // between the same two buffers cannot deadlock.
                let (mut dst_store, src_store) =
                    if std::ptr::from_ref(self) < std::ptr::from_ref(src) {
                        let d = self.store()?;
                        (d, src.store()?)
                    } else {
                        let s = src.store()?;
                        (self.store()?, s)
                    };
                self.sync_writers(&mut dst_store)?;
                dst_store.copy_from(dst_start, &src_store, src_start..end)
            })
            .map(|route| route.kind.to_string())
            .map_err(py_err)
        })
    }

    /// Makes the current data valid at `location` ahead of use there (OpenHMPP's
    /// `advancedload`); later reads there move nothing. Returns the route's kind. In
    /// `"async"` mode (the default) it returns once the move started (`synchronize()`
    /// waits; a use of the data waits by itself); in `"sync"` mode once it is done.
    fn prefetch(&self, py: Python<'_>, location: &str) -> PyResult<String> {
        guarded(|| {
            let location = parse_location(location)?;
            crate::detach(py, || {
                let mut store = self.store()?;
                self.sync_writers(&mut store)?;
                store.prefetch(location)
            })
            .map(|route| route.kind.to_string())
            .map_err(py_err)
        })
    }
}
