//! `locus.Buffer`: a typed buffer at any location, by name.

use super::*;
use crate::writers::Writer;

/// A typed array with a home location and coherent replicas (`locus::Buffer`).
///
/// `Buffer("opencl:0", 1000, dtype="float32", fill=3.1415)` makes 1000 floats on OpenCL
/// device 0; `access(location)` / `access_mut(location)` declare where they will be used.
#[pyclass(frozen, module = "locus", name = "Buffer")]
pub(crate) struct PyBuffer {
    pub(crate) store: Mutex<Store>,
    pub(crate) dtype: DType,
    /// Changed only with the store's lock held (`resize`, `assign`, `append`, `swap`).
    pub(crate) shape: Mutex<Vec<usize>>,
    pub(crate) readonly: bool,
    /// Write handles handed out; while one is open, its memory holds the newest data.
    pub(crate) writers: Mutex<Vec<Writer>>,
    /// dpctl's memory object over the SYCL replica read handles last exported.
    pub(crate) usm_cache: Arc<crate::usm::UsmMemoryCache>,
}

// Python's allocator aligns objects to 16 bytes: a pyclass that needs more would be
// read through a misaligned pointer (undefined behaviour; a panic in debug builds).
const _: () = assert!(std::mem::align_of::<PyBuffer>() <= 16);
const _: () = assert!(std::mem::align_of::<Handle>() <= 16);

/// The stores of two distinct buffers, locked in address order (so that two threads
/// locking one pair never wait on each other), returned as `(a's, b's)`.
fn locked_pair<'a>(
    a: &'a PyBuffer,
    b: &'a PyBuffer,
) -> locus::Result<(MutexGuard<'a, Store>, MutexGuard<'a, Store>)> {
    if (a as *const PyBuffer) < (b as *const PyBuffer) {
        let first = a.store()?;
        Ok((first, b.store()?))
    } else {
        let first = b.store()?;
        Ok((a.store()?, first))
    }
}

/// A transfer mode by its Python name.
fn transfer_mode(name: &str) -> PyResult<locus::Transfer> {
    match name {
        "async" => Ok(locus::Transfer::Async),
        "sync_host" => Ok(locus::Transfer::SyncHost),
        "sync" => Ok(locus::Transfer::Sync),
        other => Err(PyValueError::new_err(format!(
            "transfer mode {other:?}: expected \"async\", \"sync_host\" or \"sync\""
        ))),
    }
}

pub(crate) fn shape_of(n: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    if let Ok(n) = n.extract::<usize>() {
        return Ok(vec![n]);
    }
    n.extract::<Vec<usize>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "the size must be a non-negative int or a tuple of them, got {}",
            n.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

impl PyBuffer {
    pub(crate) fn wrap(store: Store, dtype: DType, shape: Vec<usize>, readonly: bool) -> PyBuffer {
        PyBuffer {
            store: Mutex::new(store),
            dtype,
            shape: Mutex::new(shape),
            readonly,
            writers: Mutex::new(Vec::new()),
            usm_cache: Arc::default(),
        }
    }

    /// The store, locked by a thread that holds the GIL: while another thread has it (an
    /// asynchronous call in flight), the wait releases the GIL, so that a thread which
    /// needs the GIL to finish (a Python failure callback of a memory resource) can.
    pub(crate) fn held(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, Store>> {
        self.refuse_if_held_by_call().map_err(py_err)?;
        loop {
            match self.store.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(std::sync::TryLockError::Poisoned(e)) => return Ok(e.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => {
                    crate::detach(py, || drop(lock(&self.store)));
                }
            }
        }
    }

    /// The shape now.
    pub(crate) fn dims(&self) -> Vec<usize> {
        lock(&self.shape).clone()
    }

    /// Refuses a vector operation on a read-only or multi-dimensional buffer.
    fn vector_checks(&self, what: &str) -> PyResult<()> {
        if self.readonly {
            return Err(PyValueError::new_err(format!(
                "{what}: this buffer adopted read-only memory"
            )));
        }
        let dims = self.dims();
        if dims.len() != 1 {
            return Err(PyValueError::new_err(format!(
                "{what}: the buffer has shape {dims:?}; vector operations take 1-D buffers"
            )));
        }
        Ok(())
    }

    /// Runs `change` on the store of a 1-D, writable buffer with no write handle open
    /// (a vector operation: the length may change), then sets the shape to the new
    /// length.
    fn reshaped(
        &self,
        py: Python<'_>,
        what: &str,
        change: impl FnOnce(&mut Store) -> locus::Result<()> + Send,
    ) -> PyResult<()> {
        self.vector_checks(what)?;
        self.usm_cache.forget();
        crate::detach(py, || {
            let mut store = self.store()?;
            self.no_open_writer(&mut store, what)?;
            let changed = change(&mut store);
            *lock(&self.shape) = vec![store.count()];
            changed
        })
        .map_err(py_err)
    }

    /// Refuses `what` (an operation that may reallocate the store) while a write handle
    /// of this buffer is open.
    fn no_open_writer(&self, store: &mut Store, what: &str) -> locus::Result<()> {
        match self.sync_writers(store)? {
            Some(w) => Err(locus::Error::Invalid(format!(
                "{what}: a write handle at {w} is still open: close it first"
            ))),
            None => Ok(()),
        }
    }

    /// `assign` / `append` of `src`.
    fn take_in(&self, py: Python<'_>, src: &Bound<'_, PyBuffer>, append: bool) -> PyResult<()> {
        let what = if append { "append" } else { "assign" };
        let src: &PyBuffer = src.get();
        if std::ptr::eq(src, self) {
            return Err(PyValueError::new_err(format!(
                "{what} of a buffer to itself: copy() it first"
            )));
        }
        if src.dtype.name != self.dtype.name {
            return Err(PyValueError::new_err(format!(
                "{what} of a {} buffer to a {} one: the dtypes must match",
                src.dtype.name, self.dtype.name
            )));
        }
        self.vector_checks(what)?;
        self.usm_cache.forget();
        crate::detach(py, || {
            let (mut store, mut source) = locked_pair(self, src)?;
            self.no_open_writer(&mut store, what)?;
            // The newest data of `src` is where its open write handles are.
            src.sync_writers(&mut source)?;
            let done = store.assign_or_append(&source, append);
            *lock(&self.shape) = vec![store.count()];
            done
        })
        .map_err(py_err)
    }

    fn handle(&self, py: Python<'_>, location: &str, write: bool) -> PyResult<Handle> {
        let location = parse_location(location)?;
        if write && self.readonly {
            return Err(PyValueError::new_err(
                "this buffer adopted read-only memory (its producer said so): access_mut is refused; copy() it first",
            ));
        }
        let view = crate::detach(
            py, || -> locus::Result<View> {
                let mut store = self.store()?;
                let writer = self.sync_writers(&mut store)?;
                if write {
                    if let Some(w) = writer.filter(|&w| w != location) {
                        return Err(locus::Error::Invalid(format!(
                            "a write handle at {w} is still open: close it (h.close(), or a with-block) \
                             before declaring a write at {location}"
                        )));
                    }
                }
                let served = if write {
                    store.access_mut(location)?
                } else {
                    store.access(location)?
                };
                View::new(served, location, self.dtype, self.dims(), write)
            })
            .map_err(py_err)?;
        let view = Arc::new(view);
        if write {
            let queues = match location {
                Location::Sycl(_) => crate::usm::ConsumerQueues::of(py, location).ok(),
                _ => None,
            };
            lock(&self.writers).push(Writer::new(&view, location, queues));
        }
        let cache = (!write).then(|| Arc::clone(&self.usm_cache));
        Ok(Handle::new(view, cache))
    }

    fn numpy<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyModule>> {
        py.import("numpy").map_err(|e| {
            PyRuntimeError::new_err(format!("this needs numpy (pip install numpy): {e}"))
        })
    }
}

/// `obj.name`, or None when it has no such attribute: any other exception raised while
/// getting it (a property raising `MemoryError`, `KeyboardInterrupt`) is the error, not
/// a missing attribute.
fn optional_attr<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    match obj.getattr(name) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<PyAttributeError>(obj.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The element count of `shape` for elements of `size` bytes; a shape whose count or
/// byte size does not fit in memory sizes is a `ValueError` (not a wrapped size).
pub(crate) fn elements(shape: &[usize], size: usize) -> PyResult<usize> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|n| n.checked_mul(size.max(1)).is_some_and(|b| b <= isize::MAX as usize))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "the shape {shape:?} of {size}-byte elements holds more bytes than memory can address"
            ))
        })
}

/// The CUDA device of a `__cuda_array_interface__` array: the one its
/// `__dlpack_device__` names, else the one the driver says owns the pointer (not device
/// 0 by default). The interface's `stream` (v3: work on the memory may still be pending
/// there) is waited for before locus uses the memory; 0 is refused, as the interface
/// specifies.
fn cuda_array_device(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    ptr: u64,
    stream: Option<u64>,
) -> PyResult<Location> {
    use locus::backends::cuda::CudaDevice;
    let named = obj
        .call_method0("__dlpack_device__")
        .and_then(|d| d.extract::<(i32, u32)>())
        .ok()
        .map(|(_, id)| Location::Cuda(id));
    let location = match named {
        Some(l) => l,
        None => {
            let any = locus::device_as::<CudaDevice>(Location::Cuda(0)).map_err(py_err)?;
            Location::Cuda(crate::detach(py, || any.device_of_pointer(ptr)).map_err(py_err)?)
        }
    };
    match stream {
        None => {}
        Some(0) => {
            return Err(PyValueError::new_err(
                "the CUDA array interface's stream 0 is ambiguous and disallowed by the interface; the producer must give 1, 2 or a stream handle",
            ))
        }
        Some(handle) => {
            let device = locus::device_as::<CudaDevice>(location).map_err(py_err)?;
            // SAFETY: the producer vouches that its `stream` is a live stream of the
            // array's device (or the legacy / per-thread default stream, 1 or 2).
            crate::detach(py, || unsafe { device.synchronize_foreign_stream(handle) })
                .map_err(py_err)?;
        }
    }
    Ok(location)
}

#[pymethods]
impl PyBuffer {
    /// `n` elements (an int or a shape tuple) of `dtype` at `location` (`"host"`,
    /// `"opencl:0"`, ...), zeroed or each equal to `fill`, in transfer mode `transfer`
    /// (`"async"`, HAMR's default, `"sync_host"` or `"sync"`; see `set_transfer`).
    #[new]
    #[pyo3(signature = (location, n, dtype=None, fill=None, transfer="async"))]
    fn new(
        py: Python<'_>,
        location: &str,
        n: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        fill: Option<&Bound<'_, PyAny>>,
        transfer: &str,
    ) -> PyResult<PyBuffer> {
        guarded(|| {
            let mode = transfer_mode(transfer)?;
            let location = parse_location(location)?;
            let dtype = match dtype {
                Some(d) => dtype::dtype_of(d)?,
                None => DType::from_name("float32")?,
            };
            let shape = shape_of(n)?;
            let len = elements(&shape, dtype.size)?;
            let pattern = fill.map(|f| dtype.encode(f)).transpose()?;
            let mut store = crate::detach(py, || match pattern {
                Some(p) => Store::filled(location, len, &p),
                None => Store::zeroed(location, len, dtype.size),
            })
            .map_err(py_err)?;
            store.set_transfer(mode);
            Ok(PyBuffer::wrap(store, dtype, shape, false))
        })
    }

    /// The transfer mode (HAMR's `buffer_transfer`): `"async"` (the default: a move
    /// this buffer makes, for `copy_from`, `prefetch`, `move_to` or an access elsewhere,
    /// is started and the call returns; whatever uses the data next waits for it, and
    /// nothing is handed to Python before it arrived), `"sync_host"` (moves into host
    /// memory complete before the call returns, others do not) or `"sync"` (every move
    /// completes before the call returns).
    #[getter]
    fn transfer(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(match self.held(py)?.transfer() {
            locus::Transfer::Async => "async",
            locus::Transfer::SyncHost => "sync_host",
            locus::Transfer::Sync => "sync",
        })
    }

    /// Sets the transfer mode (`"async"`, `"sync_host"` or `"sync"`; HAMR's
    /// `set_transfer_asynchronous` and kin). Moves in flight continue:
    /// `synchronize()` waits for them.
    fn set_transfer(&self, py: Python<'_>, mode: &str) -> PyResult<()> {
        let mode = transfer_mode(mode)?;
        self.held(py)?.set_transfer(mode);
        Ok(())
    }

    /// Waits for every move in flight (HAMR's `synchronize`), with the GIL released. A
    /// failed move is the error, and the data is served from where it did arrive.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        crate::detach(py, || self.store()?.synchronize()).map_err(py_err)
    }

    /// The events of the moves still in flight (`locus.Event`s, for work of your own
    /// that must come after them).
    fn pending(&self, py: Python<'_>) -> PyResult<Vec<events::PyEvent>> {
        Ok(self
            .held(py)?
            .pending()
            .into_iter()
            .map(|inner| events::PyEvent { inner })
            .collect())
    }

    /// Orders every later use of this buffer after `event` (your own work that writes
    /// or reads it, or a user event): moves wait for it without blocking, and host
    /// access and reads wait for it.
    fn order_after(&self, py: Python<'_>, event: &events::PyEvent) -> PyResult<()> {
        self.held(py)?.order_after(&event.inner);
        Ok(())
    }

    /// The home location (where the buffer was made, or moved to).
    #[getter]
    fn location(&self, py: Python<'_>) -> PyResult<String> {
        if let Some(held) = self.held_by_call() {
            return Ok(held.location.to_string());
        }
        Ok(self.held(py)?.location().to_string())
    }

    /// The element type's name.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name
    }

    /// The shape.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        guarded(|| PyTuple::new(py, self.dims()))
    }

    /// Number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.dims().iter().product()
    }

    /// Size in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.size() * self.dtype.size
    }

    /// True when the buffer adopted memory its producer marked read-only.
    #[getter]
    fn readonly(&self) -> bool {
        self.readonly
    }

    /// Bytes copied between locations for this buffer so far.
    #[getter]
    fn bytes_moved(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.held(py)?.bytes_moved())
    }

    /// Every copy the buffer holds: `[(location, valid), ...]`.
    fn replicas(&self, py: Python<'_>) -> PyResult<Vec<(String, bool)>> {
        let replicas = match self.held_by_call() {
            Some(held) => held.replicas,
            None => self.held(py)?.replicas(),
        };
        Ok(replicas
            .into_iter()
            .map(|(l, v)| (l.to_string(), v))
            .collect())
    }

    fn __len__(&self) -> usize {
        self.dims().first().copied().unwrap_or(1)
    }

    /// Declares a read at `location`: in place when the data there is reachable from it,
    /// else a cached replica. The handle is read-only.
    #[pyo3(signature = (location="host"))]
    fn access(&self, py: Python<'_>, location: &str) -> PyResult<Handle> {
        guarded(|| self.handle(py, location, false))
    }

    /// Declares a write at `location` (the current data is there first). While the
    /// handle is open, its location holds the newest data: reads elsewhere copy from it.
    #[pyo3(signature = (location="host"))]
    fn access_mut(&self, py: Python<'_>, location: &str) -> PyResult<Handle> {
        guarded(|| self.handle(py, location, true))
    }

    /// A new numpy array holding a copy of the elements.
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let np = Self::numpy(py)?;
            let h = Py::new(py, self.handle(py, "host", false)?)?;
            np.call_method1("array", (h,))
        })
    }

    /// The elements as a Python list, read by locus itself (not through numpy).
    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        guarded(|| {
            let bytes = crate::detach(py, || {
                let mut store = self.store()?;
                self.sync_writers(&mut store)?;
                store.to_bytes()
            })
            .map_err(py_err)?;
            let elements = bytes.bytes().chunks_exact(self.dtype.size);
            // The list's own storage may not fit where the elements did: a MemoryError,
            // never an abort.
            let mut items = Vec::new();
            items.try_reserve_exact(elements.len()).map_err(|e| {
                PyMemoryError::new_err(format!(
                    "to_list: a list of {} elements does not fit in host memory ({e}); \
                     use to_numpy() or read a range at a time",
                    elements.len()
                ))
            })?;
            for b in elements {
                items.push(self.dtype.decode(py, b)?);
            }
            PyList::new(py, items)
        })
    }

    /// Sets every element to `value`, written by locus where the newest data lives.
    fn fill(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        guarded(|| {
            if self.readonly {
                return Err(PyValueError::new_err(
                    "this buffer adopted read-only memory",
                ));
            }
            let pattern = self.dtype.encode(value)?;
            crate::detach(py, || {
                let mut store = self.store()?;
                let at = self.sync_writers(&mut store)?.unwrap_or(store.location());
                // The mapping (if any) ends here: the fill goes through the backend.
                let Served { memory, .. } = store.access_mut(at)?;
                memory.fill(0..memory.len(), &pattern)
            })
            .map_err(py_err)
        })
    }

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

    /// `__dlpack_device__` of a read at the home location.
    fn __dlpack_device__(&self, py: Python<'_>) -> PyResult<(i32, i32)> {
        guarded(|| {
            let home = self.location(py)?;
            Ok(self.handle(py, &home, false)?.__dlpack_device__())
        })
    }

    /// DLPack export of a read at the home location (see `Handle.__dlpack__`).
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        guarded(|| {
            let home = self.location(py)?;
            self.handle(py, &home, false)?
                .__dlpack__(py, stream, max_version, dl_device, copy)
        })
    }

    /// Adopts the memory of a DLPack producer (any object with `__dlpack__`, or a
    /// capsule) without copying; the location follows the producer's device. `copy=True`
    /// copies; `copy=False` refuses anything that would need a copy (non-contiguous
    /// arrays). Objects with only an array interface go to `from_array`.
    #[staticmethod]
    #[pyo3(signature = (obj, *, copy=None))]
    fn from_dlpack(
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        copy: Option<bool>,
    ) -> PyResult<PyBuffer> {
        guarded(|| {
            let capsule = if obj.is_instance_of::<pyo3::types::PyCapsule>() {
                obj.clone()
            } else if obj.hasattr("__dlpack__")? {
                // Where the producer's memory is decides the stream it must order its
                // work before: locus's own stream on a CUDA or ROCm device; on a SYCL
                // device (DLPack's oneAPI) locus's queue as a dpctl.SyclQueue, which
                // dpctl's and dpnp's arrays make wait for their pending work (a barrier).
                let mut sycl = false;
                let device = match optional_attr(obj, "__dlpack_device__")? {
                    Some(method) => Some(method.call0()?),
                    None => None,
                };
                let stream: Option<Bound<'_, PyAny>> = match device {
                    Some(d) => {
                        let (device_type, device_id) = d.extract::<(i32, i32)>()?;
                        let device = DLDevice {
                            device_type,
                            device_id,
                        };
                        if device_type == dlpack::DL_ONEAPI {
                            sycl = true;
                            let location = dlpack::location_of_device(device)?;
                            Some(crate::usm::queue_of(py, location)?)
                        } else {
                            dlpack::consumer_stream(device)?
                                .map(|s| s.into_pyobject(py).map(|s| s.into_any()))
                                .transpose()?
                        }
                    }
                    None => None,
                };
                let kwargs = PyDict::new(py);
                kwargs.set_item("max_version", (1, 0))?;
                if let Some(c) = copy {
                    kwargs.set_item("copy", c)?;
                }
                if let Some(s) = &stream {
                    kwargs.set_item("stream", s)?;
                }
                let capsule = match obj.call_method("__dlpack__", (), Some(&kwargs)) {
                    Ok(c) => c,
                    // A producer from before DLPack 1.0 takes no max_version or copy
                    // (it does take the stream).
                    Err(e) if e.is_instance_of::<PyTypeError>(py) => {
                        let kwargs = PyDict::new(py);
                        if let Some(s) = &stream {
                            kwargs.set_item("stream", s)?;
                        }
                        obj.call_method("__dlpack__", (), Some(&kwargs))?
                    }
                    Err(e) => return Err(e),
                };
                if let Some(queue) = stream.as_ref().filter(|_| sycl) {
                    // The barrier is on locus's queue; host code may read the memory in
                    // place too (shared USM): wait for it here.
                    queue.call_method0("wait")?;
                }
                capsule
            } else if obj.hasattr("__array_interface__")?
                || obj.hasattr("__cuda_array_interface__")?
            {
                return Self::from_array(py, obj, copy);
            } else {
                return Err(PyTypeError::new_err(format!(
                    "{} has neither __dlpack__ nor an array interface",
                    obj.get_type().name()?
                )));
            };
            let t = dlpack::consume(&capsule)?;
            let dtype = DType::from_dlpack(t.dtype.code, t.dtype.bits, t.dtype.lanes)?;
            let location = dlpack::location_of_device(t.device)?;
            let shape = t
                .shape
                .iter()
                .map(|&n| usize::try_from(n).map_err(|_| PyValueError::new_err("negative extent")))
                .collect::<PyResult<Vec<_>>>()?;
            elements(&shape, dtype.size)?;
            let strides = t
                .strides
                .as_ref()
                .map(|s| {
                    s.iter()
                        .map(|&e| {
                            isize::try_from(e)
                                .ok()
                                .and_then(|e| e.checked_mul(dtype.size as isize))
                                .ok_or_else(|| {
                                    PyValueError::new_err(format!("stride {e} is out of range"))
                                })
                        })
                        .collect::<PyResult<Vec<isize>>>()
                })
                .transpose()?;
            Foreign {
                location,
                device: t.device,
                data: t.data,
                byte_offset: t.byte_offset,
                shape,
                strides,
                dtype,
                read_only: t.read_only,
                keep: Box::new(t.owner),
            }
            .adopt(py, copy)
        })
    }

    /// Adopts the memory of an object with `__array_interface__` (host) or
    /// `__cuda_array_interface__` (the device its `__dlpack_device__` names, else the
    /// device that owns the pointer; its `stream` is waited for first) without copying;
    /// the object is kept alive while locus uses its memory.
    #[staticmethod]
    #[pyo3(signature = (obj, *, copy=None))]
    fn from_array(
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        copy: Option<bool>,
    ) -> PyResult<PyBuffer> {
        guarded(|| {
            let host = optional_attr(obj, "__array_interface__")?;
            let cuda = match host {
                Some(_) => None,
                None => optional_attr(obj, "__cuda_array_interface__")?,
            };
            let (iface, location) = if let Some(i) = host {
                (i, Location::Host)
            } else if let Some(i) = cuda.clone() {
                (i, Location::Cuda(0)) // the device is settled below, from the pointer
            } else {
                return Err(PyTypeError::new_err(format!(
                    "{} has no __array_interface__ or __cuda_array_interface__",
                    obj.get_type().name()?
                )));
            };
            let iface = iface.cast_into::<PyDict>()?;
            let item = |key: &str| iface.get_item(key).ok().flatten().filter(|v| !v.is_none());
            let (ptr, read_only): (usize, bool) = item("data")
            .ok_or_else(|| PyBufferError::new_err("the array interface has no data pointer (buffer-protocol data is not supported)"))?
            .extract()?;
            let location = match location {
                Location::Cuda(_) => {
                    let stream: Option<u64> = item("stream").map(|s| s.extract()).transpose()?;
                    cuda_array_device(py, obj, ptr as u64, stream)?
                }
                other => other,
            };
            if item("mask").is_some() {
                return Err(PyBufferError::new_err("masked arrays are not supported"));
            }
            let typestr: String = item("typestr")
                .ok_or_else(|| PyBufferError::new_err("the array interface has no typestr"))?
                .extract()?;
            let dtype = DType::from_typestr(&typestr)?;
            let shape: Vec<usize> = item("shape")
                .ok_or_else(|| PyBufferError::new_err("the array interface has no shape"))?
                .extract()?;
            let strides: Option<Vec<isize>> = item("strides").map(|s| s.extract()).transpose()?;
            let offset: usize = item("offset")
                .map(|o| o.extract())
                .transpose()?
                .unwrap_or(0);
            let device = dlpack::device_of_location(location, None);
            Foreign {
                location,
                device,
                data: ptr as *mut u8,
                byte_offset: offset as u64,
                shape,
                strides,
                dtype,
                read_only,
                keep: Box::new(obj.clone().unbind()),
            }
            .adopt(py, copy)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (location, replicas) = match self.held_by_call() {
            Some(held) => (held.location, held.replicas),
            None => {
                let store = self.held(py)?;
                (store.location(), store.replicas())
            }
        };
        Ok(format!(
            "locus.Buffer({} {:?} at {}, replicas [{}])",
            self.dtype.name,
            self.dims(),
            location,
            replicas
                .iter()
                .map(|(l, valid)| format!("{l}{}", if *valid { "" } else { " (stale)" }))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}
