//! dpctl and dpnp for handles of SYCL USM memory: the `dpctl.SyclQueue` on locus's own
//! queue, `__sycl_usm_array_interface__`, and the `dpnp.tensor.usm_ndarray` that
//! `dpnp.asarray` views without a copy.

use std::sync::OnceLock;

use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

use super::*;

/// The interface dict of a view of SYCL USM memory, or `AttributeError` for any other
/// memory (so `hasattr` reads False).
pub(crate) fn interface<'py>(py: Python<'py>, view: &View) -> PyResult<Bound<'py, PyDict>> {
    interface_of(
        py,
        &view.memory,
        &view.shape,
        &view.dtype.typestr(),
        !view.writable,
    )
}

/// The interface dict of `shape` elements of `typestr` at the start of `memory`.
fn interface_of<'py>(
    py: Python<'py>,
    memory: &Memory,
    shape: &[usize],
    typestr: &str,
    readonly: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let location = memory.location();
    let Native::Sycl { ptr, .. } = memory.native() else {
        return Err(not_usm(location));
    };
    let queue = queue_of(py, location)?;
    let d = PyDict::new(py);
    d.set_item("version", 1)?;
    d.set_item("data", (*ptr as usize, readonly))?;
    d.set_item("shape", PyTuple::new(py, shape)?)?;
    d.set_item("strides", py.None())?;
    d.set_item("typestr", typestr)?;
    d.set_item("offset", 0)?;
    d.set_item("syclobj", queue)?;
    Ok(d)
}

fn not_usm(location: Location) -> PyErr {
    PyAttributeError::new_err(format!(
        "memory at {location} is not SYCL USM: access the buffer at a SYCL location (e.g. access(\"sycl:0\"))"
    ))
}

/// A handle's `dpnp.tensor.usm_ndarray`, made once on first use.
#[derive(Default)]
pub(crate) struct UsmArray(OnceLock<Py<PyAny>>);

impl UsmArray {
    /// The array over `view`'s USM memory (no copy; read-only for a read access). A
    /// write access's memory object holds a [`UsmOwner`] on the view, not the handle, so
    /// the handle that caches the array and the array do not hold each other, and the
    /// write stays declared while the array lives. A read access takes its buffer's
    /// [`UsmMemoryCache`] where it is given one.
    pub(crate) fn get<'py>(
        &self,
        py: Python<'py>,
        view: &Arc<View>,
        cache: Option<&UsmMemoryCache>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(made) = self.0.get() {
            return Ok(made.bind(py).clone());
        }
        let (as_usm_memory, usm_ndarray) = dpctl_parts(py, view.memory.location())?;
        let memory = match cache.filter(|_| !view.writable) {
            Some(cache) => cache.memory(py, &view.memory)?,
            None => {
                let owner = Py::new(
                    py,
                    UsmOwner {
                        _keeps: Keeps::View(view.clone()),
                        interface: interface(py, view)?.unbind(),
                    },
                )?;
                as_usm_memory.bind(py).call1((owner,))?
            }
        };
        let kwargs = PyDict::new(py);
        kwargs.set_item("dtype", view.dtype.typestr())?;
        kwargs.set_item("buffer", memory)?;
        let array = usm_ndarray
            .bind(py)
            .call((PyTuple::new(py, &view.shape)?,), Some(&kwargs))?;
        if !view.writable {
            array.getattr("flags")?.set_item("W", false)?;
        }
        // Another thread may have made one meanwhile: everyone gets the first.
        let kept = self.0.get_or_init(|| array.unbind());
        Ok(kept.bind(py).clone())
    }
}

/// A buffer's `dpctl.memory` object over the SYCL allocation its read handles last
/// exported to dpctl / dpnp, reused by the next read handle of the same allocation:
/// `dpctl.memory.as_usm_memory` costs a third of `dpnp.asarray(handle)`, more than the
/// `usm_ndarray` around it (`docs/design-measurements.md`). Read
/// handles only: a read declares nothing that must end with the array. The object keeps
/// the allocation alive, so the buffer forgets it whenever it lets replicas go (`resize`,
/// `reserve`, `assign`, `append`, `swap`, `move_to`) or a read handle meets another
/// allocation.
#[derive(Default)]
pub(crate) struct UsmMemoryCache(Mutex<Option<(usize, Py<PyAny>)>>);

impl UsmMemoryCache {
    /// The memory object over `memory` (all of it, as bytes), made on first use.
    fn memory<'py>(&self, py: Python<'py>, memory: &Arc<Memory>) -> PyResult<Bound<'py, PyAny>> {
        let key = Arc::as_ptr(memory) as usize;
        if let Some((k, made)) = lock(&self.0).as_ref() {
            if *k == key {
                return Ok(made.bind(py).clone());
            }
        }
        // Made outside the lock: making it runs Python code, which may switch threads.
        let owner = Py::new(
            py,
            UsmOwner {
                _keeps: Keeps::Memory(Arc::clone(memory)),
                interface: interface_of(py, memory, &[memory.len()], "|u1", true)?.unbind(),
            },
        )?;
        let made = dpctl_parts(py, memory.location())?
            .0
            .bind(py)
            .call1((owner,))?;
        let old = lock(&self.0).replace((key, made.clone().unbind()));
        drop(old); // the one it replaces, with the GIL held
        Ok(made)
    }

    /// Lets the memory object go (the buffer is letting replicas go).
    pub(crate) fn forget(&self) {
        let old = lock(&self.0).take();
        drop(old);
    }
}

/// `dpctl.memory.as_usm_memory` and the `usm_ndarray` class (of `dpnp.tensor`, else of an
/// older dpctl's `dpctl.tensor`), looked up once per process: an import per handle costs
/// more than making the array.
fn dpctl_parts(py: Python<'_>, location: Location) -> PyResult<&(Py<PyAny>, Py<PyAny>)> {
    static PARTS: PyOnceLock<(Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();
    PARTS.get_or_try_init(py, || {
        let tensor = py
            .import("dpnp.tensor")
            .or_else(|_| py.import("dpctl.tensor"))
            .map_err(|_| {
                PyAttributeError::new_err(format!(
                    "a usm_ndarray over memory at {location} needs dpnp.tensor (pip install dpnp) or dpctl.tensor"
                ))
            })?;
        let as_usm_memory = py.import("dpctl.memory")?.getattr("as_usm_memory")?;
        Ok((as_usm_memory.unbind(), tensor.getattr("usm_ndarray")?.unbind()))
    })
}

/// What a handle's `usm_ndarray` keeps alive: the view of a write access (so the memory
/// and the write outlive the handle while an array uses it), or the memory alone (a
/// buffer's [`UsmMemoryCache`]), with the interface dpctl read it through.
#[pyclass(frozen, module = "locus", name = "_UsmOwner")]
pub(crate) struct UsmOwner {
    _keeps: Keeps,
    interface: Py<PyDict>,
}

/// What a [`UsmOwner`] holds on to (held for its lifetime, never read).
#[allow(dead_code)]
enum Keeps {
    /// A write access's view: the write stays declared while an array uses it.
    View(Arc<View>),
    /// An allocation a buffer's read handles share ([`UsmMemoryCache`]).
    Memory(Arc<Memory>),
}

#[pymethods]
impl UsmOwner {
    /// The interface of the view it keeps.
    #[getter]
    fn __sycl_usm_array_interface__(&self, py: Python<'_>) -> Py<PyDict> {
        self.interface.clone_ref(py)
    }
}

/// The capsule name dpctl's `SyclQueue` takes a queue reference from (and renames to
/// `used_SyclQueueRef` once it owns it).
const QUEUE_CAPSULE: &std::ffi::CStr = c"SyclQueueRef";

/// Deletes the queue reference of a `SyclQueueRef` capsule nobody took.
///
/// # Safety
/// Called by Python only, as the destructor of a capsule `sycl_queue` made: its pointer
/// an owned queue reference and its context the `DpctlApi` that made it, unless dpctl
/// renamed it on taking the reference.
unsafe extern "C" fn drop_queue_capsule(capsule: *mut pyo3::ffi::PyObject) {
    // SAFETY: called by Python with the capsule being destroyed; its name and context
    // are the ones `sycl_queue` set (or dpctl's rename when it took the reference).
    unsafe {
        let name = pyo3::ffi::PyCapsule_GetName(capsule);
        if name.is_null() || std::ffi::CStr::from_ptr(name) != QUEUE_CAPSULE {
            return; // dpctl took it: it owns the reference now
        }
        let queue = pyo3::ffi::PyCapsule_GetPointer(capsule, QUEUE_CAPSULE.as_ptr());
        let api =
            pyo3::ffi::PyCapsule_GetContext(capsule) as *const locus::backends::sycl::sys::DpctlApi;
        if !queue.is_null() && !api.is_null() {
            locus::backends::sycl::SyclDevice::delete_queue_ref(&*api, queue.cast());
        }
    }
}

/// The process's `dpctl.SyclQueue` on locus's queue of the SYCL device at `location`:
/// made once per location and handed out again, because dpctl and dpnp compare queues
/// by identity (`asarray` copies onto a queue that is not the very same object).
pub(crate) fn queue_of(py: Python<'_>, location: Location) -> PyResult<Bound<'_, PyAny>> {
    static QUEUES: Mutex<Vec<(Location, Py<PyAny>)>> = Mutex::new(Vec::new());
    let known = |queues: &[(Location, Py<PyAny>)]| {
        queues
            .iter()
            .find(|(l, _)| *l == location)
            .map(|(_, q)| q.clone_ref(py).into_bound(py))
    };
    if let Some(q) = known(&lock(&QUEUES)) {
        return Ok(q);
    }
    // Made outside the lock: making it runs Python code, which may switch threads.
    let dpctl = py.import("dpctl").map_err(|_| {
        PyAttributeError::new_err(
            "a SYCL handle names its queue as a dpctl.SyclQueue: install dpctl (pip install dpctl)",
        )
    })?;
    let device = locus::device_as::<locus::backends::sycl::SyclDevice>(location).map_err(py_err)?;
    let made = sycl_queue(py, &dpctl, &device)?;
    let mut queues = lock(&QUEUES);
    if let Some(q) = known(&queues) {
        return Ok(q); // another thread made it first: everyone gets the same object
    }
    queues.push((location, made.clone().unbind()));
    Ok(made)
}

/// A `dpctl.SyclQueue` on `device`'s own queue (a new reference handed to dpctl in a
/// `SyclQueueRef` capsule, as dpctl's `SyclQueue._get_capsule` makes one).
fn sycl_queue<'py>(
    py: Python<'py>,
    dpctl: &Bound<'py, PyModule>,
    device: &locus::backends::sycl::SyclDevice,
) -> PyResult<Bound<'py, PyAny>> {
    let queue = device.queue_ref_copy().map_err(py_err)?;
    let api = device.api();
    // SAFETY: a capsule over the owned queue reference, with the API as its context
    // (static: the registry's devices live as long as the process) and a destructor
    // that deletes the reference unless dpctl took it.
    let capsule = unsafe {
        let raw = pyo3::ffi::PyCapsule_New(
            queue.cast(),
            QUEUE_CAPSULE.as_ptr(),
            Some(drop_queue_capsule),
        );
        if raw.is_null() {
            locus::backends::sycl::SyclDevice::delete_queue_ref(api, queue);
            return Err(PyErr::fetch(py));
        }
        if pyo3::ffi::PyCapsule_SetContext(
            raw,
            api as *const locus::backends::sycl::sys::DpctlApi as *mut std::ffi::c_void,
        ) != 0
        {
            // The destructor finds no context and leaves the reference: delete it here.
            locus::backends::sycl::SyclDevice::delete_queue_ref(api, queue);
            pyo3::ffi::Py_DecRef(raw);
            return Err(PyErr::fetch(py));
        }
        Bound::from_owned_ptr(py, raw)
    };
    dpctl.getattr("SyclQueue")?.call1((capsule,))
}

/// The SYCL queues a consumer of a write handle may queue its work on: locus's own for
/// the device (what `dpnp.asarray` of the handle computes on) and dpctl's cached queue
/// of the device (what `dpnp.from_dlpack` and dpctl's own arrays use). Kept alive here,
/// and waited for natively (without the GIL) before the buffer is used again.
pub(crate) struct ConsumerQueues {
    refs: Vec<usize>,
    _objects: Vec<Py<PyAny>>,
}

impl ConsumerQueues {
    /// The queues for the SYCL device at `location` (dpctl's, made if need be).
    pub(crate) fn of(py: Python<'_>, location: Location) -> PyResult<ConsumerQueues> {
        let ours = queue_of(py, location)?;
        let device = ours.getattr("sycl_device")?;
        let cached = py
            .import("dpctl")?
            .call_method1("get_device_cached_queue", (device,))?;
        let mut refs = Vec::new();
        let mut objects = Vec::new();
        for q in [ours, cached] {
            refs.push(q.call_method0("addressof_ref")?.extract::<usize>()?);
            objects.push(q.unbind());
        }
        Ok(ConsumerQueues {
            refs,
            _objects: objects,
        })
    }

    /// Waits for everything submitted so far on the queues.
    pub(crate) fn wait(&self, location: Location) -> locus::Result<()> {
        let device = locus::device_as::<locus::backends::sycl::SyclDevice>(location)?;
        for &queue in &self.refs {
            // SAFETY: a live queue reference: the dpctl.SyclQueue objects that own it
            // are kept in `_objects` for as long as this value lives.
            unsafe {
                device
                    .api()
                    .DPCTLQueue_Wait(queue as locus::backends::sycl::sys::DPCTLSyclQueueRef)
            };
        }
        Ok(())
    }
}
