//! The end of the process: work locus runs in the background (copies on worker threads,
//! the reaper and the releaser) is counted while it runs, and when the process exits
//! (`main` returns, `std::process::exit`, the interpreter ends) a C `atexit` handler,
//! registered when the registry is first made (after every runtime was loaded), waits for
//! it before the runtimes' own destructors run. Work still running after the wait (gated
//! on a user event nobody fires) is abandoned: from then on locus makes no call that
//! releases a native object ([`is_shutting_down`]), so nothing touches a runtime that is
//! shutting down, and no background thread panics.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static IDLE: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());

/// True once the process is exiting: backends then leave native objects (events,
/// buffers) to the process's end instead of releasing them through a runtime that may
/// already be gone.
pub fn is_shutting_down() -> bool {
    #[cfg(test)]
    if ENDING_HERE.with(std::cell::Cell::get) {
        return true;
    }
    SHUTTING_DOWN.load(Ordering::Acquire)
}

#[cfg(test)]
thread_local! {
    /// A unit test's stand-in for the process's end, on its own thread only (the flag
    /// itself would end every test running beside it).
    static ENDING_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes [`is_shutting_down`] true on this thread (`true`) or as the process says
/// (`false`): unit tests of what backends skip at the end.
#[cfg(test)]
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn pretend_ending_on_this_thread(ending: bool) {
    ENDING_HERE.with(|e| e.set(ending));
}

/// Counts one piece of background work while it lives (made when the work is queued,
/// dropped when it ends, ran or not).
pub(crate) struct InFlight(());

impl InFlight {
    pub(crate) fn new() -> InFlight {
        IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        InFlight(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if IN_FLIGHT.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _guard = IDLE.0.lock().unwrap_or_else(|e| e.into_inner());
            IDLE.1.notify_all();
        }
    }
}

/// `job`, counted as background work from now until it has run (or is dropped unrun).
pub(crate) fn counted(job: impl FnOnce() + Send + 'static) -> impl FnOnce() + Send + 'static {
    let in_flight = InFlight::new();
    move || {
        job();
        drop(in_flight);
    }
}

/// Waits until no background work is running, for at most `limit`; true when none is.
pub(crate) fn wait_idle(limit: Duration) -> bool {
    let now = Instant::now();
    // A limit beyond what the clock can hold waits without a deadline.
    let deadline = now.checked_add(limit);
    let mut guard = IDLE.0.lock().unwrap_or_else(|e| e.into_inner());
    while IN_FLIGHT.load(Ordering::Acquire) > 0 {
        let now = Instant::now();
        let left = match deadline {
            Some(d) if now >= d => return false,
            Some(d) => d - now,
            None => Duration::from_secs(3600),
        };
        guard = match IDLE.1.wait_timeout(guard, left) {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        };
    }
    true
}

/// The longest `LOCUS_EXIT_WAIT_S` taken (an hour): a larger value is a warning and the
/// default, so that no setting can overflow the deadline or hold a process for days.
pub(crate) const MAX_EXIT_WAIT_S: f64 = 3600.0;

/// How long the exit handler waits for background work: `LOCUS_EXIT_WAIT_S` seconds
/// (0 to [`MAX_EXIT_WAIT_S`]), else 10.
fn exit_wait() -> Duration {
    let seconds = super::config::or_warn(super::config::number(
        "LOCUS_EXIT_WAIT_S",
        exit_wait_accepted,
    ))
    .unwrap_or(10.0);
    Duration::try_from_secs_f64(seconds).unwrap_or(Duration::from_secs(10))
}

fn exit_wait_accepted(seconds: &f64) -> bool {
    seconds.is_finite() && (0.0..=MAX_EXIT_WAIT_S).contains(seconds)
}

/// Refuses a call into `location`'s runtime once the process is ending: its runtime may
/// already have run its own destructors (an `atexit` handler of the program's, registered
/// before locus's, runs after them), and a call into it then aborts the process ("pure
/// virtual function called"). The host needs no runtime and is never refused.
pub fn check_runtime_alive(
    location: super::location::Location,
    call: &'static str,
) -> super::error::Result<()> {
    super::fork::check(call)?;
    if location.is_host() || !is_shutting_down() {
        return Ok(());
    }
    Err(super::error::Error::Backend {
        location,
        call,
        message: "the process is exiting and the runtime may already be shut down".into(),
        hint: "make this call before `exit` (an `atexit` handler registered before locus was first used runs after the runtimes have ended)".into(),
    })
}

extern "C" fn at_exit() {
    // Nothing may unwind out of an `extern "C"` function: a panic here is caught and
    // the process goes on ending, with the safety net set whatever happened.
    // A forked child's count of work in flight is its parent's (no thread of its own
    // runs that work): nothing to wait for.
    let _ = std::panic::catch_unwind(|| {
        if !super::fork::is_forked_child() {
            wait_idle(exit_wait());
        }
    });
    let hooks = std::mem::take(&mut *AFTER_IDLE.lock().unwrap_or_else(|e| e.into_inner()));
    for hook in hooks {
        let _ = std::panic::catch_unwind(hook);
    }
    SHUTTING_DOWN.store(true, Ordering::Release);
}

/// What runs at the process's end once its background work is done (or waited for).
static AFTER_IDLE: std::sync::Mutex<Vec<fn()>> = std::sync::Mutex::new(Vec::new());

/// Runs `hook` at the process's end, after the exit handler waited for background work
/// and before any runtime is considered gone (a trace file's last events are written).
pub(crate) fn after_idle_at_exit(hook: fn()) {
    AFTER_IDLE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(hook);
}

/// Registers the exit handler, once. Called after the runtimes are loaded, so that it
/// runs before their destructors (`atexit` handlers run in reverse order of
/// registration, and before the libraries' own destructors).
pub(crate) fn register_exit_handler() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: `at_exit` is a plain `extern "C" fn()` that never unwinds.
        unsafe { libc::atexit(at_exit) };
        super::fork::register_child_handler();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_waits_for_work_in_flight_and_gives_up_at_its_limit() {
        let work = InFlight::new();
        assert!(!wait_idle(Duration::from_millis(20)), "work in flight");
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            drop(work);
        });
        assert!(wait_idle(Duration::from_secs(10)));
        t.join().unwrap();
    }

    /// `LOCUS_EXIT_WAIT_S=1e20` (the old code: `Duration::from_secs_f64` panicked in the
    /// exit handler, which then never set the safety net) and any limit the clock cannot
    /// hold are handled without a panic.
    #[test]
    fn huge_waits_neither_panic_nor_overflow() {
        assert!(wait_idle(Duration::MAX), "nothing in flight");
        let read = |v| {
            super::super::config::parse_number::<f64>(
                "LOCUS_EXIT_WAIT_S",
                Some(v),
                exit_wait_accepted,
            )
        };
        assert!(read("1e20").is_err() && read("inf").is_err() && read("-1").is_err());
        assert_eq!(read("3600").unwrap(), Some(3600.0));
    }
}
