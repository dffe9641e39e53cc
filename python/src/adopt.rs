//! An application's own runtime objects joining locus from Python: its OpenCL context as
//! a location of its own (`locus.adopt_context`, and on the way when `Queue.from_external`
//! is handed a pyopencl queue of another context), and its buffers wrapped in place
//! (`Memory.wrap`).

use super::*;
use crate::memory::PyMemory;
use crate::queues::{adopt_opencl, adopt_sycl};

/// The top-level module `obj`'s type comes from (`pyopencl` for `pyopencl._cl.Context`).
fn root_module(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .getattr("__module__")
        .and_then(|m| m.extract::<String>())
        .unwrap_or_default()
        .split('.')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The location of the application's own `context` (a `pyopencl.Context` or a
/// `dpctl.SyclContext`) and `device` of it (a `pyopencl.Device` or `dpctl.SyclDevice`;
/// default: its first): the location locus already has for
/// them (its own context, or one adopted before), or a new one (`"opencl:3"`) that every
/// call takes as it takes a discovered location. locus retains the context for the life
/// of the process and makes an in-order queue of its own in it. The application's queues
/// of it join with `Queue.from_external(queue)`, its buffers with `Memory.wrap(buffer)`.
///
/// ```python
/// import pyopencl as cl
/// ctx = cl.Context(dev_type=cl.device_type.ALL)   # the application's own
/// at = locus.adopt_context(ctx)                   # e.g. "opencl:3"
/// ```
#[pyfunction]
#[pyo3(signature = (context, device = None))]
pub(crate) fn adopt_context(
    py: Python<'_>,
    context: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    guarded(|| match root_module(context).as_str() {
        "pyopencl" if context.hasattr("devices")? => {
            let raw: usize = context.getattr("int_ptr")?.extract()?;
            let device = match device {
                Some(d) => d.clone(),
                None => context.getattr("devices")?.get_item(0)?,
            };
            let dev: usize = device.getattr("int_ptr")?.extract()?;
            adopt_opencl(py, raw, dev).map(|at| at.to_string())
        }
        "dpctl" if context.hasattr("get_devices")? => {
            let reference = |o: &Bound<'_, PyAny>| -> PyResult<usize> {
                o.call_method0("addressof_ref")?.extract()
            };
            let device = match device {
                Some(d) => d.clone(),
                None => context.call_method0("get_devices")?.get_item(0)?,
            };
            adopt_sycl(py, reference(context)?, reference(&device)?).map(|at| at.to_string())
        }
        _ => Err(PyTypeError::new_err(format!(
            "adopt_context: expected a pyopencl.Context or a dpctl.SyclContext, got {} (a \
                 pyopencl.CommandQueue or a dpctl.SyclQueue joins with Queue.from_external, \
                 its context adopted on the way)",
            context
                .get_type()
                .name()
                .map_or("?".into(), |n| n.to_string())
        ))),
    })
}

#[pymethods]
impl PyMemory {
    /// Another library's allocation, in place, nothing copied: a `pyopencl.Buffer` (a
    /// sub-buffer too) becomes memory of its context's location (the context adopted now
    /// if locus did not know it; locus retains the buffer while this object lives); an
    /// array with an array interface (numpy, CuPy, dpnp / dpctl: at the location whose
    /// context owns its USM) or DLPack becomes memory of its bytes, the producer kept
    /// alive. What cannot be used in place (a non-contiguous array) is an error.
    #[staticmethod]
    #[pyo3(name = "wrap")]
    fn wrap_external(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<PyMemory> {
        guarded(|| {
            let is_cl_buffer = root_module(obj) == "pyopencl"
                && obj.hasattr("int_ptr")?
                && obj.hasattr("size")?
                && obj.hasattr("get_sub_region")?;
            if is_cl_buffer {
                let mem: usize = obj.getattr("int_ptr")?.extract()?;
                let memory = crate::detach(py, || {
                    // SAFETY: the cl_mem of a live pyopencl.Buffer (the caller's reference
                    // keeps it alive while this runs; locus retains it from here on).
                    unsafe { Memory::adopt_opencl_buffer(mem as *mut std::ffi::c_void) }
                })
                .map_err(py_err)?;
                return Ok(PyMemory::wrap(Arc::new(memory)));
            }
            // An array: through its array interface (numpy's, CUDA's, SYCL USM's), else
            // DLPack; in place or not at all.
            let interface = [
                "__array_interface__",
                "__cuda_array_interface__",
                "__sycl_usm_array_interface__",
            ]
            .iter()
            .try_fold(false, |found, name| {
                Ok::<_, PyErr>(found || obj.hasattr(*name)?)
            })?;
            let buffer = if interface {
                PyBuffer::from_array(py, obj, Some(false), false)?
            } else if obj.hasattr("__dlpack__")? {
                PyBuffer::from_dlpack(py, obj, Some(false))?
            } else {
                return Err(PyTypeError::new_err(format!(
                    "Memory.wrap: expected a pyopencl.Buffer, or an array with an array \
                     interface (numpy, CuPy, dpnp / dpctl) or DLPack, got {}",
                    obj.get_type().name().map_or("?".into(), |n| n.to_string())
                )));
            };
            let memory = lock(&buffer.store).home_memory().ok_or_else(|| {
                PyValueError::new_err("Memory.wrap: the array's memory is not at its location")
            })?;
            Ok(PyMemory::wrap_shared(memory))
        })
    }
}
