//! `locus.Memory` and `locus.Mirror`: umem's raw allocations and connections from Python
//! (`aligned_alloc`, `aligned_origin`, `calloc`, `set`, `copy_to` / `copy_from`,
//! `is_accessible_from`, `connect` / `sync` / `update` / `disconnect`), with numpy
//! viewing memory the host addresses in place.

use locus::mirror::{self, Mirror};
use pyo3::types::PyBytes;

use super::*;
use crate::events::{events_of, PyEvent};
use crate::mr::PyResource;
use crate::queues::PyQueue;

/// One untyped allocation at a location (umem's address in its context).
#[pyclass(frozen, module = "locus", name = "Memory")]
pub(crate) struct PyMemory {
    inner: Arc<Memory>,
    /// The host mapping numpy views, for memory the host reaches by mapping (an OpenCL
    /// buffer on a CPU device): made at the first view, kept while this object lives.
    mapping: Mutex<Option<HostMapping>>,
    /// Given back with `release_after`: every use is refused from then on.
    released: AtomicBool,
    /// Reachable from elsewhere in Python (a numpy view, a connection, another
    /// `Memory` object of the same allocation): `release_after` is refused, since the
    /// memory could be used after the pool handed it out again.
    shared: AtomicBool,
}

impl PyMemory {
    pub(crate) fn wrap(inner: Arc<Memory>) -> PyMemory {
        PyMemory {
            inner,
            mapping: Mutex::new(None),
            released: AtomicBool::new(false),
            shared: AtomicBool::new(false),
        }
    }

    /// A second Python object of an allocation another object also reaches.
    pub(crate) fn wrap_shared(inner: Arc<Memory>) -> PyMemory {
        let m = PyMemory::wrap(inner);
        m.shared.store(true, Ordering::Relaxed);
        m
    }

    /// The memory, unless it was given back.
    pub(crate) fn mem(&self) -> PyResult<&Arc<Memory>> {
        match self.released.load(Ordering::Acquire) {
            false => Ok(&self.inner),
            true => Err(PyValueError::new_err(format!(
                "this memory at {} was given back (release_after); allocate again",
                self.inner.location()
            ))),
        }
    }
}

/// A route kind by its name.
fn route_kind(name: &str) -> PyResult<locus::RouteKind> {
    locus::RouteKind::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "via: no route kind '{name}' (the kinds are {})",
                locus::RouteKind::ALL.map(|k| k.name()).join(", ")
            ))
        })
}

fn route_text(route: Option<locus::Route>) -> Option<String> {
    route.map(|r| r.to_string())
}

#[pymethods]
impl PyMemory {
    /// `nbytes` at `location`, at an address that is a multiple of `alignment` (any
    /// power of two; umem's `aligned_alloc(alignment, nbytes)`).
    #[new]
    #[pyo3(signature = (location, nbytes, alignment = 256))]
    fn new(py: Python<'_>, location: &str, nbytes: usize, alignment: usize) -> PyResult<PyMemory> {
        guarded(|| {
            let at = parse_location(location)?;
            let inner =
                crate::detach(py, || Memory::new_aligned(at, nbytes, alignment)).map_err(py_err)?;
            Ok(PyMemory::wrap(Arc::new(inner)))
        })
    }

    /// `nmemb * size` zeroed bytes at `location` (umem's `calloc`).
    #[staticmethod]
    fn calloc(py: Python<'_>, location: &str, nmemb: usize, size: usize) -> PyResult<PyMemory> {
        let nbytes = nmemb.checked_mul(size).ok_or_else(|| {
            PyValueError::new_err(format!(
                "{location}: calloc of {nmemb} x {size} bytes does not fit in memory sizes"
            ))
        })?;
        let m = PyMemory::new(py, location, nbytes, 64)?;
        m.set(py, 0, None, 0)?;
        Ok(m)
    }

    /// `nbytes` at `location` that other processes on this node open in place with its
    /// `ipc_handle()` (host memory: a POSIX shared memory object; at the host, an OpenMP
    /// device on the host, a SYCL device with system USM, an OpenCL CPU device).
    #[staticmethod]
    fn shared(py: Python<'_>, location: &str, nbytes: usize) -> PyResult<PyMemory> {
        guarded(|| {
            let at = parse_location(location)?;
            let inner = crate::detach(py, || Memory::new_shared(at, nbytes)).map_err(py_err)?;
            Ok(PyMemory::wrap(Arc::new(inner)))
        })
    }

    /// The text another process on this node opens this memory with
    /// (`Memory.open_ipc(text)`); for memory made by `Memory.shared` only.
    fn ipc_handle(&self) -> PyResult<String> {
        guarded(|| Ok(self.mem()?.ipc_handle().map_err(py_err)?.to_string()))
    }

    /// Opens memory another process on this node shared (`Memory.shared`), from its
    /// `ipc_handle()` text: the same pages, in place.
    #[staticmethod]
    fn open_ipc(py: Python<'_>, handle: &str) -> PyResult<PyMemory> {
        guarded(|| {
            let handle = locus::IpcHandle::parse(handle).map_err(py_err)?;
            let inner = crate::detach(py, || Memory::open_ipc(&handle)).map_err(py_err)?;
            Ok(PyMemory::wrap(Arc::new(inner)))
        })
    }

    /// Where it lives.
    #[getter]
    fn location(&self) -> String {
        self.inner.location().to_string()
    }

    /// Its size in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.len()
    }

    /// Its address: the pointer, or the offset in its buffer object for OpenCL and
    /// WebGPU (umem's address).
    #[getter]
    fn address(&self) -> PyResult<u64> {
        Ok(self.mem()?.native().address())
    }

    /// The address of the allocation behind an over-aligned one (umem's
    /// `aligned_origin`; the address itself when no padding was needed).
    #[getter]
    fn aligned_origin(&self) -> PyResult<u64> {
        Ok(self.mem()?.aligned_origin())
    }

    /// How the host reaches it: `"pointer"` (numpy views it in place), `"mapped"` or
    /// `"none"`.
    #[getter]
    fn host_access(&self) -> &'static str {
        match self.inner.host_access() {
            HostAccess::Pointer => "pointer",
            HostAccess::Mapped => "mapped",
            HostAccess::None => "none",
        }
    }

    /// Writes the bytes of `data` (anything with the buffer protocol: bytes, a numpy
    /// array) at `offset`. A C-contiguous host array (`__array_interface__`) is read in
    /// place: a numpy array in pinned memory (`locus.numpy_allocator`) uploads by DMA.
    #[pyo3(signature = (data, offset = 0))]
    fn write(&self, py: Python<'_>, data: &Bound<'_, PyAny>, offset: usize) -> PyResult<()> {
        guarded(|| {
            if let Some((ptr, len)) = contiguous_host_array(data)? {
                let m = self.mem()?;
                let src: &[u8] = match (ptr, len) {
                    (_, 0) => &[],
                    (0, _) => {
                        return Err(PyValueError::new_err(format!(
                            "Memory.write: the array interface gives a NULL data pointer for \
                             {len} bytes; pass an array whose data is allocated"
                        )))
                    }
                    // SAFETY: the array interface promises `len` bytes at `ptr` while
                    // the array lives, and `data` (held here) keeps it alive through the
                    // write.
                    _ => unsafe { std::slice::from_raw_parts(ptr as *const u8, len) },
                };
                return crate::detach(py, || m.write(offset, src)).map_err(py_err);
            }
            let bytes: Bound<'_, PyBytes> = py
                .get_type::<PyBytes>()
                .call1((data,))?
                .cast_into()
                .map_err(PyErr::from)?;
            let (src, m) = (bytes.as_bytes(), self.mem()?);
            crate::detach(py, || m.write(offset, src)).map_err(py_err)
        })
    }

    /// Reads `nbytes` (to the end when `None`) from `offset`.
    #[pyo3(signature = (nbytes = None, offset = 0))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        nbytes: Option<usize>,
        offset: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        guarded(|| {
            let m = self.mem()?;
            let n = nbytes.unwrap_or(m.len().saturating_sub(offset));
            let mut out =
                locus::core::host_memory::zeroed_vec::<u8>(n, "Memory.read").map_err(py_err)?;
            crate::detach(py, || m.read(offset, &mut out)).map_err(py_err)?;
            Ok(PyBytes::new(py, &out))
        })
    }

    /// Sets `nbytes` (to the end when `None`) from `offset` to `byte` (umem's `set`).
    #[pyo3(signature = (byte, nbytes = None, offset = 0))]
    fn set(&self, py: Python<'_>, byte: u8, nbytes: Option<usize>, offset: usize) -> PyResult<()> {
        guarded(|| {
            let m = self.mem()?;
            let end = match nbytes {
                Some(n) => offset.checked_add(n).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "{}: set of {n} bytes at {offset} overflows",
                        m.location()
                    ))
                })?,
                None => m.len(),
            };
            crate::detach(py, || m.fill(offset..end, &[byte])).map_err(py_err)
        })
    }

    /// Copies `nbytes` from `self[offset..]` to `dst[dst_offset..]` on the route the
    /// transfer matrix picks (umem's `copy_to`); returns the route.
    ///
    /// `via` forces a route kind (`"direct"`, `"peer"`, `"mapped"`, `"staged"`: to
    /// compare routes; an error when none of that kind applies).
    #[pyo3(signature = (dst, nbytes, offset = 0, dst_offset = 0, via = None))]
    fn copy_to(
        &self,
        py: Python<'_>,
        dst: &PyMemory,
        nbytes: usize,
        offset: usize,
        dst_offset: usize,
        via: Option<&str>,
    ) -> PyResult<String> {
        guarded(|| {
            let (src, dst) = (self.mem()?, dst.mem()?);
            let via = via.map(route_kind).transpose()?;
            crate::detach(py, || match via {
                Some(kind) => src.copy_to_with(
                    offset,
                    dst,
                    dst_offset,
                    nbytes,
                    locus::CopyOptions::via(locus::Via::Kind(kind)),
                ),
                None => src.copy_to(offset, dst, dst_offset, nbytes),
            })
            .map(|r| r.to_string())
            .map_err(py_err)
        })
    }

    /// Starts copying `nbytes` from `self[offset..]` to `dst[dst_offset..]` and returns
    /// its `Event` at once: after the events in `after`, and after everything submitted
    /// on `queue` before it when one is given. Both memories stay alive until the copy
    /// is done, whatever Python drops meanwhile.
    #[pyo3(signature = (dst, nbytes, offset = 0, dst_offset = 0, after = None, queue = None))]
    #[allow(clippy::too_many_arguments)]
    fn copy_to_async(
        &self,
        py: Python<'_>,
        dst: &PyMemory,
        nbytes: usize,
        offset: usize,
        dst_offset: usize,
        after: Option<&Bound<'_, PyAny>>,
        queue: Option<PyQueue>,
    ) -> PyResult<PyEvent> {
        guarded(|| {
            let (src, dst, after) = (self.mem()?, dst.mem()?, events_of(after)?);
            crate::detach(py, || match queue {
                Some(q) => src.copy_to_async_on(q.inner, offset, dst, dst_offset, nbytes, &after),
                None => src.copy_to_async(offset, dst, dst_offset, nbytes, &after),
            })
            .map(|inner| PyEvent { inner })
            .map_err(py_err)
        })
    }

    /// `nbytes` from the memory resource `mr` (a `locus.mr` class), aligned to
    /// `alignment`; it goes back to `mr` when this object goes. With `queue`, the
    /// allocation is stream-ordered (CUDA's `cudaMallocAsync`): a pool may hand out
    /// memory given back on the same queue while that queue's earlier work still uses
    /// it, so use it in work submitted on `queue`, or after `queue.wait()`.
    #[staticmethod]
    #[pyo3(signature = (mr, nbytes, alignment = 256, queue = None))]
    fn from_resource(
        py: Python<'_>,
        mr: &Bound<'_, PyResource>,
        nbytes: usize,
        alignment: usize,
        queue: Option<PyQueue>,
    ) -> PyResult<PyMemory> {
        guarded(|| {
            let resource = Arc::clone(&mr.get().inner);
            let made = crate::detach(py, || {
                match queue {
                Some(q) if alignment <= locus::ALIGNMENT => Memory::from_resource_on(&resource, nbytes, q.inner),
                Some(_) => Err(locus::Error::Invalid(format!(
                    "{}: a stream-ordered allocation is aligned to {} bytes; alignment {alignment} needs one without a queue",
                    resource.location(),
                    locus::ALIGNMENT
                ))),
                None => Memory::from_resource_aligned(&resource, nbytes, alignment),
            }
            });
            Ok(PyMemory::wrap(Arc::new(made.map_err(py_err)?)))
        })
    }

    /// Gives the memory back to its resource once `event` (the last work using it) is
    /// done, without waiting (CUDA's `cudaFreeAsync`): a pool hands the range out again
    /// at once to an allocation on the same `queue`, to other queues only after the
    /// event. This object is unusable afterwards. Refused when the memory is reachable
    /// from elsewhere in Python (a numpy view, a connection), since that could use it
    /// after the pool handed it out again; memory not from a resource is freed when
    /// its last handle goes.
    fn release_after(&self, queue: PyQueue, event: &PyEvent) -> PyResult<()> {
        let m = self.mem()?;
        if self.shared.load(Ordering::Relaxed) {
            return Err(PyValueError::new_err(format!(
                "{}: this memory is reachable from elsewhere in Python (a numpy view, a connection or another Memory object), so it cannot be given back early; let those go and drop it instead",
                m.location()
            )));
        }
        self.released.store(true, Ordering::Release);
        Arc::clone(m)
            .release_after(queue.inner, event.inner.clone())
            .map_err(py_err)
    }

    /// Copies `nbytes` from `src[src_offset..]` into `self[offset..]` (umem's
    /// `copy_from`); returns the route.
    #[pyo3(signature = (src, nbytes, offset = 0, src_offset = 0))]
    fn copy_from(
        &self,
        py: Python<'_>,
        src: &PyMemory,
        nbytes: usize,
        offset: usize,
        src_offset: usize,
    ) -> PyResult<String> {
        src.copy_to(py, self, nbytes, src_offset, offset, None)
    }

    /// True when code at `location` uses this memory in place (umem's
    /// `is_accessible_from`).
    fn is_accessible_from(&self, location: &str) -> PyResult<bool> {
        guarded(|| Ok(self.mem()?.is_accessible_from(parse_location(location)?)))
    }

    /// True when `other` lives in the same device context (umem's `is_same_context`).
    fn is_same_context(&self, other: &PyMemory) -> bool {
        self.inner.location() == other.inner.location()
    }

    /// Connects the first `nbytes` to `location` (umem's `connect(nbytes, alignment)`):
    /// the paired memory is this memory itself when `location` uses it in place and its
    /// address is a multiple of `alignment` (0: any), else `nbytes` new bytes there,
    /// filled with these.
    #[pyo3(signature = (nbytes, location = "host", alignment = 0))]
    fn connect(
        &self,
        py: Python<'_>,
        nbytes: usize,
        location: &str,
        alignment: usize,
    ) -> PyResult<PyMirror> {
        guarded(|| {
            let (at, source) = (parse_location(location)?, self.mem()?);
            let m = crate::detach(py, || mirror::connect(source, nbytes, at, alignment))
                .map_err(py_err)?;
            self.shared.store(true, Ordering::Relaxed);
            Ok(PyMirror {
                inner: Mutex::new(Some(m)),
            })
        })
    }

    /// numpy's array interface (bytes, `uint8`) where the host reaches the memory in
    /// place: host memory, OpenMP's initial device, SYCL shared or host USM and pinned
    /// GPU memory by address, an OpenCL buffer on a CPU device through a mapping made
    /// at the first view and kept while this object lives. `np.asarray(m).view(np.float64)`
    /// is the memory itself.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let m = self.mem()?;
            self.shared.store(true, Ordering::Relaxed);
            let address = match m.host_access() {
                HostAccess::Pointer => m.native().address() as usize,
                HostAccess::Mapped => {
                    let mut mapping = lock(&self.mapping);
                    if mapping.is_none() {
                        let made = crate::detach(
                            py, || m.map(0..m.len(), true))
                            .map_err(py_err)?;
                        *mapping = Some(made);
                    }
                    mapping.as_ref().map_or(0, |m| m.as_ptr() as usize)
                }
                HostAccess::None => {
                    return Err(PyAttributeError::new_err(format!(
                        "memory at {} is not reachable from the host in place; read() it, or connect() it to the host",
                        m.location()
                    )))
                }
            };
            let d = PyDict::new(py);
            d.set_item("version", 3)?;
            d.set_item("shape", (m.len(),))?;
            d.set_item("typestr", "|u1")?;
            d.set_item("data", (address, false))?;
            Ok(d)
        })
    }

    fn __repr__(&self) -> String {
        match self.released.load(Ordering::Acquire) {
            true => format!(
                "<locus.Memory {} bytes at {}, given back>",
                self.inner.len(),
                self.inner.location()
            ),
            false => format!(
                "<locus.Memory {} bytes at {}, address {:#x}>",
                self.inner.len(),
                self.inner.location(),
                self.inner.native().address()
            ),
        }
    }
}

/// A connection between a source allocation and its paired memory (umem's paired
/// address): `sync(n)` pushes the paired memory to the source, `update(n)` pulls the
/// source into it.
#[pyclass(frozen, module = "locus", name = "Mirror")]
pub(crate) struct PyMirror {
    inner: Mutex<Option<Mirror>>,
}

impl PyMirror {
    fn with<R>(&self, f: impl FnOnce(&Mirror) -> PyResult<R>) -> PyResult<R> {
        match lock(&self.inner).as_ref() {
            Some(m) => f(m),
            None => Err(PyValueError::new_err(
                "this connection was disconnected; connect() again",
            )),
        }
    }
}

#[pymethods]
impl PyMirror {
    /// The paired memory (the source itself when in place).
    #[getter]
    fn memory(&self) -> PyResult<PyMemory> {
        self.with(|m| Ok(PyMemory::wrap_shared(Arc::clone(m.memory()))))
    }

    /// The source allocation.
    #[getter]
    fn source(&self) -> PyResult<PyMemory> {
        self.with(|m| Ok(PyMemory::wrap_shared(Arc::clone(m.source()))))
    }

    /// Where the paired memory is used.
    #[getter]
    fn location(&self) -> PyResult<String> {
        self.with(|m| Ok(m.location().to_string()))
    }

    /// The connected length in bytes.
    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        self.with(|m| Ok(m.len()))
    }

    /// True when no separate copy exists.
    #[getter]
    fn in_place(&self) -> PyResult<bool> {
        self.with(|m| Ok(m.is_in_place()))
    }

    /// Pushes the first `nbytes` (all when `None`) of the paired memory to the source
    /// (umem's `sync`); the route, or `None` in place.
    #[pyo3(signature = (nbytes = None))]
    fn sync(&self, py: Python<'_>, nbytes: Option<usize>) -> PyResult<Option<String>> {
        self.with(|m| {
            let n = nbytes.unwrap_or(m.len());
            crate::detach(py, || m.sync(n))
                .map(route_text)
                .map_err(py_err)
        })
    }

    /// Pulls the first `nbytes` (all when `None`) of the source into the paired memory
    /// (umem's `update`); the route, or `None` in place.
    #[pyo3(signature = (nbytes = None))]
    fn update(&self, py: Python<'_>, nbytes: Option<usize>) -> PyResult<Option<String>> {
        self.with(|m| {
            let n = nbytes.unwrap_or(m.len());
            crate::detach(py, || m.update(n))
                .map(route_text)
                .map_err(py_err)
        })
    }

    /// Ends the connection (umem's `disconnect`): the paired memory is freed when it is a
    /// separate allocation and nothing else holds it.
    fn disconnect(&self) {
        if let Some(m) = lock(&self.inner).take() {
            m.disconnect();
        }
    }
}

/// One copy of a batch as Python gives it: (src, src_offset, dst, dst_offset, nbytes).
type PyCopy<'py> = (
    Bound<'py, PyMemory>,
    usize,
    Bound<'py, PyMemory>,
    usize,
    usize,
);

/// Runs many copies between locus memories, any locations each, and returns when all are
/// done: `copy_batch([(src, src_offset, dst, dst_offset, nbytes), ...])`. Every copy is
/// checked first (ranges; two copies writing the same bytes, or one reading what another
/// writes): on bad input nothing is copied. A runtime's fixed cost is paid once per batch
/// where its queue carries the copies (OpenCL, CUDA, HIP).
#[pyfunction]
pub(crate) fn copy_batch(py: Python<'_>, copies: Vec<PyCopy<'_>>) -> PyResult<()> {
    crate::guarded(|| {
        let batch = copies
            .iter()
            .map(|(src, so, dst, doff, n)| {
                Ok(locus::BatchCopy::new(
                    src.get().mem()?,
                    *so,
                    dst.get().mem()?,
                    *doff,
                    *n,
                ))
            })
            .collect::<PyResult<Vec<_>>>()?;
        crate::detach(py, || locus::copy_batch(&batch)).map_err(py_err)
    })
}

/// The data pointer and byte length of a C-contiguous host array (`__array_interface__`
/// without strides or mask; numpy's and every library following it), else `None`.
fn contiguous_host_array(data: &Bound<'_, PyAny>) -> PyResult<Option<(usize, usize)>> {
    let Ok(iface) = data.getattr("__array_interface__") else {
        return Ok(None);
    };
    let Ok(iface) = iface.cast_into::<PyDict>() else {
        return Ok(None);
    };
    let item = |key: &str| iface.get_item(key).ok().flatten().filter(|v| !v.is_none());
    if item("strides").is_some() || item("mask").is_some() {
        return Ok(None);
    }
    let (Some(data_item), Some(shape), Some(typestr)) =
        (item("data"), item("shape"), item("typestr"))
    else {
        return Ok(None);
    };
    let Ok((ptr, _read_only)) = data_item.extract::<(usize, bool)>() else {
        return Ok(None);
    };
    let shape: Vec<usize> = shape.extract()?;
    let typestr: String = typestr.extract()?;
    let Some(itemsize) = typestr.get(2..).and_then(|n| n.parse::<usize>().ok()) else {
        return Ok(None);
    };
    let len = shape
        .iter()
        .try_fold(itemsize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| PyValueError::new_err("the array's size overflows"))?;
    Ok(Some((ptr, len)))
}
