//! `locus.Buffer` and other libraries' arrays: DLPack both ways (`__dlpack__`,
//! `from_dlpack`) and the array interfaces (`from_array`: numpy's
//! `__array_interface__`, CuPy's `__cuda_array_interface__`).

use super::*;

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
    /// `__dlpack_device__` of a read at the home location.
    pub(super) fn __dlpack_device__(&self, py: Python<'_>) -> PyResult<(i32, i32)> {
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
        self.export_dlpack(py, (stream, max_version, dl_device, copy), None)
    }

    /// Adopts the memory of a DLPack producer (any object with `__dlpack__`, or a
    /// capsule) without copying; the location follows the producer's device. `copy=True`
    /// copies; `copy=False` refuses anything that would need a copy (non-contiguous
    /// arrays). Objects with only an array interface go to `from_array`.
    #[staticmethod]
    #[pyo3(signature = (obj, *, copy=None))]
    pub(crate) fn from_dlpack(
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
                return Self::from_array(py, obj, copy, false);
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
                register: false,
            }
            .adopt(py, copy)
        })
    }

    /// Adopts the memory of an object with `__array_interface__` (host) or
    /// `__cuda_array_interface__` (the device its `__dlpack_device__` names, else the
    /// device that owns the pointer; its `stream` is waited for first) without copying;
    /// the object is kept alive while locus uses its memory. `register=True` (host
    /// arrays) also pins the array where it lies for the runtimes whose copies need
    /// page-locked memory (CUDA, HIP: their copies then go by DMA) until locus lets go of
    /// it: for an array that moves to a GPU again and again.
    #[staticmethod]
    #[pyo3(signature = (obj, *, copy=None, register=false))]
    pub(crate) fn from_array(
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        copy: Option<bool>,
        register: bool,
    ) -> PyResult<PyBuffer> {
        guarded(|| {
            let host = optional_attr(obj, "__array_interface__")?;
            let cuda = match host {
                Some(_) => None,
                None => optional_attr(obj, "__cuda_array_interface__")?,
            };
            let sycl = match (&host, &cuda) {
                (None, None) => optional_attr(obj, "__sycl_usm_array_interface__")?,
                _ => None,
            };
            let (iface, location) = if let Some(i) = host {
                (i, Location::Host)
            } else if let Some(i) = cuda.clone() {
                (i, Location::Cuda(0)) // the device is settled below, from the pointer
            } else if let Some(i) = sycl.clone() {
                // The SYCL location whose context owns the USM is settled on adoption
                // (locus's own context, or an application's adopted one).
                (i, Location::Sycl(0))
            } else {
                return Err(PyTypeError::new_err(format!(
                    "{} has no __array_interface__, __cuda_array_interface__ or \
                     __sycl_usm_array_interface__",
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
            // dpctl's interface writes `|` (no byte order) for every type: its data is in
            // the device's order, the host's here.
            let typestr = match (sycl.is_some(), typestr.strip_prefix('|')) {
                (true, Some(rest)) if cfg!(target_endian = "little") => format!("<{rest}"),
                _ => typestr,
            };
            let dtype = DType::from_typestr(&typestr)?;
            let shape: Vec<usize> = item("shape")
                .ok_or_else(|| PyBufferError::new_err("the array interface has no shape"))?
                .extract()?;
            let mut strides: Option<Vec<isize>> =
                item("strides").map(|s| s.extract()).transpose()?;
            let mut offset: usize = item("offset")
                .map(|o| o.extract())
                .transpose()?
                .unwrap_or(0);
            if sycl.is_some() {
                // The SYCL USM array interface counts its strides and offset in elements.
                let size = dtype.size;
                strides = strides.map(|v| v.iter().map(|&s| s * size as isize).collect());
                offset = offset.checked_mul(size).ok_or_else(|| {
                    PyBufferError::new_err("the SYCL USM array interface's offset overflows")
                })?;
            }
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
                register,
            }
            .adopt(py, copy)
        })
    }
}

impl PyBuffer {
    /// A DLPack capsule of a read at the home location: the whole buffer, or the
    /// elements of `layout` (a view's offset, shape and strides).
    pub(super) fn export_dlpack(
        &self,
        py: Python<'_>,
        args: crate::handle::DlpackArgs<'_>,
        layout: Option<&locus::Layout>,
    ) -> PyResult<Py<PyAny>> {
        guarded(|| {
            let home = self.location(py)?;
            self.handle(py, &home, false)?
                .export_dlpack(py, args, layout)
        })
    }
}
