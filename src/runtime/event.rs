//! One event type for every technology: what an asynchronous copy returns. The host
//! waits on it; any later asynchronous operation takes it as a dependency (natively
//! where the technology allows, by a host wait otherwise).

use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

use crate::core::completion::{Completion, Dependency};
use crate::core::error::{Error, Result};
use crate::core::memory::Memory;
use crate::core::trace;

enum State {
    /// Still running natively (an OpenCL event, a SYCL event, a wgpu submission).
    Native(Arc<Completion>),
    /// Finished, with its outcome (kept so every waiter sees it).
    Finished(Result<()>),
    /// Completed by an [`EventTrigger`] (a user's, or a locus worker thread's).
    User(Signal),
    /// Being waited for by one thread (which took the work out); the others wait on
    /// the event's condition variable.
    Waiting,
}

/// Waits for a user event's trigger.
fn wait_signal(signal: &Signal) -> Result<()> {
    let (lock, condvar) = &**signal;
    // Spin briefly first: work on a worker thread often ends within microseconds, and a
    // sleep and wake-up costs tens of them on some machines (CUDA's spin-then-block).
    let (start, spin) = (std::time::Instant::now(), super::worker::spin());
    while start.elapsed() < spin {
        if let Ok(outcome) = lock.try_lock() {
            if let Some(r) = outcome.as_ref() {
                return r.clone();
            }
        }
        std::hint::spin_loop();
    }
    let mut outcome = lock.lock().unwrap_or_else(|e| e.into_inner());
    while outcome.is_none() {
        outcome = condvar.wait(outcome).unwrap_or_else(|e| e.into_inner());
    }
    outcome.clone().unwrap_or(Ok(()))
}

/// An event's state, the condition variable its waiters sleep on, the memory its work
/// uses (kept alive until the work is known to be done, then let go) and, for native
/// work, its completion: the native handle lives as long as the event (other queues may
/// name it as a dependency while they hold the event).
struct Shared {
    state: Mutex<Option<State>>,
    done: Condvar,
    keep: Mutex<Vec<Arc<Memory>>>,
    native: Option<Arc<Completion>>,
}

impl Shared {
    fn new(state: State) -> Arc<Shared> {
        Arc::new(Shared {
            state: Mutex::new(Some(state)),
            done: Condvar::new(),
            keep: Mutex::default(),
            native: None,
        })
    }

    /// Lets go of the memory the work used (it is done).
    fn release_kept(&self) {
        let kept = std::mem::take(&mut *self.keep.lock().unwrap_or_else(|e| e.into_inner()));
        drop(kept);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<State>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Shared {
    /// The last handle of native work that may still run: the work and the memory it
    /// uses go to the reaper thread, which waits for the work and then lets both go
    /// (dropping an event never blocks; memory is never freed under running work).
    fn drop(&mut self) {
        let running = matches!(
            self.state.get_mut().unwrap_or_else(|e| e.into_inner()),
            Some(State::Native(_) | State::Waiting)
        );
        let Some(completion) = self.native.take() else {
            return;
        };
        if !running || completion.poll_complete() {
            return;
        }
        let keep = std::mem::take(self.keep.get_mut().unwrap_or_else(|e| e.into_inner()));
        *self.state.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
        reap(completion, keep);
    }
}

/// A job for a background thread: it waits for running work, then lets go of what the
/// work used.
type Job = Box<dyn FnOnce() + Send>;

/// One background thread's queue, made on first use (`None`: the thread could not start).
type Background = OnceLock<Option<Mutex<std::sync::mpsc::Sender<Job>>>>;

/// Runs `job` on the background thread `thread` (named `name`, started on first use),
/// which runs its jobs in the order they came; here when the thread cannot be started.
fn in_background(thread: &'static Background, name: &str, job: Job) {
    let job: Job = Box::new(crate::core::shutdown::counted(job));
    let sender = thread.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || rx.into_iter().for_each(|job| job()))
            .ok()
            .map(|_| Mutex::new(tx))
    });
    let unsent = match sender {
        Some(tx) => tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job)
            .err()
            .map(|e| e.0),
        None => Some(job),
    };
    if let Some(job) = unsent {
        job();
    }
}

/// Hands `completion` and `keep` to the reaper thread, which waits for the work and then
/// lets both go.
fn reap(completion: Arc<Completion>, keep: Vec<Arc<Memory>>) {
    static REAPER: Background = OnceLock::new();
    in_background(
        &REAPER,
        "locus-reaper",
        Box::new(move || {
            let _ = completion.block();
            drop(keep);
        }),
    );
}

/// Runs `job` once `event` is done (whatever its outcome), without waiting here: now
/// when the event is complete, else on a releaser thread of its own (so that a user's
/// gated event holds back neither the reaper nor any other release). Resources and
/// dropped buffers give memory back through it when work still uses it (stream-ordered
/// release that never blocks the caller).
pub(crate) fn when_done(event: Event, job: impl FnOnce() + Send + 'static) {
    if event.is_complete() {
        return job();
    }
    // A thread per job at once (the worker's threads for waiting jobs, reused): jobs
    // complete in whatever order their events do (one slow or gated event holds back no
    // other release). Where no thread can be started, here.
    let job = Arc::new(Mutex::new(Some(move || {
        let _ = event.wait();
        job();
    })));
    let take = |job: &Mutex<Option<_>>| job.lock().unwrap_or_else(|e| e.into_inner()).take();
    let theirs = Arc::clone(&job);
    let started = crate::runtime::worker::run_waiting(move || {
        if let Some(job) = take(&theirs) {
            job();
        }
    });
    if started.is_err() {
        if let Some(job) = take(&job) {
            job();
        }
    }
}

type Signal = Arc<(Mutex<Option<Result<()>>>, Condvar)>;

/// Completes the event made with it by [`Event::user`]. Dropping it unfired fails the
/// event, so no waiter hangs.
pub struct EventTrigger {
    signal: Option<Signal>,
}

impl EventTrigger {
    /// Completes the event successfully.
    pub fn complete(mut self) {
        self.fire(Ok(()));
    }

    /// Completes the event with an error (every waiter gets `why`, as
    /// [`Error::Invalid`]).
    pub fn fail(mut self, why: impl Into<String>) {
        self.fire(Err(Error::Invalid(why.into())));
    }

    /// Completes the event with `error`: every waiter gets it as it is (an
    /// [`Error::OutOfMemory`] stays one).
    pub fn fail_with(mut self, error: Error) {
        self.fire(Err(error));
    }

    fn fire(&mut self, outcome: Result<()>) {
        if let Some(signal) = self.signal.take() {
            let (lock, condvar) = &*signal;
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
            condvar.notify_all();
        }
    }
}

impl Drop for EventTrigger {
    fn drop(&mut self) {
        self.fire(Err(Error::Invalid(
            "the event's trigger was dropped without firing".into(),
        )));
    }
}

/// Completion of asynchronous work. Cheap to clone; every clone waits on the same work.
///
/// ```
/// use std::sync::Arc;
///
/// use locus::{Event, Location, Memory};
///
/// let a = Arc::new(Memory::new(Location::Host, 4096)?);
/// let b = Arc::new(Memory::new(Location::Host, 4096)?);
/// // A user event gates the copy: it starts once the trigger fires.
/// let (ready, trigger) = Event::user();
/// let copied = a.copy_to_async(0, &b, 0, 4096, &[ready])?;
/// assert!(!copied.is_complete());
/// trigger.complete();
/// copied.wait()?;
/// # Ok::<(), locus::Error>(())
/// ```
#[derive(Clone)]
pub struct Event {
    shared: Arc<Shared>,
}

/// Two events are equal when they are the same event (clones of one another): the same
/// work, not merely work in the same state.
impl PartialEq for Event {
    fn eq(&self, other: &Event) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl Eq for Event {}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event(complete: {})", self.is_complete())
    }
}

impl Event {
    /// An event that has already happened.
    pub fn done() -> Event {
        Event {
            shared: Shared::new(State::Finished(Ok(()))),
        }
    }

    /// Native work a backend queued, keeping `keep` (the memory it uses) alive until it
    /// is known to be done.
    pub(crate) fn native(completion: Completion, keep: Vec<Arc<Memory>>) -> Event {
        Event {
            shared: {
                let completion = Arc::new(completion);
                Arc::new(Shared {
                    state: Mutex::new(Some(State::Native(Arc::clone(&completion)))),
                    done: Condvar::new(),
                    keep: Mutex::new(keep),
                    native: Some(completion),
                })
            },
        }
    }

    /// An event that completes once every one of `events` has, failing with the first
    /// failure, without a wait here (done at once when they all are; otherwise one of
    /// locus's threads waits for them): what a queue's later work is ordered after.
    pub fn all(events: &[Event]) -> Result<Event> {
        let running: Vec<Event> = events
            .iter()
            .filter(|e| !e.is_complete())
            .cloned()
            .collect();
        if running.is_empty() {
            return match events.iter().map(Event::wait).fold(Ok(()), Result::and) {
                Ok(()) => Ok(Event::done()),
                Err(e) => {
                    let (event, trigger) = Event::user();
                    trigger.fail_with(e);
                    Ok(event)
                }
            };
        }
        let (event, trigger) = Event::user();
        crate::runtime::worker::run_waiting(move || {
            match running.iter().map(Event::wait).fold(Ok(()), Result::and) {
                Ok(()) => trigger.complete(),
                Err(e) => trigger.fail_with(e),
            }
        })?;
        Ok(event)
    }

    /// An event that completes when its trigger fires (as OpenCL's user events): for
    /// making work wait on something outside locus.
    pub fn user() -> (Event, EventTrigger) {
        let signal: Signal = Arc::default();
        let event = Event {
            shared: Shared::new(State::User(Arc::clone(&signal))),
        };
        (
            event,
            EventTrigger {
                signal: Some(signal),
            },
        )
    }

    /// Runs `f` with the work's outcome once it is done: at once, here, when it already
    /// is; otherwise on a locus thread, so the caller never blocks. For code outside locus
    /// that must start after the work without a host wait of its own: OpenMP's
    /// `omp_fulfill_event` of a detached task, a runtime's user event.
    pub fn on_complete(&self, f: impl FnOnce(Result<()>) + Send + 'static) {
        let event = self.clone();
        when_done(self.clone(), move || f(event.wait()));
    }

    /// Blocks until the work is done; its error, if any (every waiter gets it). The
    /// event's lock is not held while waiting: `is_complete` and other waiters stay
    /// free meanwhile.
    pub fn wait(&self) -> Result<()> {
        let start = (trace::listening() && !self.is_complete()).then(Instant::now);
        let outcome = self.wait_untraced();
        if let Some(start) = start {
            trace::emit(trace::TraceEvent::Waited {
                start,
                end: Instant::now(),
            });
        }
        outcome
    }

    fn wait_untraced(&self) -> Result<()> {
        let mut guard = self.shared.lock();
        loop {
            match guard.take() {
                Some(State::Finished(r)) => {
                    *guard = Some(State::Finished(r.clone()));
                    return r;
                }
                Some(State::Waiting) => {
                    *guard = Some(State::Waiting);
                    guard = self
                        .shared
                        .done
                        .wait(guard)
                        .unwrap_or_else(|e| e.into_inner());
                }
                Some(State::User(signal)) => {
                    *guard = Some(State::User(Arc::clone(&signal)));
                    drop(guard);
                    let outcome = wait_signal(&signal);
                    return self.finish(outcome);
                }
                Some(State::Native(c)) => {
                    *guard = Some(State::Waiting);
                    drop(guard);
                    return self.finish(c.block());
                }
                None => return Ok(()),
            }
        }
    }

    /// Records the outcome, wakes every waiter and lets go of the memory the work used.
    fn finish(&self, outcome: Result<()>) -> Result<()> {
        *self.shared.lock() = Some(State::Finished(outcome.clone()));
        self.shared.done.notify_all();
        self.shared.release_kept();
        outcome
    }

    /// True when the work was submitted to a runtime's own queue (an OpenCL or SYCL
    /// event, a wgpu submission), false when a locus worker thread ran it.
    pub fn is_native(&self) -> bool {
        self.shared.native.is_some()
    }

    /// The runtime's own event for this work, to order a user's work after it on the
    /// device with no host wait (an OpenCL wait list, SYCL's `depends_on`,
    /// `cuStreamWaitEvent`): valid while this `Event` (or a clone) lives. `None` for work
    /// a locus worker thread ran, and where the runtime has no event to hand out
    /// (WebGPU's submissions, OpenMP and host work, which are done when they return).
    pub fn native_event(&self) -> Option<crate::core::completion::NativeEvent> {
        self.shared.native.as_ref().and_then(|c| c.native_event())
    }

    /// The device's own times of the work (`clGetEventProfilingInfo` on an OpenCL queue
    /// made while a trace listened), once it is done; `None` elsewhere.
    pub fn device_times(&self) -> Option<crate::core::completion::DeviceTimes> {
        self.shared.native.as_ref().and_then(|c| c.device_times())
    }

    /// True once the work is known to be done (without blocking). Native work found
    /// done here is recorded as finished, and the memory it used is let go.
    pub fn is_complete(&self) -> bool {
        let mut guard = self.shared.lock();
        match guard.take() {
            Some(State::Native(c)) if c.poll_complete() => {
                // Its outcome: a completed native command reports failure through
                // `wait`, which returns at once now.
                *guard = Some(State::Waiting);
                drop(guard);
                let _ = self.finish(c.block());
                true
            }
            state => {
                let done = match &state {
                    Some(State::Finished(_)) | None => true,
                    Some(State::User(signal)) => {
                        signal.0.lock().map(|o| o.is_some()).unwrap_or(true)
                    }
                    Some(State::Native(_) | State::Waiting) => false,
                };
                *guard = state;
                done
            }
        }
    }
}

impl Dependency for Event {
    fn completion(&self) -> Option<&Completion> {
        self.shared.native.as_deref()
    }

    fn is_complete(&self) -> bool {
        Event::is_complete(self)
    }

    fn wait(&self) -> Result<()> {
        Event::wait(self)
    }
}
