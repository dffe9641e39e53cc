//! Work a runtime runs on its own queue, backend-neutral: [`Completion`] wraps a
//! backend's own [`NativeWork`] type (an OpenCL event, a SYCL event, a wgpu submission, a
//! CUDA/HIP stream event), which only that backend downcasts ([`Completion::work_as`]).
//! [`Dependency`] is how a backend sees earlier work it must wait for (the run-time
//! layer's events implement it).

use std::any::Any;

use super::error::Result;

/// One backend's handle to queued work. Dropping it releases the handle (after the
/// [`Completion`] holding it waited, unless the work is queue-ordered and detached).
pub trait NativeWork: Any + Send + Sync {
    /// True once the work is done (never blocks).
    fn poll(&self) -> bool;
    /// Blocks until the work is done; its error.
    fn block(&self) -> Result<()>;
    /// True when the work runs on the device's in-order queue that every later locus
    /// operation on its memory also goes through (OpenCL, WebGPU): those operations are
    /// ordered after it without a host wait.
    fn is_queue_ordered(&self) -> bool {
        false
    }
    /// The runtime's own event for the work, for a user's device-side wait; `None`
    /// where the runtime has none to hand out.
    fn native_event(&self) -> Option<NativeEvent> {
        None
    }
    /// When the device queued, started and ended the work, by its own clock, once it is
    /// done; `None` where the runtime does not say (its queue made without profiling).
    fn device_times(&self) -> Option<DeviceTimes> {
        None
    }
}

/// A command's times by the device's clock, in nanoseconds (only differences between
/// them mean anything: the clock's zero is the device's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceTimes {
    /// When the host queued it.
    pub queued_ns: u64,
    /// When it began to run.
    pub started_ns: u64,
    /// When it ended.
    pub ended_ns: u64,
}

/// A runtime's own event for queued work, to order a user's work after locus's on the
/// device, with no host wait: pass it to `clEnqueue*`'s wait list, SYCL's
/// `depends_on`, `cuStreamWaitEvent` / `hipStreamWaitEvent`. It stays valid while the
/// locus [`Event`](crate::Event) it came from lives (retain it to keep it longer:
/// `clRetainEvent`); never release or destroy it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NativeEvent {
    /// A `cl_event` of the location's OpenCL context.
    OpenCl(*mut std::ffi::c_void),
    /// A `DPCTLSyclEventRef`: a pointer to a `sycl::event` (dpctl's C API).
    Sycl(*mut std::ffi::c_void),
    /// A `CUevent` recorded on locus's stream of device `ordinal`.
    Cuda {
        /// The event.
        event: u64,
        /// The device (its primary context).
        ordinal: u32,
    },
    /// A `hipEvent_t` recorded on locus's stream of device `ordinal`.
    Hip {
        /// The event.
        event: u64,
        /// The device.
        ordinal: u32,
    },
}

/// Completion of work on a queue (a launched kernel, a native asynchronous copy): wait on
/// it with [`Completion::wait`]. Dropping it waits too, so memory the work uses can never
/// be freed or reused under it.
pub struct Completion {
    work: Option<Box<dyn NativeWork>>,
}

impl Completion {
    /// Already finished (host and OpenMP launches run to completion).
    pub fn done() -> Completion {
        Completion { work: None }
    }

    /// Work a backend queued, as its own type.
    pub fn new(work: impl NativeWork) -> Completion {
        Completion {
            work: Some(Box::new(work)),
        }
    }

    /// The backend's own work type, when it is a `T` (the backend that made it asks, to
    /// take the work as a native dependency).
    pub fn work_as<T: NativeWork>(&self) -> Option<&T> {
        let work: &dyn Any = self.work.as_deref()?;
        work.downcast_ref::<T>()
    }

    /// True when the work is known to be finished, without blocking.
    pub fn poll_complete(&self) -> bool {
        self.work.as_ref().is_none_or(|w| w.poll())
    }

    /// The runtime's own event for the work ([`NativeWork::native_event`]).
    pub fn native_event(&self) -> Option<NativeEvent> {
        self.work.as_ref().and_then(|w| w.native_event())
    }

    /// Blocks until the work has finished.
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    /// The work's device times ([`NativeWork::device_times`]).
    pub fn device_times(&self) -> Option<DeviceTimes> {
        self.work.as_ref().and_then(|w| w.device_times())
    }

    /// Blocks until the work has finished, keeping the native handle (for an event
    /// whose handle others may still name as a dependency; released at drop).
    pub fn block(&self) -> Result<()> {
        self.work.as_ref().map_or(Ok(()), |w| w.block())
    }

    /// True when later locus operations on the device are ordered after this work
    /// without a host wait (see [`NativeWork::is_queue_ordered`]).
    pub fn is_queue_ordered(&self) -> bool {
        self.work.as_ref().is_none_or(|w| w.is_queue_ordered())
    }

    /// Lets the work run on without a host wait (only for a queue-ordered completion;
    /// others are waited for).
    pub fn detach(mut self) -> Result<()> {
        if self.is_queue_ordered() {
            self.work = None;
            Ok(())
        } else {
            self.finish()
        }
    }

    /// Waits, then lets go of the native handle.
    fn finish(&mut self) -> Result<()> {
        let outcome = self.block();
        self.work = None;
        outcome
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Earlier work an asynchronous operation must wait for, as a backend sees it.
pub trait Dependency {
    /// The native work behind it, when a runtime's queue runs it.
    fn completion(&self) -> Option<&Completion>;
    /// True once it is done (never blocks).
    fn is_complete(&self) -> bool;
    /// Blocks until it is done; its error.
    fn wait(&self) -> Result<()>;
}

/// The dependencies handed to a backend's asynchronous copy: a slice of any
/// [`Dependency`] type (the run-time layer's events), read in place without collecting
/// them (`&after` where `after: &[Event]`).
pub trait Dependencies {
    /// How many there are.
    fn count(&self) -> usize;
    /// The `i`-th (`i < count()`).
    fn at(&self, i: usize) -> &dyn Dependency;
}

impl<D: Dependency> Dependencies for &[D] {
    fn count(&self) -> usize {
        self.len()
    }

    fn at(&self, i: usize) -> &dyn Dependency {
        &self[i]
    }
}

/// No dependencies: for work that waits for nothing.
pub struct NoDependencies;

/// Work that is already done.
struct Done;

impl Dependency for Done {
    fn completion(&self) -> Option<&Completion> {
        None
    }
    fn is_complete(&self) -> bool {
        true
    }
    fn wait(&self) -> Result<()> {
        Ok(())
    }
}

impl Dependencies for NoDependencies {
    fn count(&self) -> usize {
        0
    }

    fn at(&self, _i: usize) -> &dyn Dependency {
        &Done
    }
}

/// For a backend's asynchronous copy: the native form of each dependency in `after`
/// the backend can take natively (`native` gives it), once every other dependency is
/// done (a failed one is returned as the error); `None` while one of those still runs:
/// the copy then goes to a worker thread that waits for it, so the caller never blocks
/// on another technology's work (nor does the device's own queue).
pub fn native_deps<T>(
    after: &dyn Dependencies,
    native: impl Fn(&Completion) -> Option<T>,
) -> Result<Option<Vec<T>>> {
    let mut deps = Vec::new();
    for e in (0..after.count()).map(|i| after.at(i)) {
        match e.completion().and_then(&native) {
            Some(dep) => deps.push(dep),
            None if !e.is_complete() => return Ok(None),
            None => e.wait()?,
        }
    }
    Ok(Some(deps))
}
