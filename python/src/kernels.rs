//! `locus.Kernel` and `locus.Codelet`: kernels from Python (sources per technology, the
//! kernels locus ships), bound to target lists and called on `locus.Buffer`s with their
//! intents, as in Rust (`locus::codelet`).

use super::*;

use locus::codelet::{self, Arg, Intent, Kernel, Launch, ParamKind};
use locus::Event;
use pyo3::types::{PyByteArray, PyBytes};

use crate::events::{failed, PyEvent};

mod calls;
mod kernel;

use calls::{codelet_of, lengths, run, Parts};
pub(crate) use kernel::PyKernel;
use kernel::{kernel_dtype, python_dtype};

/// Python dtype names and the kernel element types they are (`bool` is a byte; numpy
/// has no bfloat16, so kernels with bfloat16 parameters are not available from Python).
const KERNEL_DTYPES: [(&str, locus::DType); 11] = [
    ("float16", locus::DType::F16),
    ("float32", locus::DType::F32),
    ("float64", locus::DType::F64),
    ("int8", locus::DType::I8),
    ("int16", locus::DType::I16),
    ("int32", locus::DType::I32),
    ("int64", locus::DType::I64),
    ("uint8", locus::DType::U8),
    ("uint16", locus::DType::U16),
    ("uint32", locus::DType::U32),
    ("uint64", locus::DType::U64),
];

/// A kernel bound to a target list: calls run at the first available location and fall
/// back to the next when a launch fails there (OpenHMPP's codelet).
///
/// `Codelet(kernel, ["opencl:0", "host"]).call([x, 2.0, y, n], launch=n)`
#[pyclass(frozen, module = "locus", name = "Codelet")]
pub(crate) struct PyCodelet {
    /// Kernel, targets, `noupdate` and host function: shared with calls in flight.
    parts: Arc<Parts>,
}

/// A launch size: an int (1-D) or a pair (2-D, x fastest).
fn launch_of(launch: &Bound<'_, PyAny>) -> PyResult<Launch> {
    if let Ok(n) = launch.extract::<usize>() {
        return Ok(Launch::d1(n));
    }
    if let Ok((x, y)) = launch.extract::<(usize, usize)>() {
        return Ok(Launch::d2(x, y));
    }
    Err(PyTypeError::new_err(
        "launch must be an int (1-D) or a pair of ints (2-D, x fastest)",
    ))
}

/// One argument after checking, before the buffers are locked: a buffer (and whether
/// the kernel writes it) or a scalar's bytes.
enum Given {
    Buffer(Py<PyBuffer>, bool),
    Scalar(locus::DType, [u8; 8]),
}

/// What a call reports to Python: where it ran, the bytes its arguments moved, the
/// targets it fell back past.
#[derive(Clone)]
struct Report {
    target: String,
    bytes_moved: u64,
    fell_back: Vec<(String, String)>,
}

impl Report {
    fn of(report: &codelet::CallReport) -> Report {
        Report {
            target: report.target.to_string(),
            bytes_moved: report.moved.bytes_moved(),
            fell_back: report
                .fell_back
                .iter()
                .map(|(l, why)| (l.to_string(), why.clone()))
                .collect(),
        }
    }

    fn dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        out.set_item("target", &self.target)?;
        out.set_item("bytes_moved", self.bytes_moved)?;
        out.set_item("fell_back", self.fell_back.clone())?;
        Ok(out)
    }
}

/// Locks the buffers of `given` (in address order, so that two calls that share buffers
/// cannot each hold one the other waits for), settles their open write handles, and
/// runs `body` with the call's arguments in parameter order. `kernel` gives the element
/// type each buffer is seen as.
fn with_args<R>(
    kernel: &Kernel,
    given: &[Given],
    body: impl FnOnce(Vec<Arg<'_>>) -> locus::Result<R>,
) -> locus::Result<R> {
    let buffers: Vec<(usize, &PyBuffer)> = given
        .iter()
        .enumerate()
        .filter_map(|(i, g)| match g {
            Given::Buffer(b, _) => Some((i, b.get())),
            Given::Scalar(..) => None,
        })
        .collect();
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by_key(|&k| buffers[k].1 as *const PyBuffer as usize);
    let mut guards: Vec<Option<MutexGuard<'_, Store>>> = (0..buffers.len()).map(|_| None).collect();
    // A host function running in `body` on this thread reads what `hold` recorded of its
    // own arguments (locking them again would wait for this call).
    let mut hold = crate::writers::CallHold::new();
    for k in order {
        let (i, b) = buffers[k];
        let mut store = b.store()?;
        let writer = b.sync_writers(&mut store)?;
        // Two writers at once would lose one's data: a call that writes a buffer waits
        // for its open write handle to be closed, as a second write handle does.
        if let (Some(w), Given::Buffer(_, true)) = (writer, &given[i]) {
            return Err(locus::Error::Invalid(format!(
                "argument {i} is written by this call, and a write handle of it at {w} is still open: \
                 close it (h.close(), or a with-block) before the call"
            )));
        }
        hold.hold(b, &store);
        guards[k] = Some(store);
    }
    let params = kernel.params();
    let mut typed: Vec<store::Typed<'_>> = Vec::with_capacity(guards.len());
    for (guard, (i, _)) in guards.iter_mut().zip(&buffers) {
        let store = guard.as_deref_mut().ok_or_else(|| {
            locus::Error::Invalid("internal: a buffer argument not locked".into())
        })?;
        let dtype = match params.get(*i).map(|p| p.kind) {
            Some(ParamKind::Buffer(t, _)) => t,
            _ => return Err(locus::Error::Invalid("internal: argument order".into())),
        };
        typed.push(store::Typed { store, dtype });
    }
    let mut slots = typed.iter_mut();
    let mut args: Vec<Arg<'_>> = Vec::with_capacity(given.len());
    for g in given {
        args.push(match g {
            Given::Buffer(_, write) => {
                let t = slots
                    .next()
                    .ok_or_else(|| locus::Error::Invalid("internal: argument count".into()))?;
                if *write {
                    Arg::BufMut(t)
                } else {
                    Arg::Buf(&*t)
                }
            }
            Given::Scalar(t, b) => Arg::Scalar(*t, *b),
        });
    }
    body(args)
}

/// A buffer argument of a load or store: a `locus.Buffer`, else a `TypeError`.
fn buffer_arg<'a, 'py>(
    what: &str,
    buffer: &'a Bound<'py, PyAny>,
) -> PyResult<&'a Bound<'py, PyBuffer>> {
    buffer
        .cast::<PyBuffer>()
        .map_err(|_| PyTypeError::new_err(format!("{what}: expected a locus.Buffer")))
}

#[pymethods]
impl PyCodelet {
    #[new]
    #[pyo3(signature = (kernel, targets, noupdate=Vec::new()))]
    fn new(kernel: &PyKernel, targets: Vec<String>, noupdate: Vec<String>) -> PyResult<PyCodelet> {
        guarded(|| {
            let targets = targets
                .iter()
                .map(|t| parse_location(t))
                .collect::<PyResult<Vec<_>>>()?;
            let mut c = codelet::Codelet::new(&kernel.kernel, &targets).map_err(py_err)?;
            for p in &noupdate {
                c = c.noupdate(p).map_err(py_err)?;
            }
            Ok(PyCodelet {
                parts: Arc::new(Parts {
                    kernel: kernel.kernel.clone(),
                    targets,
                    noupdate,
                    host: kernel.host.clone(),
                }),
            })
        })
    }

    /// Where calls run (unless a launch fails there).
    #[getter]
    fn target(&self) -> PyResult<String> {
        Ok(self.codelet().map_err(py_err)?.target().to_string())
    }

    /// Where a call goes when the launch fails at the targets before.
    #[getter]
    fn fallbacks(&self) -> PyResult<Vec<String>> {
        Ok(self
            .codelet()
            .map_err(py_err)?
            .fallbacks()
            .iter()
            .map(|l| l.to_string())
            .collect())
    }

    /// The targets before [`target`] that are not available here, each with why.
    #[getter]
    fn skipped(&self) -> PyResult<Vec<(String, String)>> {
        Ok(self
            .codelet()
            .map_err(py_err)?
            .skipped()
            .iter()
            .map(|(l, why)| (l.to_string(), why.clone()))
            .collect())
    }

    /// Runs the kernel with `args` in parameter order (`locus.Buffer`s for buffer
    /// parameters, Python numbers for scalars) over `launch` work items; with `cond`
    /// false, on the host with the host implementation (OpenHMPP's `cond`). The GIL is
    /// released while the arguments move and the kernel runs. Returns
    /// `{"target": ..., "bytes_moved": ..., "fell_back": [(location, why), ...]}`.
    #[pyo3(signature = (args, launch, cond=true))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        args: Vec<Bound<'py, PyAny>>,
        launch: &Bound<'py, PyAny>,
        cond: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            let launch = launch_of(launch)?;
            let given = self.checked(&args)?;
            let lens = lengths(&given);
            let report = crate::detach(py, || {
                with_args(&self.parts.kernel, &given, |mut args| {
                    Ok(run(&self.parts, cond, &mut args, launch, &lens))
                })
                .map_err(py_err)?
            })?;
            report.dict(py)
        })
    }

    /// Starts the kernel and returns once it is launched (OpenHMPP's `asynchronous`
    /// callsite), with a `locus.PendingCall`: `synchronize()` waits and reports as `call`
    /// does. The arguments stay with the call until it completes: any other use of them
    /// (a read, a copy, another call) waits for it. A launch that fails at every target
    /// raises here; a kernel that fails after its launch raises from `synchronize()`.
    fn call_async(
        &self,
        py: Python<'_>,
        args: Vec<Bound<'_, PyAny>>,
        launch: &Bound<'_, PyAny>,
    ) -> PyResult<PyPendingCall> {
        guarded(|| {
            let launch = launch_of(launch)?;
            let given = self.checked(&args)?;
            let (done, trigger) = Event::user();
            let outcome: Arc<Mutex<Option<PyResult<Report>>>> = Arc::new(Mutex::new(None));
            let (started_tx, started_rx) = std::sync::mpsc::channel::<String>();
            let parts = Arc::clone(&self.parts);
            let lens = lengths(&given);
            let slot = Arc::clone(&outcome);
            let spawned = std::thread::Builder::new()
                .name("locus-call-async".into())
                .spawn(move || {
                    let mut started = Some(started_tx);
                    let result: PyResult<Report> = match &parts.host {
                        // A Python host function: the call runs here, whole.
                        Some(_) => with_args(&parts.kernel, &given, |mut args| {
                            let target =
                                codelet_of(&parts.kernel, &parts.targets, &parts.noupdate)?
                                    .target();
                            if let Some(tx) = started.take() {
                                let _ = tx.send(target.to_string());
                            }
                            Ok(run(&parts, true, &mut args, launch, &lens))
                        })
                        .map_err(py_err)
                        .and_then(|r| r),
                        None => codelet_of(&parts.kernel, &parts.targets, &parts.noupdate)
                            .and_then(|c| {
                                with_args(&parts.kernel, &given, |args| {
                                    let pending = c.call_async(args, launch)?;
                                    if let Some(tx) = started.take() {
                                        // The caller returns now; the arguments stay locked here.
                                        let _ = tx.send(pending.target().to_string());
                                    }
                                    pending.synchronize().map(|r| Report::of(&r))
                                })
                            })
                            .map_err(py_err),
                    };
                    match result {
                        Ok(report) => {
                            *lock(&slot) = Some(Ok(report));
                            trigger.complete();
                        }
                        Err(e) => {
                            let why = crate::error_text(&e);
                            *lock(&slot) = Some(Err(e));
                            trigger.fail(why);
                        }
                    }
                    // Unsent (no launch): the caller's receive ends and it raises the error.
                    drop(started);
                })
                .map_err(|e| {
                    LocusError::new_err(format!(
                        "call_async: could not start a thread to run the call: {e}"
                    ))
                })?;
            match crate::detach(py, move || started_rx.recv()) {
                Ok(target) => Ok(PyPendingCall {
                    done,
                    outcome,
                    target,
                }),
                Err(_) => {
                    // No launch anywhere: the thread has stored why and is ending.
                    let _ = crate::detach(py, || spawned.join());
                    match lock(&outcome).take() {
                        Some(Err(e)) => Err(e),
                        _ => Err(LocusError::new_err(
                            "call_async: the call ended before its launch without an error (a bug: please report it)",
                        )),
                    }
                }
            }
        })
    }

    /// Moves `buffer`'s current data to the target now, ahead of a call, and waits
    /// (OpenHMPP's `advancedload`). The GIL is released.
    fn advanced_load(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>) -> PyResult<()> {
        guarded(|| {
            let b = buffer_arg("advanced_load", buffer)?.get();
            crate::detach(py, || self.on_buffer(b, |c, typed| c.advanced_load(typed)))
                .map_err(py_err)
        })
    }

    /// Starts `advanced_load` and returns the moves' events at once (OpenHMPP's
    /// `advancedload, asynchronous`); calls that use the buffer are ordered after them.
    fn advanced_load_async(
        &self,
        py: Python<'_>,
        buffer: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyEvent>> {
        guarded(|| {
            let b = buffer_arg("advanced_load_async", buffer)?.get();
            let events = crate::detach(py, || {
                self.on_buffer(b, |c, typed| c.advanced_load_async(typed, None))
            })
            .map_err(py_err)?;
            Ok(events.into_iter().map(|inner| PyEvent { inner }).collect())
        })
    }

    /// Brings `buffer`'s current data to `to` (the host unless named) now, and waits
    /// (OpenHMPP's `delegatedstore`); without it, a result comes back when it is read.
    #[pyo3(signature = (buffer, to="host"))]
    fn delegated_store(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>, to: &str) -> PyResult<()> {
        guarded(|| {
            let b = buffer_arg("delegated_store", buffer)?.get();
            let to = parse_location(to)?;
            crate::detach(py, || {
                self.on_buffer(b, |c, typed| c.delegated_store_to(typed, None, to))
            })
            .map_err(py_err)
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Codelet({:?}, targets=[{}])",
            self.parts.kernel.name(),
            self.parts
                .targets
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl PyCodelet {
    /// Runs `f` with the codelet and `b` locked, its open writers settled, as a kernel
    /// argument of its element type (a load or store of one buffer).
    fn on_buffer<R>(
        &self,
        b: &PyBuffer,
        f: impl FnOnce(&codelet::Codelet<'_>, &store::Typed<'_>) -> locus::Result<R>,
    ) -> locus::Result<R> {
        let c = self.codelet()?;
        let mut store = b.store()?;
        b.sync_writers(&mut store)?;
        let dtype = kernel_dtype(&b.dtype);
        f(
            &c,
            &store::Typed {
                store: &mut store,
                dtype,
            },
        )
    }

    fn codelet(&self) -> locus::Result<codelet::Codelet<'_>> {
        codelet_of(
            &self.parts.kernel,
            &self.parts.targets,
            &self.parts.noupdate,
        )
    }

    /// `args` checked against the kernel's parameters: count, buffer element types,
    /// written buffers not read-only, no buffer passed twice, scalars encoded.
    fn checked(&self, args: &[Bound<'_, PyAny>]) -> PyResult<Vec<Given>> {
        let params = self.parts.kernel.params();
        if args.len() != params.len() {
            return Err(PyValueError::new_err(format!(
                "kernel `{}` takes {} arguments ({}), got {}",
                self.parts.kernel.name(),
                params.len(),
                params
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                args.len()
            )));
        }
        let mut given = Vec::with_capacity(args.len());
        for (p, a) in params.iter().zip(args) {
            given.push(match p.kind {
                ParamKind::Buffer(t, intent) => {
                    let b = a.cast::<PyBuffer>().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "kernel `{}`: argument `{}` must be a locus.Buffer of {}",
                            self.parts.kernel.name(),
                            p.name,
                            python_dtype(t).map(|d| d.name).unwrap_or("?")
                        ))
                    })?;
                    let inner: &PyBuffer = b.get();
                    if kernel_dtype(&inner.dtype) != t {
                        return Err(PyTypeError::new_err(format!(
                            "kernel `{}`: argument `{}` must hold {}, this buffer holds {}",
                            self.parts.kernel.name(),
                            p.name,
                            python_dtype(t).map(|d| d.name).unwrap_or("?"),
                            inner.dtype.name
                        )));
                    }
                    let write = intent != Intent::In;
                    if write && inner.readonly {
                        return Err(PyValueError::new_err(format!(
                            "kernel `{}`: argument `{}` is written, but this buffer adopted read-only memory",
                            self.parts.kernel.name(),
                            p.name
                        )));
                    }
                    let again = given
                        .iter()
                        .any(|o| matches!(o, Given::Buffer(c, _) if std::ptr::eq(c.get(), inner)));
                    if again {
                        // One lock per buffer: the same buffer twice would be two arguments aliasing.
                        return Err(PyValueError::new_err(format!(
                            "kernel `{}`: argument `{}` is a buffer already passed as another argument; pass a copy",
                            self.parts.kernel.name(),
                            p.name
                        )));
                    }
                    Given::Buffer(b.clone().unbind(), write)
                }
                ParamKind::Scalar(t) => {
                    let bytes = python_dtype(t)?.encode(a)?;
                    let mut slot = [0u8; 8];
                    slot[..bytes.len()].copy_from_slice(&bytes);
                    Given::Scalar(t, slot)
                }
            });
        }
        Ok(given)
    }
}

/// An asynchronous call in flight (`Codelet.call_async`): `synchronize()` waits for it and
/// reports; `event` completes with it (a dependency for any later work).
#[pyclass(frozen, module = "locus", name = "PendingCall")]
pub(crate) struct PyPendingCall {
    done: Event,
    outcome: Arc<Mutex<Option<PyResult<Report>>>>,
    target: String,
}

#[pymethods]
impl PyPendingCall {
    /// Waits for the call (the GIL released) and returns its report, as `Codelet.call`
    /// does; raises the kernel's error if it failed. Again after that: the same report.
    fn synchronize<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| {
            // Ctrl-C raises KeyboardInterrupt at once (the call goes on).
            let waited = crate::events::wait_interruptibly(py, &self.done)?;
            let slot = lock(&self.outcome);
            match slot.as_ref() {
                Some(Ok(report)) => report.dict(py),
                Some(Err(e)) => Err(e.clone_ref(py)),
                None => Err(failed(waited.err().unwrap_or_else(|| {
                    locus::Error::Invalid(
                        "the call ended without a report (a bug: please report it)".into(),
                    )
                }))),
            }
        })
    }

    /// True once the call is done (does not block).
    fn is_complete(&self) -> bool {
        self.done.is_complete()
    }

    /// The call's completion as a `locus.Event` (for `after=` of later work).
    #[getter]
    fn event(&self) -> PyEvent {
        PyEvent {
            inner: self.done.clone(),
        }
    }

    /// Where the kernel was launched.
    #[getter]
    fn target(&self) -> String {
        self.target.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<locus.PendingCall at {}, complete: {}>",
            self.target,
            self.done.is_complete()
        )
    }
}
