//! `locus.Buffer`'s vector operations, HAMR's: `capacity`, `reserve`, `resize`,
//! `assign`, `append`, `swap`, and `move_to` another location.

use super::*;

#[pymethods]
impl PyBuffer {
    /// Elements the home allocation holds without reallocating.
    #[getter]
    fn capacity(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.held(py)?.capacity())
    }

    /// Makes room at home for at least `capacity` elements (HAMR's `reserve`): later
    /// appends up to it copy nothing that is already there.
    fn reserve(&self, py: Python<'_>, capacity: usize) -> PyResult<()> {
        guarded(|| self.reshaped(py, "reserve", |store| store.reserve(capacity)))
    }

    /// Changes the length of a 1-D buffer (HAMR's `resize`): replicas stay coherent;
    /// new elements are `fill` (zero when `None`).
    #[pyo3(signature = (n, fill = None))]
    fn resize(&self, py: Python<'_>, n: usize, fill: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        guarded(|| {
            let pattern = match fill {
                Some(value) => self.dtype.encode(value)?,
                None => vec![0u8; self.dtype.size],
            };
            self.reshaped(py, "resize", |store| store.resize(n, &pattern))
        })
    }

    /// Replaces the contents with a copy of `src` (same dtype, any location; HAMR's
    /// `assign`); the length becomes `src`'s.
    fn assign(&self, py: Python<'_>, src: &Bound<'_, PyBuffer>) -> PyResult<()> {
        guarded(|| self.take_in(py, src, false))
    }

    /// Appends a copy of `src` (same dtype, any location; HAMR's `append`): the
    /// capacity doubles when it must, and the elements already here are not copied
    /// when it suffices.
    fn append(&self, py: Python<'_>, src: &Bound<'_, PyBuffer>) -> PyResult<()> {
        guarded(|| self.take_in(py, src, true))
    }

    /// Exchanges the contents, locations, replicas, shapes and counters of two buffers of
    /// one dtype (HAMR's `swap`): nothing is copied.
    fn swap(&self, py: Python<'_>, other: &Bound<'_, PyBuffer>) -> PyResult<()> {
        guarded(|| {
            let other: &PyBuffer = other.get();
            if std::ptr::eq(other, self) {
                return Ok(());
            }
            if other.dtype.name != self.dtype.name || self.readonly || other.readonly {
                return Err(PyValueError::new_err(format!(
                    "swap of a {} buffer with a {} one: both must be writable and of one dtype",
                    self.dtype.name, other.dtype.name
                )));
            }
            self.usm_cache.forget();
            other.usm_cache.forget();
            crate::detach(py, || {
                let (mut a, mut b) = locked_pair(self, other)?;
                self.no_open_writer(&mut a, "swap")?;
                other.no_open_writer(&mut b, "swap")?;
                std::mem::swap(&mut *a, &mut *b);
                std::mem::swap(&mut *lock(&self.shape), &mut *lock(&other.shape));
                Ok(())
            })
            .map_err(py_err)
        })
    }

    /// Moves the data to `location`, which becomes the home; other copies are freed
    /// (handles already given out keep theirs alive).
    fn move_to(&self, py: Python<'_>, location: &str) -> PyResult<()> {
        guarded(|| {
            let location = parse_location(location)?;
            self.usm_cache.forget();
            crate::detach(py, || {
                let mut store = self.store()?;
                if let Some(w) = self.sync_writers(&mut store)? {
                    return Err(locus::Error::Invalid(format!(
                        "a write handle at {w} is still open: close it before moving the buffer"
                    )));
                }
                store.move_to(location)
            })
            .map_err(py_err)
        })
    }
}
