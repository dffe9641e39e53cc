//! `locus` for Python: buffers at any location by name, declared access that numpy and
//! every DLPack consumer use without copying, and adoption of foreign memory.
//!
//! The Python package (`python/locus/__init__.py`) re-exports this module.

mod dlpack;
mod dtype;
mod resources;
mod store;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use pyo3::exceptions::{
    PyAttributeError, PyBufferError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use locus::{HostAccess, HostMapping, Location, Memory, Native};

use dlpack::{DLDataType, DLDevice};
use dtype::DType;
use store::{Served, Store};

pyo3::create_exception!(
    _locus,
    LocusError,
    PyRuntimeError,
    "A runtime error from a backend or a missing location; the message names the location, the call and what to do."
);

/// A locus error as a Python exception: bad arguments are `ValueError`, the rest
/// `LocusError`.
fn py_err(e: locus::Error) -> PyErr {
    match e {
        locus::Error::Invalid(_)
        | locus::Error::UnknownLocation { .. }
        | locus::Error::OutOfRange { .. }
        | locus::Error::LengthMismatch { .. } => PyValueError::new_err(e.to_string()),
        other => LocusError::new_err(other.to_string()),
    }
}

fn parse_location(name: &str) -> PyResult<Location> {
    name.trim().parse::<Location>().map_err(py_err)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a handle keeps alive: the serving memory and, where code at the consumer's
/// location runs on the host, a host mapping of it.
struct View {
    memory: Arc<Memory>,
    mapping: Option<HostMapping>,
    consumer: Location,
    dtype: DType,
    shape: Vec<usize>,
    writable: bool,
    /// A write handle counts as a write at its location until it is closed.
    open: AtomicBool,
    in_place: bool,
    route: String,
    /// Made for one export (`copy=True`, another device): the DLPack IS_COPIED flag.
    copied: bool,
}

impl View {
    fn new(
        served: Served,
        consumer: Location,
        dtype: DType,
        shape: Vec<usize>,
        writable: bool,
    ) -> locus::Result<View> {
        let on_host = locus::registry().device(consumer)?.executes_on_host();
        let mapping = match served.mapping {
            Some(m) => Some(m),
            None if on_host && served.memory.host_access() != HostAccess::None => {
                Some(served.memory.map(0..served.memory.len(), writable)?)
            }
            None => None,
        };
        Ok(View {
            memory: served.memory,
            mapping,
            consumer,
            dtype,
            shape,
            writable,
            open: AtomicBool::new(writable),
            in_place: served.in_place,
            route: served.route.to_string(),
            copied: false,
        })
    }

    fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// The DLPack device of the data this view exports: CPU for a host address (a
    /// consumer on the host with a mapping, host memory, an OpenMP initial-device
    /// pointer, or memory only the host mapping reaches), the memory's own device type
    /// for its technology's handle (a USM pointer, a cl_mem, ...).
    fn dl_device(&self) -> DLDevice {
        let own = dlpack::device_of_location(self.memory.location(), Some(self.memory.native()));
        let own_technology = self.memory.location().technology() == self.consumer.technology();
        let host_address = match self.memory.native() {
            Native::Host { .. } => true,
            _ if self.consumer == Location::Host => self.mapping.is_some(),
            _ if own_technology => own.device_type == dlpack::DL_CPU,
            _ => self.mapping.is_some(),
        };
        if host_address {
            DLDevice {
                device_type: dlpack::DL_CPU,
                device_id: 0,
            }
        } else {
            own
        }
    }

    /// (data handle, byte offset) as DLPack wants them for this view.
    fn dl_data(&self) -> (*mut std::ffi::c_void, u64) {
        let host_address = self.dl_device().device_type == dlpack::DL_CPU;
        if let (true, Some(m)) = (host_address, &self.mapping) {
            return (m.as_ptr().cast_mut().cast(), 0);
        }
        match self.memory.native() {
            Native::Host { ptr } => (ptr.cast(), 0),
            Native::OpenMp { ptr, .. } => (ptr.cast(), 0),
            Native::OpenCl { mem, offset } => (mem.cast(), *offset as u64),
            Native::Sycl { ptr, .. } => (ptr.cast(), 0),
            Native::Cuda { ptr, .. } | Native::Hip { ptr, .. } => {
                (*ptr as *mut std::ffi::c_void, 0)
            }
            // Opaque: the address of the `wgpu::Buffer`, for Rust code in this process.
            Native::WebGpu { buffer, offset } => {
                (std::ptr::from_ref(&**buffer).cast_mut().cast(), *offset)
            }
            #[allow(unreachable_patterns)]
            _ => (std::ptr::null_mut(), 0),
        }
    }
}

/// A declared access: what `Buffer.access` / `access_mut` return. numpy consumes it
/// without copying (`np.asarray(h)`, `np.from_dlpack(h)`) where code at its location
/// runs on the host; every location exports it through DLPack. It keeps the data alive
/// for as long as it (or any array made from it) lives, whichever of the buffer and the
/// array goes first.
#[pyclass(frozen, module = "locus", name = "Handle")]
struct Handle {
    view: Arc<View>,
}

#[pymethods]
impl Handle {
    /// Where the consumer runs (the location passed to `access`).
    #[getter]
    fn location(&self) -> String {
        self.view.consumer.to_string()
    }

    /// Where the serving memory lives.
    #[getter]
    fn memory_location(&self) -> String {
        self.view.memory.location().to_string()
    }

    /// True when nothing was copied to serve this access.
    #[getter]
    fn in_place(&self) -> bool {
        self.view.in_place
    }

    /// How the data was made available.
    #[getter]
    fn route(&self) -> String {
        self.view.route.clone()
    }

    /// True for a read handle (`access`): writing through it is refused by numpy.
    #[getter]
    fn readonly(&self) -> bool {
        !self.view.writable
    }

    /// The element type's name.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.view.dtype.name
    }

    /// The shape.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.view.shape)
    }

    /// Size in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.view.len() * self.view.dtype.size
    }

    /// The host address of the first element, when code at this location runs on the host.
    #[getter]
    fn ptr(&self) -> Option<usize> {
        self.view.mapping.as_ref().map(|m| m.as_ptr() as usize)
    }

    /// numpy's array interface (version 3), for handles whose location runs on the
    /// host; other handles have none (use DLPack, or `access("host")`).
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let Some(m) = &self.view.mapping else {
            return Err(PyAttributeError::new_err(format!(
                "memory at {} is not host-addressable from {}: call access(\"host\") for a host view, or use DLPack",
                self.view.memory.location(),
                self.view.consumer
            )));
        };
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", PyTuple::new(py, &self.view.shape)?)?;
        d.set_item("typestr", self.view.dtype.typestr())?;
        d.set_item("data", (m.as_ptr() as usize, !self.view.writable))?;
        d.set_item("strides", py.None())?;
        Ok(d)
    }

    /// CUDA's array interface (version 3), for handles of CUDA device memory.
    #[getter]
    fn __cuda_array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let Native::Cuda { ptr, .. } = self.view.memory.native() else {
            return Err(PyAttributeError::new_err(format!(
                "memory at {} is not CUDA memory",
                self.view.memory.location()
            )));
        };
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", PyTuple::new(py, &self.view.shape)?)?;
        d.set_item("typestr", self.view.dtype.typestr())?;
        d.set_item("data", (*ptr as usize, !self.view.writable))?;
        d.set_item("strides", py.None())?;
        // locus waits for its work before handing out a handle: no stream to order on.
        d.set_item("stream", py.None())?;
        Ok(d)
    }

    /// numpy calls this when there is no array interface: a clear error instead of an
    /// object array.
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__(
        &self,
        dtype: Option<Bound<'_, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (dtype, copy);
        Err(PyTypeError::new_err(format!(
            "a handle at {} holds memory at {} that host code cannot address; \
             call buffer.access(\"host\") (or access_mut) for a numpy view",
            self.view.consumer,
            self.view.memory.location()
        )))
    }

    /// `(device_type, device_id)` as DLPack numbers them: CPU 1, CUDA 2 (3 pinned, 13
    /// managed), OpenCL 4, Vulkan 7 (WebGPU), ROCm 10 (11 pinned), ext_dev 12 (OpenMP
    /// offload), oneAPI 14 (SYCL).
    fn __dlpack_device__(&self) -> (i32, i32) {
        let d = self.view.dl_device();
        (d.device_type, d.device_id)
    }

    /// A DLPack capsule of this handle's data. `max_version` >= (1, 0) gets a versioned
    /// capsule (read handles carry the read-only flag); `stream` (device consumers):
    /// locus finishes its queued work first, so the data is ready on any stream (`-1`
    /// skips that); `dl_device` other than this handle's, or `copy=True`, exports a copy
    /// made at that device (`copy=False` refuses to).
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let own = self.view.dl_device();
        let wanted = dl_device.map(|(t, i)| DLDevice {
            device_type: t,
            device_id: i,
        });
        let needs_copy = copy == Some(true) || wanted.is_some_and(|w| w != own);
        let view = if needs_copy {
            if copy == Some(false) {
                return Err(PyBufferError::new_err(format!(
                    "the data is on DLPack device {:?}, {:?} was asked for with copy=False",
                    (own.device_type, own.device_id),
                    dl_device
                )));
            }
            let target = dlpack::location_of_device(wanted.unwrap_or(own))?;
            Arc::new(
                py.detach(|| copy_view(&self.view, target))
                    .map_err(py_err)?,
            )
        } else {
            Arc::clone(&self.view)
        };
        let device = view.dl_device();
        match &stream {
            Some(s) if !s.is_none() && device.device_type == dlpack::DL_CPU => {
                return Err(PyBufferError::new_err(
                    "stream must be None for CPU data (the DLPack protocol)",
                ))
            }
            Some(s) if s.extract::<i64>().ok() == Some(-1) => {}
            _ => {
                if device.device_type != dlpack::DL_CPU {
                    let memory = Arc::clone(&view.memory);
                    py.detach(|| memory.device().synchronize())
                        .map_err(py_err)?;
                }
            }
        }
        let (data, byte_offset) = view.dl_data();
        if device.device_type == dlpack::DL_VULKAN {
            remember_wgpu_export(data as usize, byte_offset, &view);
        }
        let description = dlpack::Description {
            data,
            device,
            dtype: DLDataType {
                code: view.dtype.code,
                bits: (view.dtype.size * 8) as u8,
                lanes: 1,
            },
            byte_offset,
            read_only: !view.writable,
            copied: view.copied,
        };
        let shape = view.shape.iter().map(|&s| s as i64).collect();
        let export = dlpack::Export { keep: view, shape };
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        dlpack::capsule(py, description, export, versioned)
    }

    /// Ends the write this handle declared (arrays made from it keep the memory alive,
    /// but later writes through them are no longer tracked). Read handles: no effect.
    fn close(&self) {
        self.view.open.store(false, Ordering::SeqCst);
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) {
        self.close();
    }

    fn __repr__(&self) -> String {
        format!(
            "locus.Handle({} {} {:?} at {}, memory at {}, {}{})",
            if self.view.writable { "write" } else { "read" },
            self.view.dtype.name,
            self.view.shape,
            self.view.consumer,
            self.view.memory.location(),
            if self.view.in_place {
                "in place"
            } else {
                "replica"
            },
            if self.view.mapping.is_some() {
                ", host-addressable"
            } else {
                ""
            }
        )
    }
}

/// One WebGPU export: the opaque data handle (the `wgpu::Buffer`'s address, shared by
/// every pool block of that buffer) and the byte range of the buffer it covers.
struct WgpuExport {
    data: usize,
    range: std::ops::Range<u64>,
    view: Weak<View>,
}

/// WebGPU buffers exported through DLPack: a Vulkan tensor coming back is adopted only
/// when it lies inside one of these (a foreign VkBuffer cannot become a wgpu buffer).
static WGPU_EXPORTS: Mutex<Vec<WgpuExport>> = Mutex::new(Vec::new());

fn remember_wgpu_export(data: usize, byte_offset: u64, view: &Arc<View>) {
    let mut exports = lock(&WGPU_EXPORTS);
    exports.retain(|e| e.view.strong_count() > 0);
    exports.push(WgpuExport {
        data,
        range: byte_offset..byte_offset + view.memory.len() as u64,
        view: Arc::downgrade(view),
    });
}

/// The export whose memory holds `bytes` bytes at `byte_offset` of buffer `data` (so
/// that adopting it keeps exactly that memory alive).
fn exported_wgpu_view(data: usize, byte_offset: u64, bytes: u64) -> Option<Arc<View>> {
    lock(&WGPU_EXPORTS)
        .iter()
        .filter(|e| e.data == data)
        .filter(|e| e.range.start <= byte_offset && byte_offset + bytes <= e.range.end)
        .find_map(|e| e.view.upgrade())
}

/// A copy of `view`'s data in new memory at `target`, for one export.
fn copy_view(view: &View, target: Location) -> locus::Result<View> {
    let bytes = view.memory.len();
    let fresh = Arc::new(Memory::new(target, bytes)?);
    let route = view.memory.copy_to(0, &fresh, 0, bytes)?;
    let served = Served {
        memory: fresh,
        in_place: false,
        route,
        mapping: None,
    };
    let mut copy = View::new(
        served,
        target,
        view.dtype,
        view.shape.clone(),
        view.writable,
    )?;
    copy.copied = true;
    copy.open.store(false, Ordering::SeqCst);
    Ok(copy)
}

/// A typed array with a home location and coherent replicas (`locus::Buffer`).
///
/// `Buffer("opencl:0", 1000, dtype="float32", fill=3.1415)` makes 1000 floats on OpenCL
/// device 0; `access(location)` / `access_mut(location)` declare where they will be used.
#[pyclass(frozen, module = "locus", name = "Buffer")]
struct PyBuffer {
    store: Mutex<Store>,
    dtype: DType,
    shape: Vec<usize>,
    readonly: bool,
    /// Write handles handed out; while one is open, its location holds the newest data.
    writers: Mutex<Vec<Weak<View>>>,
}

fn shape_of(n: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
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
    fn wrap(store: Store, dtype: DType, shape: Vec<usize>, readonly: bool) -> PyBuffer {
        PyBuffer {
            store: Mutex::new(store),
            dtype,
            shape,
            readonly,
            writers: Mutex::new(Vec::new()),
        }
    }

    /// Re-declares the write of the open write handles (their location holds the newest
    /// data; they all share one location: a second one is refused) and returns it.
    fn sync_writers(&self, store: &mut Store) -> locus::Result<Option<Location>> {
        let mut writers = lock(&self.writers);
        writers.retain(|w| w.upgrade().is_some_and(|v| v.open.load(Ordering::SeqCst)));
        let at = writers.iter().find_map(|w| w.upgrade()).map(|v| v.consumer);
        if let Some(location) = at {
            store.declare_write(location)?;
        }
        Ok(at)
    }

    fn handle(&self, py: Python<'_>, location: &str, write: bool) -> PyResult<Handle> {
        let location = parse_location(location)?;
        if write && self.readonly {
            return Err(PyValueError::new_err(
                "this buffer adopted read-only memory (its producer said so): access_mut is refused; copy() it first",
            ));
        }
        let view = py
            .detach(|| -> locus::Result<View> {
                let mut store = lock(&self.store);
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
                View::new(served, location, self.dtype, self.shape.clone(), write)
            })
            .map_err(py_err)?;
        let view = Arc::new(view);
        if write {
            lock(&self.writers).push(Arc::downgrade(&view));
        }
        Ok(Handle { view })
    }

    fn numpy<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyModule>> {
        py.import("numpy").map_err(|e| {
            PyRuntimeError::new_err(format!("this needs numpy (pip install numpy): {e}"))
        })
    }
}

/// Memory made elsewhere, about to be adopted (from DLPack or an array interface).
struct Foreign {
    location: Location,
    device: DLDevice,
    data: *mut u8,
    byte_offset: u64,
    shape: Vec<usize>,
    /// Strides in bytes (`None`: compact row-major).
    strides: Option<Vec<isize>>,
    dtype: DType,
    read_only: bool,
    /// Keeps the producer's memory alive; dropped when locus no longer uses it.
    keep: Box<dyn Send + Sync>,
}

/// The bytes of a strided host array, gathered in row-major order.
///
/// # Safety
/// `base` plus every offset the shape and strides reach must address readable memory.
unsafe fn gather(base: *const u8, shape: &[usize], strides: &[isize], size: usize) -> Vec<u8> {
    let len: usize = shape.iter().product();
    let mut out = Vec::with_capacity(len * size);
    let mut index = vec![0usize; shape.len()];
    for _ in 0..len {
        let offset: isize = index
            .iter()
            .zip(strides)
            .map(|(&i, &s)| i as isize * s)
            .sum();
        // SAFETY: per the caller's contract the element at `offset` is readable.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(base.offset(offset), size) });
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

fn is_compact(shape: &[usize], strides: &[isize], size: usize) -> bool {
    let mut expected = size as isize;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n != 1 && s != expected {
            return false;
        }
        expected *= n as isize;
    }
    true
}

impl Foreign {
    fn adopt(self, py: Python<'_>, copy: Option<bool>) -> PyResult<PyBuffer> {
        let Foreign {
            location,
            device,
            data,
            byte_offset,
            shape,
            strides,
            dtype,
            read_only,
            keep,
        } = self;
        locus::registry().device(location).map_err(py_err)?;
        let len: usize = shape.iter().product();
        let compact = strides
            .as_ref()
            .is_none_or(|s| len == 0 || is_compact(&shape, s, dtype.size));
        let first = data.wrapping_add(byte_offset as usize);
        let aligned = location != Location::Host || (first as usize).is_multiple_of(dtype.size);
        if !compact || !aligned {
            let what = if compact {
                "misaligned"
            } else {
                "non-contiguous"
            };
            if copy != Some(true) {
                return Err(PyBufferError::new_err(format!(
                    "the array is {what} (strides {strides:?} bytes, shape {shape:?}): locus adopts only contiguous, \
                     aligned memory without copying; pass copy=True for a contiguous copy"
                )));
            }
            if location != Location::Host {
                return Err(PyBufferError::new_err(format!(
                    "the array at {location} is {what}: locus adopts only contiguous device memory; \
                     make it contiguous on its device first"
                )));
            }
            let default_strides = {
                let mut s = vec![0isize; shape.len()];
                let mut acc = dtype.size as isize;
                for d in (0..shape.len()).rev() {
                    s[d] = acc;
                    acc *= shape[d] as isize;
                }
                s
            };
            let strides = strides.unwrap_or(default_strides);
            // SAFETY: the producer vouches that its shape and strides address its memory,
            // which `keep` holds alive until after this copy.
            let bytes = unsafe { gather(first, &shape, &strides, dtype.size) };
            drop(keep);
            let store = py
                .detach(|| Store::from_bytes(Location::Host, &bytes, dtype.size))
                .map_err(py_err)?;
            return Ok(PyBuffer::wrap(store, dtype, shape, false));
        }
        let (native, keep): (Native, Box<dyn Send + Sync>) = match location {
            // A wgpu buffer locus exported: the same buffer (another handle to it).
            Location::WebGpu(_) => {
                match exported_wgpu_view(data as usize, byte_offset, (len * dtype.size) as u64) {
                    Some(view) => match view.memory.native().duplicate() {
                        Native::WebGpu { buffer, .. } => (
                            Native::WebGpu {
                                buffer,
                                offset: byte_offset,
                            },
                            Box::new((keep, view)),
                        ),
                        _ => (
                            dlpack::native_for(location, device, data, byte_offset)?,
                            keep,
                        ),
                    },
                    None => (
                        dlpack::native_for(location, device, data, byte_offset)?,
                        keep,
                    ),
                }
            }
            // A cl_mem of another context (another library's) cannot be used on locus'
            // queue; a SYCL pointer must be USM of the device's context (its kind decides
            // how the host reaches it).
            Location::OpenCl(_) => {
                let cl = locus::device_as::<locus::backends::opencl::OpenClDevice>(location)
                    .map_err(py_err)?;
                // SAFETY: a DLPack producer of kDLOpenCL hands out a live cl_mem.
                if !unsafe { cl.owns(data.cast()) } {
                    return Err(PyBufferError::new_err(format!(
                        "the cl_mem belongs to another OpenCL context than {location}'s (locus opens \
                         each device in its own context): copy it through the host"
                    )));
                }
                (
                    dlpack::native_for(location, device, data, byte_offset)?,
                    keep,
                )
            }
            Location::Sycl(_) => {
                let sycl = locus::device_as::<locus::backends::sycl::SyclDevice>(location)
                    .map_err(py_err)?;
                let Some(kind) = sycl.pointer_kind(data) else {
                    return Err(PyBufferError::new_err(format!(
                        "the pointer is not USM of {location}'s SYCL context: copy it through the host"
                    )));
                };
                let ptr = data.wrapping_add(byte_offset as usize);
                (Native::Sycl { ptr, kind }, keep)
            }
            _ => (
                dlpack::native_for(location, device, data, byte_offset)?,
                keep,
            ),
        };
        // SAFETY: the producer keeps `len * size` bytes alive at `native` until `keep` is
        // dropped, which the deleter does; alignment was checked above for host memory.
        let store = unsafe { Store::adopt(location, native, len, dtype.size, move |_| drop(keep)) }
            .map_err(py_err)?;
        if copy == Some(true) {
            let copied = py.detach(|| store.to_location(location)).map_err(py_err)?;
            return Ok(PyBuffer::wrap(copied, dtype, shape, false));
        }
        Ok(PyBuffer::wrap(store, dtype, shape, read_only))
    }
}

#[pymethods]
impl PyBuffer {
    /// `n` elements (an int or a shape tuple) of `dtype` at `location` (`"host"`,
    /// `"opencl:0"`, ...), zeroed or each equal to `fill`.
    #[new]
    #[pyo3(signature = (location, n, dtype=None, fill=None))]
    fn new(
        py: Python<'_>,
        location: &str,
        n: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        fill: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyBuffer> {
        let location = parse_location(location)?;
        let dtype = match dtype {
            Some(d) => dtype::dtype_of(d)?,
            None => DType::from_name("float32")?,
        };
        let shape = shape_of(n)?;
        let len: usize = shape.iter().product();
        let pattern = fill.map(|f| dtype.encode(f)).transpose()?;
        let store = py
            .detach(|| match pattern {
                Some(p) => Store::filled(location, len, &p),
                None => Store::zeroed(location, len, dtype.size),
            })
            .map_err(py_err)?;
        Ok(PyBuffer::wrap(store, dtype, shape, false))
    }

    /// The home location (where the buffer was made, or moved to).
    #[getter]
    fn location(&self) -> String {
        lock(&self.store).location().to_string()
    }

    /// The element type's name.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name
    }

    /// The shape.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.shape)
    }

    /// Number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.shape.iter().product()
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
    fn bytes_moved(&self) -> u64 {
        lock(&self.store).bytes_moved()
    }

    /// Every copy the buffer holds: `[(location, valid), ...]`.
    fn replicas(&self) -> Vec<(String, bool)> {
        lock(&self.store)
            .replicas()
            .into_iter()
            .map(|(l, v)| (l.to_string(), v))
            .collect()
    }

    fn __len__(&self) -> usize {
        self.shape.first().copied().unwrap_or(1)
    }

    /// Declares a read at `location`: in place when the data there is reachable from it,
    /// else a cached replica. The handle is read-only.
    #[pyo3(signature = (location="host"))]
    fn access(&self, py: Python<'_>, location: &str) -> PyResult<Handle> {
        self.handle(py, location, false)
    }

    /// Declares a write at `location` (the current data is there first). While the
    /// handle is open, its location holds the newest data: reads elsewhere copy from it.
    #[pyo3(signature = (location="host"))]
    fn access_mut(&self, py: Python<'_>, location: &str) -> PyResult<Handle> {
        self.handle(py, location, true)
    }

    /// A new numpy array holding a copy of the elements.
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let np = Self::numpy(py)?;
        let h = Py::new(py, self.handle(py, "host", false)?)?;
        np.call_method1("array", (h,))
    }

    /// The elements as a Python list, read by locus itself (not through numpy).
    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let bytes = py
            .detach(|| {
                let mut store = lock(&self.store);
                self.sync_writers(&mut store)?;
                store.to_bytes()
            })
            .map_err(py_err)?;
        let items = bytes
            .bytes()
            .chunks_exact(self.dtype.size)
            .map(|b| self.dtype.decode(py, b))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Sets every element to `value`, written by locus where the newest data lives.
    fn fill(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.readonly {
            return Err(PyValueError::new_err(
                "this buffer adopted read-only memory",
            ));
        }
        let pattern = self.dtype.encode(value)?;
        py.detach(|| {
            let mut store = lock(&self.store);
            let at = self.sync_writers(&mut store)?.unwrap_or(store.location());
            // The mapping (if any) ends here: the fill goes through the backend.
            let Served { memory, .. } = store.access_mut(at)?;
            memory.fill(0..memory.len(), &pattern)
        })
        .map_err(py_err)
    }

    /// A new buffer at `location` (default: this one's home) with a copy of the data.
    #[pyo3(signature = (location=None))]
    fn copy(&self, py: Python<'_>, location: Option<&str>) -> PyResult<PyBuffer> {
        let target = location.map(parse_location).transpose()?;
        let store = py
            .detach(|| {
                let mut store = lock(&self.store);
                self.sync_writers(&mut store)?;
                store.to_location(target.unwrap_or(store.location()))
            })
            .map_err(py_err)?;
        Ok(PyBuffer::wrap(store, self.dtype, self.shape.clone(), false))
    }

    /// Moves the data to `location`, which becomes the home; other copies are freed
    /// (handles already given out keep theirs alive).
    fn move_to(&self, py: Python<'_>, location: &str) -> PyResult<()> {
        let location = parse_location(location)?;
        py.detach(|| {
            let mut store = lock(&self.store);
            if let Some(w) = self.sync_writers(&mut store)? {
                return Err(locus::Error::Invalid(format!(
                    "a write handle at {w} is still open: close it before moving the buffer"
                )));
            }
            store.move_to(location)
        })
        .map_err(py_err)
    }

    /// `__dlpack_device__` of a read at the home location.
    fn __dlpack_device__(&self, py: Python<'_>) -> PyResult<(i32, i32)> {
        let home = self.location();
        Ok(self.handle(py, &home, false)?.__dlpack_device__())
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
        let home = self.location();
        self.handle(py, &home, false)?
            .__dlpack__(py, stream, max_version, dl_device, copy)
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
        let capsule = if obj.is_instance_of::<pyo3::types::PyCapsule>() {
            obj.clone()
        } else if obj.hasattr("__dlpack__")? {
            let kwargs = PyDict::new(py);
            kwargs.set_item("max_version", (1, 0))?;
            if let Some(c) = copy {
                kwargs.set_item("copy", c)?;
            }
            match obj.call_method("__dlpack__", (), Some(&kwargs)) {
                Ok(c) => c,
                // A producer from before DLPack 1.0 takes no keywords.
                Err(e) if e.is_instance_of::<PyTypeError>(py) => obj.call_method0("__dlpack__")?,
                Err(e) => return Err(e),
            }
        } else if obj.hasattr("__array_interface__")? || obj.hasattr("__cuda_array_interface__")? {
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
        let strides = t.strides.as_ref().map(|s| {
            s.iter()
                .map(|&e| e as isize * dtype.size as isize)
                .collect()
        });
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
    }

    /// Adopts the memory of an object with `__array_interface__` (host) or
    /// `__cuda_array_interface__` (CUDA device 0, or the device its `__dlpack_device__`
    /// names) without copying; the object is kept alive while locus uses its memory.
    #[staticmethod]
    #[pyo3(signature = (obj, *, copy=None))]
    fn from_array(
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        copy: Option<bool>,
    ) -> PyResult<PyBuffer> {
        let (iface, location) = if let Ok(i) = obj.getattr("__array_interface__") {
            (i, Location::Host)
        } else if let Ok(i) = obj.getattr("__cuda_array_interface__") {
            let id = obj
                .call_method0("__dlpack_device__")
                .and_then(|d| d.extract::<(i32, u32)>())
                .map_or(0, |(_, id)| id);
            (i, Location::Cuda(id))
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
    }

    fn __repr__(&self) -> String {
        let store = lock(&self.store);
        format!(
            "locus.Buffer({} {:?} at {}, replicas [{}])",
            self.dtype.name,
            self.shape,
            store.location(),
            store
                .replicas()
                .iter()
                .map(|(l, valid)| format!("{l}{}", if *valid { "" } else { " (stale)" }))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The locations this machine has, host first (`["host", "openmp:0", "opencl:0", ...]`).
#[pyfunction]
fn available() -> Vec<String> {
    locus::available().iter().map(|l| l.to_string()).collect()
}

/// Per technology: its locations here, or why it has none.
/// `{"opencl": {"locations": ["opencl:0"], "missing": None, "skipped": []}, ...}`.
#[pyfunction]
fn info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let registry = locus::registry();
    let out = PyDict::new(py);
    for t in locus::Technology::ALL {
        let entry = PyDict::new(py);
        let locations: Vec<String> = registry
            .locations()
            .into_iter()
            .filter(|l| l.technology() == t)
            .map(|l| l.to_string())
            .collect();
        entry.set_item("locations", locations)?;
        entry.set_item("missing", registry.missing().get(&t).cloned())?;
        entry.set_item(
            "skipped",
            registry.skipped().get(&t).cloned().unwrap_or_default(),
        )?;
        out.set_item(t.to_string(), entry)?;
    }
    Ok(out)
}

/// The dtypes locus buffers hold.
#[pyfunction]
fn dtypes() -> Vec<&'static str> {
    dtype::DTYPES.iter().map(|d| d.name).collect()
}

/// The DLPack `(device_type, device_id)` of memory at `location`.
#[pyfunction]
fn dlpack_device(location: &str) -> PyResult<(i32, i32)> {
    let d = dlpack::device_of_location(parse_location(location)?, None);
    Ok((d.device_type, d.device_id))
}

/// The compiled part of the `locus` package.
#[pymodule]
fn _locus(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBuffer>()?;
    m.add_class::<Handle>()?;
    m.add_function(wrap_pyfunction!(available, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack_device, m)?)?;
    m.add_function(wrap_pyfunction!(resources::use_pool, m)?)?;
    m.add_function(wrap_pyfunction!(resources::use_upstream, m)?)?;
    m.add_function(wrap_pyfunction!(resources::memory_statistics, m)?)?;
    m.add("LocusError", m.py().get_type::<LocusError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
