//! Queues across libraries: `locus.Queue.from_external` adopts another library's queue
//! or stream (dpctl's `SyclQueue`, pyopencl's `CommandQueue`, CuPy's and PyTorch's
//! streams, or a raw handle with its location), so that locus's work submitted on it is
//! ordered after the library's and the library's later work after locus's, on the device;
//! `Queue.native` and `Queue.to_external` hand a queue out as a raw handle or as the
//! library's own object.

use locus::{AdoptedQueue, NativeQueue, Queue};
use pyo3::exceptions::{PyTypeError, PyValueError};

use super::*;
use crate::events::{failed, wait_interruptibly, PyEvent};

/// A queue adopted from another library, and that library's object (kept alive while
/// the queue is: a CUDA stream dies with its Python object).
pub(crate) struct Adopted {
    pub(crate) queue: AdoptedQueue,
    source: Py<PyAny>,
}

/// The module `obj`'s type comes from (`dpctl._sycl_queue`, `cupy.cuda.stream`, ...).
fn module_of(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .getattr("__module__")
        .and_then(|m| m.extract::<String>())
        .unwrap_or_default()
}

/// Whether the CUDA library of `module` runs on ROCm (HIP streams).
fn on_rocm(py: Python<'_>, module: &str) -> bool {
    let probe = match module {
        "torch" => py
            .import("torch")
            .and_then(|t| t.getattr("version")?.getattr("hip"))
            .map(|hip| !hip.is_none()),
        _ => py
            .import("cupy.cuda.runtime")
            .and_then(|r| r.getattr("is_hip")?.extract::<bool>()),
    };
    probe.unwrap_or(false)
}

/// `locus::adopt_opencl_context` for pyopencl's handles.
pub(crate) fn adopt_opencl(py: Python<'_>, context: usize, device: usize) -> PyResult<Location> {
    crate::detach(py, || {
        // SAFETY: the handles of live pyopencl objects, which the caller's Python
        // references keep alive while this runs; the context is checked to hold the
        // device, and retained.
        unsafe {
            locus::adopt_opencl_context(
                context as *mut std::ffi::c_void,
                device as *mut std::ffi::c_void,
            )
        }
    })
    .map_err(py_err)
}

/// `locus::adopt_sycl_context` for dpctl's references.
pub(crate) fn adopt_sycl(py: Python<'_>, context: usize, device: usize) -> PyResult<Location> {
    crate::detach(py, || {
        // SAFETY: the references of live dpctl objects, which the caller's Python
        // references keep alive while this runs; locus makes references of its own.
        unsafe {
            locus::adopt_sycl_context(
                context as *mut std::ffi::c_void,
                device as *mut std::ffi::c_void,
            )
        }
    })
    .map_err(py_err)
}

/// The native queue `obj` names and the locations it may belong to.
fn native_of(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    location: Option<Location>,
) -> PyResult<(NativeQueue, Vec<Location>)> {
    let module = module_of(obj);
    let root = module.split('.').next().unwrap_or_default().to_string();
    if let Ok(handle) = obj.extract::<u64>() {
        let Some(at) = location else {
            return Err(PyValueError::new_err(
                "Queue.from_external: a raw handle needs its location (location=\"opencl:0\")",
            ));
        };
        let native = NativeQueue::from_raw(at, handle).ok_or_else(|| {
            PyValueError::new_err(format!(
                "{at}: cannot adopt a raw queue handle: {} has no queue locus adopts by number",
                at.technology().name()
            ))
        })?;
        return Ok((native, vec![at]));
    }
    match root.as_str() {
        "dpctl" if obj.hasattr("addressof_ref")? => {
            let ptr: usize = obj.call_method0("addressof_ref")?.extract()?;
            // The queue's own context and device name its location: locus's, or the
            // application's context adopted now.
            let at = match location {
                Some(l) => vec![l],
                None => {
                    let reference =
                        |o: Bound<'_, PyAny>| o.call_method0("addressof_ref")?.extract::<usize>();
                    let context = reference(obj.getattr("sycl_context")?)?;
                    let device = reference(obj.getattr("sycl_device")?)?;
                    vec![adopt_sycl(py, context, device)?]
                }
            };
            Ok((NativeQueue::Sycl(ptr as *mut _), at))
        }
        "pyopencl" if obj.hasattr("int_ptr")? => {
            let ptr: usize = obj.getattr("int_ptr")?.extract()?;
            // The queue's own context and device name its location: locus's, or the
            // application's context adopted now.
            let at = match location {
                Some(l) => vec![l],
                None => {
                    let int_ptr = |o: Bound<'_, PyAny>| o.getattr("int_ptr")?.extract::<usize>();
                    let context = int_ptr(obj.getattr("context")?)?;
                    let device = int_ptr(obj.getattr("device")?)?;
                    vec![adopt_opencl(py, context, device)?]
                }
            };
            Ok((NativeQueue::OpenCl(ptr as *mut _), at))
        }
        "cupy" | "torch" => {
            let (stream, ordinal): (u64, u32) = if root == "cupy" {
                // CuPy's default streams (`Stream.null`, `Stream.ptds`) say device -1:
                // they are the current device's.
                let device: i64 = obj.getattr("device_id")?.extract()?;
                let ordinal = match u32::try_from(device) {
                    Ok(d) => d,
                    Err(_) => py
                        .import("cupy.cuda.runtime")?
                        .call_method0("getDevice")?
                        .extract()?,
                };
                (obj.getattr("ptr")?.extract()?, ordinal)
            } else {
                let index = obj.getattr("device")?.getattr("index")?;
                (
                    obj.getattr("cuda_stream")?.extract()?,
                    if index.is_none() { 0 } else { index.extract()? },
                )
            };
            Ok(if on_rocm(py, &root) {
                (
                    NativeQueue::Hip { stream, ordinal },
                    vec![Location::Hip(ordinal)],
                )
            } else {
                (
                    NativeQueue::Cuda { stream, ordinal },
                    vec![Location::Cuda(ordinal)],
                )
            })
        }
        _ => Err(PyTypeError::new_err(format!(
            "Queue.from_external: expected a dpctl.SyclQueue, a pyopencl.CommandQueue, a \
             cupy.cuda.Stream, a torch.cuda.Stream or a raw handle (int) with location=, \
             got {} from `{module}`",
            obj.get_type().name().map_or("?".into(), |n| n.to_string())
        ))),
    }
}

#[pymethods]
impl PyQueue {
    /// Adopts another library's queue or stream: `dpctl.SyclQueue`,
    /// `pyopencl.CommandQueue`, `cupy.cuda.Stream` / `ExternalStream`,
    /// `torch.cuda.Stream`, or a raw handle (an int: `cl_command_queue`,
    /// `DPCTLSyclQueueRef`, `CUstream`, `hipStream_t`) with its `location`. locus's work
    /// submitted on the returned queue runs after the work the library queued there
    /// before, and the library's later work there runs after locus's, ordered on the
    /// device. The queue must belong to the location's device and to locus's context
    /// there (`Queue().to_external(location)` hands out one that does); otherwise a
    /// `LocusError` names both. The library's object is kept alive while the queue is.
    #[staticmethod]
    #[pyo3(signature = (obj, location = None))]
    fn from_external(
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        location: Option<&str>,
    ) -> PyResult<PyQueue> {
        guarded(|| {
            let location = location.map(parse_location).transpose()?;
            let (native, candidates) = native_of(py, obj, location)?;
            if candidates.is_empty() {
                return Err(LocusError::new_err(format!(
                    "cannot adopt {}: no location of its technology is available here",
                    native.describe()
                )));
            }
            let mut refused = Vec::new();
            for at in candidates {
                // SAFETY: the handle comes from the library's live object (kept alive by
                // the returned queue), or is the caller's raw handle, documented as one
                // that must be live.
                match unsafe { Queue::from_native(at, native.clone()) } {
                    Ok(queue) => {
                        return Ok(PyQueue {
                            inner: queue.queue(),
                            adopted: Some(Arc::new(Adopted {
                                queue,
                                source: obj.clone().unbind(),
                            })),
                        })
                    }
                    Err(e) => refused.push(e.to_string()),
                }
            }
            Err(LocusError::new_err(refused.join("; ")))
        })
    }

    /// The raw runtime queue at `location` as an int: the adopted queue's handle, or the
    /// device's own queue locus submits to there (`cl_command_queue`,
    /// `DPCTLSyclQueueRef`, `CUstream`); `None` where the technology has none.
    fn native(&self, location: &str) -> PyResult<Option<u64>> {
        guarded(|| {
            let at = parse_location(location)?;
            Ok(match self.inner.native_at(at) {
                Some(NativeQueue::OpenCl(q)) | Some(NativeQueue::Sycl(q)) => {
                    Some(q as usize as u64)
                }
                Some(NativeQueue::Cuda { stream, .. }) | Some(NativeQueue::Hip { stream, .. }) => {
                    Some(stream)
                }
                _ => None,
            })
        })
    }

    /// The queue at `location` as its library's own object, for that library's work on
    /// locus's memory: a `dpctl.SyclQueue`, a `pyopencl.CommandQueue` or a
    /// `cupy.cuda.ExternalStream` (`library="torch"`: a `torch.cuda.ExternalStream`). For
    /// an adopted queue, the object it was adopted from.
    #[pyo3(signature = (location, library = None))]
    fn to_external<'py>(
        &self,
        py: Python<'py>,
        location: &str,
        library: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let at = parse_location(location)?;
            if let Some(a) = self.adopted.as_ref().filter(|a| a.queue.location() == at) {
                return Ok(a.source.clone_ref(py).into_bound(py));
            }
            let handle = self.native(location)?;
            let unavailable = || {
                PyValueError::new_err(format!(
                    "{at}: {} has no queue to hand out",
                    at.technology().name()
                ))
            };
            match (at, library) {
                (Location::Sycl(_), None | Some("dpctl")) => crate::usm::queue_of(py, at),
                (Location::OpenCl(_), None | Some("pyopencl")) => {
                    let handle = handle.ok_or_else(unavailable)?;
                    py.import("pyopencl")?
                        .getattr("CommandQueue")?
                        .call_method1("from_int_ptr", (handle, true))
                }
                (Location::Cuda(d) | Location::Hip(d), None | Some("cupy")) => {
                    let handle = handle.ok_or_else(unavailable)?;
                    py.import("cupy.cuda")?
                        .getattr("ExternalStream")?
                        .call1((handle, d))
                }
                (Location::Cuda(d) | Location::Hip(d), Some("torch")) => {
                    let handle = handle.ok_or_else(unavailable)?;
                    py.import("torch.cuda")?
                        .getattr("ExternalStream")?
                        .call1((handle, format!("cuda:{d}")))
                }
                (at, library) => Err(PyValueError::new_err(format!(
                    "{at}: no {} queue object to hand out (OpenCL: pyopencl, SYCL: dpctl, \
                     CUDA and HIP: cupy or torch)",
                    library.unwrap_or(at.technology().name())
                ))),
            }
        })
    }
}

/// A queue (CUDA's stream): work submitted on it runs in the order submitted, after
/// whatever it is also given to wait for. Queues are numbers: cheap to make, equal when
/// the same queue.
#[pyclass(frozen, eq, hash, module = "locus", name = "Queue")]
#[derive(Clone)]
pub(crate) struct PyQueue {
    pub(crate) inner: Queue,
    /// For a queue adopted from another library's (`Queue.from_external`): the adoption
    /// and the library's object, kept alive while this queue is.
    pub(crate) adopted: Option<Arc<Adopted>>,
}

impl PartialEq for PyQueue {
    fn eq(&self, other: &PyQueue) -> bool {
        self.inner == other.inner
    }
}

impl Eq for PyQueue {}

impl std::hash::Hash for PyQueue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.hash(state);
    }
}

#[pymethods]
impl PyQueue {
    /// A new, distinct queue.
    #[new]
    fn new() -> PyQueue {
        PyQueue {
            inner: Queue::new(),
            adopted: None,
        }
    }

    /// The queue's number (unique in the process; the stream column of allocation logs).
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id()
    }

    /// Waits for everything submitted on the queue (the GIL released); a failure of
    /// that work is a `LocusError`. Ctrl-C raises `KeyboardInterrupt` at once (the work
    /// goes on).
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        guarded(|| {
            // One event for everything submitted so far, waited for interruptibly; then
            // the queue's own wait (its failures, an adopted queue's native work).
            if let Some(last) = crate::detach(py, || self.inner.last()) {
                let _ = wait_interruptibly(py, &last)?;
            }
            crate::detach(py, || self.inner.wait()).map_err(failed)
        })
    }

    /// For a queue adopted from another library (`Queue.from_external`): an event that
    /// completes once everything the library queued there so far has (a marker on its
    /// stream or queue, no host wait), as `Memory.release_after` takes it; for locus's
    /// own queues, the last work submitted (`last()`), or an event already done.
    fn marker(&self, py: Python<'_>) -> PyEvent {
        let inner = crate::detach(py, || match &self.adopted {
            Some(adopted) => adopted.queue.marker(),
            None => self.inner.last().unwrap_or_else(locus::Event::done),
        });
        PyEvent { inner }
    }

    /// The last work submitted on the queue while it may still run, else `None`.
    fn last(&self, py: Python<'_>) -> Option<PyEvent> {
        crate::detach(py, || self.inner.last()).map(|inner| PyEvent { inner })
    }

    fn __repr__(&self) -> String {
        match &self.adopted {
            Some(a) => format!(
                "<locus.Queue {} adopted from {} at {}>",
                self.inner.id(),
                a.queue.native().describe(),
                a.queue.location()
            ),
            None => format!("<locus.Queue {}>", self.inner.id()),
        }
    }
}
