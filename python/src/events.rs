//! `locus.Event`, `locus.EventTrigger` and `locus.Queue`: one event type for work at any
//! location (CUDA's events, OpenCL's and SYCL's events, a wgpu submission, a locus
//! worker), user events that hold work back until Python says go, and queues that run
//! what is submitted on them in order (CUDA's streams). Every wait releases the GIL.

use locus::{Event, EventTrigger};

use super::*;

/// How often a wait wakes to let Python run its signal handlers (Ctrl-C).
const SIGNAL_CHECK: std::time::Duration = std::time::Duration::from_millis(50);

/// Waits for `event` with the GIL released, waking every [`SIGNAL_CHECK`] to run
/// Python's signal handlers: a `KeyboardInterrupt` (or any exception a handler raises)
/// ends the wait at once, the work going on. The event's outcome otherwise.
pub(crate) fn wait_interruptibly(py: Python<'_>, event: &Event) -> PyResult<locus::Result<()>> {
    if crate::detach(py, || event.is_complete()) {
        return Ok(event.wait());
    }
    let done = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let told = Arc::clone(&done);
    event.on_complete(move |_| {
        *lock(&told.0) = true;
        told.1.notify_all();
    });
    loop {
        let finished = crate::detach(py, || {
            let guard = lock(&done.0);
            if *guard {
                return true;
            }
            let (guard, _) = done
                .1
                .wait_timeout(guard, SIGNAL_CHECK)
                .unwrap_or_else(|e| e.into_inner());
            *guard
        });
        if finished {
            return Ok(crate::detach(py, || event.wait()));
        }
        py.check_signals()?;
    }
}

/// Completion of asynchronous work (a copy started with `Memory.copy_to_async`, a user
/// event). Any event is a dependency of any later work, whatever the technologies.
#[pyclass(frozen, module = "locus", name = "Event")]
pub(crate) struct PyEvent {
    pub(crate) inner: Event,
}

#[pymethods]
impl PyEvent {
    /// An event that has already happened.
    #[staticmethod]
    fn done() -> PyEvent {
        PyEvent {
            inner: Event::done(),
        }
    }

    /// An event and the trigger that completes it (OpenCL's user events): work that
    /// depends on the event waits until `trigger.complete()` (or fails with
    /// `trigger.fail(why)`; a trigger dropped unfired fails it, so nothing waits forever).
    #[staticmethod]
    fn user() -> (PyEvent, PyTrigger) {
        let (inner, trigger) = Event::user();
        (
            PyEvent { inner },
            PyTrigger {
                inner: Mutex::new(Some(trigger)),
            },
        )
    }

    /// Blocks until the work is done (the GIL released); raises its error, if any, as
    /// `LocusError` (the work failed: not a bad argument of this call). Ctrl-C raises
    /// `KeyboardInterrupt` at once (the work goes on).
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        guarded(|| wait_interruptibly(py, &self.inner)?.map_err(failed))
    }

    /// True once the work is known to be done (does not block).
    fn is_complete(&self, py: Python<'_>) -> bool {
        crate::detach(py, || self.inner.is_complete())
    }

    /// True when the work went to a runtime's own queue (an OpenCL or SYCL event, a wgpu
    /// submission), false when a locus worker thread runs it.
    fn is_native(&self) -> bool {
        self.inner.is_native()
    }

    /// The runtime's own event of the work, for another library's wait on the device
    /// (`cuStreamWaitEvent`, an OpenCL wait list, SYCL's `depends_on`): a dict
    /// `{"kind": "opencl" | "sycl" | "cuda" | "hip", "handle": int, "device": int}`
    /// (`handle`: a `cl_event`, a `DPCTLSyclEventRef`, a `CUevent`, a `hipEvent_t`,
    /// valid while this event lives), or `None` where the work has none (it ran on a
    /// locus thread).
    fn native<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        use locus::NativeEvent;
        let (kind, handle, device) = match self.inner.native_event() {
            Some(NativeEvent::OpenCl(h)) => ("opencl", h as usize as u64, 0),
            Some(NativeEvent::Sycl(h)) => ("sycl", h as usize as u64, 0),
            Some(NativeEvent::Cuda { event, ordinal }) => ("cuda", event, ordinal),
            Some(NativeEvent::Hip { event, ordinal }) => ("hip", event, ordinal),
            _ => return Ok(None),
        };
        let out = PyDict::new(py);
        out.set_item("kind", kind)?;
        out.set_item("handle", handle)?;
        out.set_item("device", device)?;
        Ok(Some(out))
    }

    fn __repr__(&self) -> String {
        format!(
            "<locus.Event complete: {}, native: {}>",
            self.inner.is_complete(),
            self.inner.is_native()
        )
    }
}

/// Completes the event `Event.user()` made with it; once.
#[pyclass(frozen, module = "locus", name = "EventTrigger")]
pub(crate) struct PyTrigger {
    inner: Mutex<Option<EventTrigger>>,
}

impl PyTrigger {
    fn take(&self) -> PyResult<EventTrigger> {
        lock(&self.inner)
            .take()
            .ok_or_else(|| PyValueError::new_err("this trigger has already fired"))
    }
}

#[pymethods]
impl PyTrigger {
    /// Completes the event: work waiting on it starts.
    fn complete(&self) -> PyResult<()> {
        self.take()?.complete();
        Ok(())
    }

    /// Fails the event with `why`: every waiter gets the error.
    fn fail(&self, why: &str) -> PyResult<()> {
        self.take()?.fail(why);
        Ok(())
    }
}

/// A failure of asynchronous work, reported by a wait: `MemoryError` when the work ran
/// out of memory, else `LocusError`.
pub(crate) fn failed(e: locus::Error) -> PyErr {
    match e {
        locus::Error::OutOfMemory { .. } => PyMemoryError::new_err(e.to_string()),
        other => LocusError::new_err(other.to_string()),
    }
}

/// The events of `after` (a sequence of `Event`), as locus events.
pub(crate) fn events_of(after: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Event>> {
    let Some(after) = after else {
        return Ok(Vec::new());
    };
    after
        .try_iter()?
        .map(|e| {
            let e = e?;
            let event = e.cast::<PyEvent>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "after: expected locus.Event items, got {}",
                    e.get_type().name().map_or("?".into(), |n| n.to_string())
                ))
            })?;
            Ok(event.get().inner.clone())
        })
        .collect()
}
