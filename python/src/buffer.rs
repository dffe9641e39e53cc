//! `locus.Buffer`: a typed buffer at any location, by name.

use super::*;
use crate::writers::Writer;

mod copies;
mod interop;
mod regions;
mod vector;
mod views;

pub(crate) use interop::elements;
pub(crate) use regions::PyRegionIndex;
pub(crate) use views::PyView;

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
    /// The queue its moves go on (`set_queue`), kept alive with its adoption.
    pub(crate) queue: Mutex<Option<crate::queues::PyQueue>>,
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
            queue: Mutex::new(None),
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

#[pymethods]
impl PyBuffer {
    /// `n` elements (an int or a shape tuple) of `dtype` at `location` (`"host"`,
    /// `"opencl:0"`, ...), zeroed or each equal to `fill`, in transfer mode `transfer`
    /// (`"async"`, HAMR's default, `"sync_host"` or `"sync"`; see `set_transfer`), its
    /// moves on `queue` when one is given (see `set_queue`).
    #[new]
    #[pyo3(signature = (location, n, dtype=None, fill=None, transfer="async", queue=None))]
    fn new(
        py: Python<'_>,
        location: &str,
        n: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        fill: Option<&Bound<'_, PyAny>>,
        transfer: &str,
        queue: Option<crate::queues::PyQueue>,
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
            store.set_queue(queue.as_ref().map(|q| q.inner));
            let buffer = PyBuffer::wrap(store, dtype, shape, false);
            *lock(&buffer.queue) = queue;
            Ok(buffer)
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

    /// The queue the buffer's moves go on (HAMR's stream), or `None`.
    #[getter]
    fn queue(&self) -> Option<crate::queues::PyQueue> {
        lock(&self.queue).clone()
    }

    /// Puts the buffer's moves on `queue` (HAMR's `set_stream`; `None`: none): each
    /// starts after the work submitted there before, and later work there comes after
    /// it. With a queue adopted from another library (`Queue.from_external`), the
    /// library's own work on it is ordered with the moves on the device, and
    /// `synchronize()` waits for that queue too.
    fn set_queue(&self, py: Python<'_>, queue: Option<crate::queues::PyQueue>) -> PyResult<()> {
        self.held(py)?.set_queue(queue.as_ref().map(|q| q.inner));
        *lock(&self.queue) = queue;
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
            new_list(
                py,
                elements.len(),
                elements.map(|b| self.dtype.decode(py, b)),
            )
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

/// A list of the `n` items `items` gives, made with `PyList_New` and filled in place: a
/// list that does not fit in memory is a `MemoryError` (pyo3's `PyList::new` panics when
/// `PyList_New` fails, which surfaced as "internal error"); an item's error ends it.
fn new_list<'py>(
    py: Python<'py>,
    n: usize,
    items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
) -> PyResult<Bound<'py, PyList>> {
    let too_many =
        || PyMemoryError::new_err(format!("to_list: a list of {n} elements is too large"));
    let len = pyo3::ffi::Py_ssize_t::try_from(n).map_err(|_| too_many())?;
    // SAFETY: a valid length; NULL means Python ran out of memory and set the error.
    let raw = unsafe { pyo3::ffi::PyList_New(len) };
    if raw.is_null() {
        return Err(PyErr::take(py).unwrap_or_else(too_many));
    }
    // SAFETY: `raw` is a new reference to a list just made; its unset slots are NULL,
    // which the list's deallocation skips, so it may be dropped half filled.
    let list = unsafe { Bound::from_owned_ptr(py, raw) };
    let mut filled = 0;
    for (i, item) in items.take(n).enumerate() {
        let item = item?;
        // SAFETY: `i < n` is a slot of the list; PyList_SetItem steals the reference,
        // on failure too.
        if unsafe { pyo3::ffi::PyList_SetItem(raw, i as pyo3::ffi::Py_ssize_t, item.into_ptr()) }
            != 0
        {
            return Err(PyErr::take(py).unwrap_or_else(too_many));
        }
        filled = i + 1;
    }
    if filled != n {
        // Never hand out a list with empty slots.
        return Err(PyValueError::new_err(format!(
            "to_list: {filled} of {n} elements were read"
        )));
    }
    list.cast_into::<PyList>().map_err(PyErr::from)
}
