//! `locus.Handle`: an access to a buffer at one location, with the array interface, DLPack
//! and the CUDA array interface.

use super::*;

/// A declared access: what `Buffer.access` / `access_mut` return. numpy consumes it
/// without copying (`np.asarray(h)`, `np.from_dlpack(h)`) where code at its location
/// runs on the host; every location exports it through DLPack. It keeps the data alive
/// for as long as it (or any array made from it) lives, whichever of the buffer and the
/// array goes first. Its host view (a mapping, where there is one) is held until the
/// handle is closed, and by each array and export made from it until that goes: a
/// closed handle kept in a variable holds nothing back (WebGPU runs no GPU work on a
/// mapped buffer).
#[pyclass(frozen, module = "locus", name = "Handle")]
pub(crate) struct Handle {
    pub(crate) view: Arc<View>,
    closed: AtomicBool,
    usm: usm::UsmArray,
    /// The buffer's memory objects for dpctl, shared by its read handles.
    usm_cache: Option<Arc<usm::UsmMemoryCache>>,
}

impl Handle {
    pub(crate) fn new(view: Arc<View>, usm_cache: Option<Arc<usm::UsmMemoryCache>>) -> Handle {
        Handle {
            view,
            closed: AtomicBool::new(false),
            usm: usm::UsmArray::default(),
            usm_cache,
        }
    }

    /// The host mapping, or why there is none: no host view from this location, or the
    /// handle is closed.
    fn host_mapping(&self) -> PyResult<Arc<HostMapping>> {
        if self.closed.load(Ordering::SeqCst) && self.view.host_mapped {
            return Err(closed_handle());
        }
        self.view.mapping().ok_or_else(|| {
            PyTypeError::new_err(format!(
                "a handle at {} holds memory at {} that host code cannot address; \
                 call buffer.access(\"host\") (or access_mut) for a numpy view, or use DLPack",
                self.view.consumer,
                self.view.memory.location()
            ))
        })
    }
}

/// What a numpy array made from a handle holds (its `base`): the view's memory and its
/// host mapping, for as long as the array lives, whatever becomes of the handle.
#[pyclass(frozen, module = "locus", name = "_HostView")]
pub(crate) struct HostView {
    view: Arc<View>,
    mapping: Arc<HostMapping>,
}

#[pymethods]
impl HostView {
    /// numpy's array interface (version 3) of the mapped data.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let d = PyDict::new(py);
            d.set_item("version", 3)?;
            d.set_item("shape", PyTuple::new(py, &self.view.shape)?)?;
            d.set_item("typestr", self.view.dtype.typestr())?;
            d.set_item(
                "data",
                (self.mapping.as_ptr() as usize, !self.view.writable),
            )?;
            d.set_item("strides", py.None())?;
            Ok(d)
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<locus host view of {} {:?}, memory at {}>",
            self.view.dtype.name,
            self.view.shape,
            self.view.memory.location()
        )
    }
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
        guarded(|| PyTuple::new(py, &self.view.shape))
    }

    /// Size in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.view.len() * self.view.dtype.size
    }

    /// The OpenCL objects behind this handle, as the integers pyopencl's `from_int_ptr`
    /// takes: `{"mem", "offset", "size", "context", "device", "queue"}`. `mem` is the
    /// `cl_mem` (the data starts `offset` bytes into it: a pool's sub-allocation; make a
    /// sub-buffer of `offset` and `size` then), `queue` locus's in-order queue on the
    /// device (work enqueued there is ordered with locus's own). Retain what you wrap
    /// (`from_int_ptr(..., retain=True)`): the handle owns the memory.
    #[getter]
    fn opencl<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let location = self.view.memory.location();
            let Native::OpenCl { mem, offset } = self.view.memory.native() else {
                return Err(PyAttributeError::new_err(format!(
                    "memory at {location} is not OpenCL memory: access the buffer at an OpenCL location (e.g. access(\"opencl:0\"))"
                )));
            };
            let device = locus::device_as::<locus::backends::opencl::OpenClDevice>(location)
                .map_err(py_err)?;
            let (context, cl_device, queue) = device.raw_handles();
            let d = PyDict::new(py);
            d.set_item("mem", *mem as usize)?;
            d.set_item("offset", *offset)?;
            d.set_item("size", self.view.memory.len())?;
            d.set_item("context", context)?;
            d.set_item("device", cl_device)?;
            d.set_item("queue", queue)?;
            Ok(d)
        })
    }

    /// The OpenMP side of an access at an OpenMP location: `{"ptr", "device", "size"}`,
    /// the device pointer (`omp_target_alloc`'s; a host address on the initial device)
    /// and the OpenMP device number, for your own `target` regions
    /// (`is_device_ptr(ptr) device(device)`).
    #[getter]
    fn openmp<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let location = self.view.memory.location();
            let Native::OpenMp { ptr, device } = self.view.memory.native() else {
                return Err(PyAttributeError::new_err(format!(
                    "memory at {location} is not OpenMP memory: access the buffer at an OpenMP location (e.g. access(\"openmp:0\"))"
                )));
            };
            let d = PyDict::new(py);
            d.set_item("ptr", *ptr as usize)?;
            d.set_item("device", *device)?;
            d.set_item("size", self.view.memory.len())?;
            Ok(d)
        })
    }

    /// WebGPU memory cannot be handed to another WebGPU library (wgpu-py, a browser's
    /// WebGPU): a `wgpu::Buffer` belongs to the device of the instance that made it, and
    /// WebGPU has no way to share one across instances. Always an error saying so, with
    /// the documented path: a host access (`access("host")`: on unified memory, such as
    /// lavapipe or an integrated GPU, the WebGPU buffer itself mapped in place; elsewhere
    /// a host copy), which the other library then uploads itself.
    #[getter]
    fn webgpu(&self) -> PyResult<()> {
        Err(PyAttributeError::new_err(format!(
            "a WebGPU buffer cannot be shared with another WebGPU instance (wgpu-py's, a browser's): WebGPU has no cross-instance sharing; take access(\"host\") of the buffer (the WebGPU memory mapped in place on unified memory, such as lavapipe or an integrated GPU, a host copy elsewhere; zero-copy to numpy either way) and upload that with the other library (memory here is at {})",
            self.view.memory.location()
        )))
    }

    /// The host address of the first element, when code at this location runs on the
    /// host (None elsewhere); a closed handle's host view is given up: `ValueError`.
    #[getter]
    fn ptr(&self) -> PyResult<Option<usize>> {
        match self.host_mapping() {
            Ok(m) => Ok(Some(m.as_ptr() as usize)),
            Err(e) if self.view.host_mapped => Err(e),
            Err(_) => Ok(None),
        }
    }

    /// For handles of SYCL USM memory: the `dpctl.SyclQueue` of the handle's
    /// [`__usm_ndarray__`](Handle::__usm_ndarray__), a queue on locus's own (in-order)
    /// queue of that device. dpnp's "compute follows data" takes it, so `dpnp.asarray(h)`
    /// views the memory without a copy and dpnp's kernels on that array run on locus's
    /// queue, ordered with locus's own work there. Needs dpnp; other handles have none.
    #[getter]
    fn sycl_queue<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            self.usm
                .get(py, &self.view, self.usm_cache.as_deref())?
                .getattr("sycl_queue")
        })
    }

    /// For handles of SYCL USM memory: a `dpnp.tensor.usm_ndarray` over the memory (no
    /// copy; read-only for `access`), the same object on every call. dpnp and dpctl's
    /// `asarray` take it as the array itself. It keeps the memory alive as long as it
    /// lives, like a DLPack export. Needs dpnp (or an older dpctl with `dpctl.tensor`);
    /// other handles have none.
    #[getter]
    fn __usm_ndarray__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| self.usm.get(py, &self.view, self.usm_cache.as_deref()))
    }

    /// dpctl's `__sycl_usm_array_interface__` (version 1), for handles of SYCL USM
    /// memory: the USM pointer, shape and type, and as `syclobj` a `dpctl.SyclQueue` on
    /// locus's own queue of that device (one object per device in the process), so that
    /// the consumer looks the pointer up in the context that owns it
    /// (`dpctl.memory.as_usm_memory(h)` wraps it, no copy). Needs dpctl installed; other
    /// handles have none.
    #[getter]
    fn __sycl_usm_array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| usm::interface(py, &self.view))
    }

    /// CUDA's array interface (version 3), for handles of CUDA device memory.
    #[getter]
    fn __cuda_array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
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
            if let Some(streams) = &self.view.streams {
                streams.name_array_interface();
            }
            Ok(d)
        })
    }

    /// numpy's way in (`np.asarray(h)`): an array over the host view, without copying,
    /// whose `base` holds the view until the array goes (the handle may be closed
    /// before); `dtype` other than the handle's, or `copy=True`, converts or copies.
    /// Memory host code cannot address, or a closed handle: a clear error.
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let mapping = self.host_mapping()?;
            let keeper = Bound::new(
                py,
                HostView {
                    view: Arc::clone(&self.view),
                    mapping,
                },
            )?;
            let numpy = py.import("numpy")?;
            let mut array = numpy.call_method1("asarray", (keeper,))?;
            if let Some(dtype) = dtype.filter(|d| !d.is_none()) {
                if copy == Some(false) && !array.getattr("dtype")?.eq(&dtype)? {
                    return Err(PyValueError::new_err(
                        "copy=False, but the dtype asked for differs from the handle's: a conversion copies",
                    ));
                }
                array = array.call_method1("astype", (dtype,))?;
            } else if copy == Some(true) {
                array = array.call_method0("copy")?;
            }
            Ok(array)
        })
    }

    /// `(device_type, device_id)` as DLPack numbers them: CPU 1, CUDA 2 (3 pinned, 13
    /// managed), OpenCL 4, Vulkan 7 (WebGPU), ROCm 10 (11 pinned), ext_dev 12 (OpenMP
    /// offload), oneAPI 14 (SYCL).
    pub(crate) fn __dlpack_device__(&self) -> (i32, i32) {
        let d = self.view.dl_device();
        (d.device_type, d.device_id)
    }

    /// A DLPack capsule of this handle's data. `max_version` >= (1, 0) gets a versioned
    /// capsule (read handles carry the read-only flag); `stream` (device consumers):
    /// locus finishes its queued work first, so the data is ready on any stream (`-1`
    /// skips that); `dl_device` other than this handle's, or `copy=True`, exports a copy
    /// made at that device (`copy=False` refuses to).
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    pub(crate) fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        self.export_dlpack(py, (stream, max_version, dl_device, copy), None)
    }
}

/// The arguments of `__dlpack__`: stream, max_version, dl_device, copy.
pub(crate) type DlpackArgs<'py> = (
    Option<Bound<'py, PyAny>>,
    Option<(u32, u32)>,
    Option<(i32, i32)>,
    Option<bool>,
);

impl Handle {
    /// A DLPack capsule of this handle's data (see `__dlpack__`), the whole of it, or
    /// the elements of `layout` (a strided view: its offset, shape and strides).
    pub(crate) fn export_dlpack(
        &self,
        py: Python<'_>,
        (stream, max_version, dl_device, copy): DlpackArgs<'_>,
        layout: Option<&locus::Layout>,
    ) -> PyResult<Py<PyAny>> {
        guarded(|| {
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
                Arc::new(crate::detach(py, || copy_view(&self.view, target)).map_err(py_err)?)
            } else {
                Arc::clone(&self.view)
            };
            let device = view.dl_device();
            // A copy exported is the consumer's own: its writes are not the buffer's.
            if let Some(streams) = self.view.streams.as_ref().filter(|_| !needs_copy) {
                if matches!(device.device_type, dlpack::DL_CUDA | dlpack::DL_ROCM) {
                    streams.name_dlpack(stream.as_ref().and_then(|s| s.extract::<i64>().ok()));
                }
            }
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
                        crate::detach(py, || memory.device().synchronize()).map_err(py_err)?;
                    }
                }
            }
            let (data, byte_offset, mapping) = view.dl_data()?;
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
            let (description, export) = match layout {
                None => {
                    let shape = view.shape.iter().map(|&s| s as i64).collect();
                    (description, dlpack::Export::new((view, mapping), shape))
                }
                Some(l) => {
                    let skip = (l.offset() as u64).saturating_mul(view.dtype.size as u64);
                    let description = dlpack::Description {
                        byte_offset: description.byte_offset.saturating_add(skip),
                        ..description
                    };
                    let dims = |v: &[usize]| v.iter().map(|&n| n as i64).collect();
                    let export = dlpack::Export::strided(
                        (view, mapping),
                        dims(l.shape()),
                        dims(l.strides()),
                    );
                    (description, export)
                }
            };
            let versioned = max_version.is_some_and(|(major, _)| major >= 1);
            dlpack::capsule(py, description, export, versioned)
        })
    }
}

#[pymethods]
impl Handle {
    /// Ends the access: the write this handle declared ends (arrays made from it keep
    /// the memory alive, but later writes through them are no longer tracked), and the
    /// handle gives up its host view (a mapping ends with the last array or DLPack export
    /// made from it). Called at the end of a `with` block.
    ///
    /// A WebGPU buffer mapped in place runs no GPU work while an array made from the
    /// handle lives: GPU work on it waits for the array to go (`del` it when done, or
    /// copy it with `np.array(h)`), and fails after 10 s with an error that says so.
    fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            if let Some(streams) = &self.view.streams {
                streams.record_at_close();
            }
        }
        self.view.open.store(false, Ordering::SeqCst);
        self.view.release_mapping();
    }

    /// True once `close()` ran (or the with-block ended).
    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
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
            if self.view.host_mapped {
                ", host-addressable"
            } else {
                ""
            }
        )
    }
}
