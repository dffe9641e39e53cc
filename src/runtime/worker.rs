//! The threads that run asynchronous work the runtimes cannot queue themselves (copies
//! between technologies, copies after events of other technologies).
//!
//! Work whose dependencies are all done goes to a small fixed pool (one thread per core,
//! 2 to 8, started on first use): such a job never waits for another job, so a bounded
//! pool cannot deadlock, and a burst of copies costs no thread creation. Work that must
//! first wait for running dependencies gets a thread of its own: a job waiting for a job
//! queued behind it in a bounded pool would wait forever.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::core::config;
use crate::core::error::{Error, Result};

/// One piece of work.
type Job = Box<dyn FnOnce() + Send>;

/// The pool's queue, or `None` when no pool thread could be started.
fn pool() -> Option<&'static Mutex<Sender<Job>>> {
    static POOL: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let (jobs, queue) = channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
        let started = (0..threads)
            .filter(|i| {
                let queue = Arc::clone(&queue);
                std::thread::Builder::new()
                    .name(format!("locus-worker-{i}"))
                    .spawn(move || serve(&queue))
                    .is_ok()
            })
            .count();
        (started > 0).then(|| Mutex::new(jobs))
    })
    .as_ref()
}

/// How long a thread about to sleep for other work spins first (locus's worker threads
/// after a job, and waiters on their events): long enough to catch the next small job
/// or copy, short enough to cost nothing that matters when none comes. 50 us unless
/// `LOCUS_SPIN_US` says otherwise (`0`: never spin, for machines with busy cores).
pub(crate) fn spin() -> Duration {
    static SPIN: OnceLock<Duration> = OnceLock::new();
    *SPIN.get_or_init(|| spin_from(config::text("LOCUS_SPIN_US").as_deref()))
}

/// The spin time `LOCUS_SPIN_US` asks for (microseconds), or 50 us when it is unset or
/// not a number (said on stderr).
fn spin_from(value: Option<&str>) -> Duration {
    let micros = config::parse_number("LOCUS_SPIN_US", value, |_: &u64| true);
    Duration::from_micros(config::or_warn(micros).unwrap_or(50))
}

/// A pool thread: runs jobs as they come, for the life of the process; after each job it
/// spins for [`spin`] before it sleeps.
fn serve(queue: &Mutex<Receiver<Job>>) {
    let spin = spin();
    loop {
        let start = std::time::Instant::now();
        let mut next = None;
        while next.is_none() && start.elapsed() < spin {
            if let Ok(queue) = queue.try_lock() {
                match queue.try_recv() {
                    Ok(job) => next = Some(job),
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
                    Err(std::sync::mpsc::TryRecvError::Empty) => {}
                }
            }
            std::hint::spin_loop();
        }
        let job = match next {
            Some(job) => job,
            None => match queue.lock().unwrap_or_else(|e| e.into_inner()).recv() {
                Ok(job) => job,
                Err(_) => return,
            },
        };
        crate::core::memory::run_queued(job);
    }
}

/// Runs `job`, which must not wait for other asynchronous work, on the pool.
pub(crate) fn run(job: impl FnOnce() + Send + 'static) -> Result<()> {
    let job: Job = Box::new(crate::core::shutdown::counted(job));
    let job = match pool() {
        Some(jobs) => match jobs.lock().unwrap_or_else(|e| e.into_inner()).send(job) {
            Ok(()) => return Ok(()),
            Err(e) => e.0,
        },
        None => job,
    };
    run_waiting(job)
}

/// How long a thread for waiting jobs stays for the next one after its job.
const IDLE_KEEP: Duration = Duration::from_secs(5);

/// Threads for jobs that may wait, idle now: each takes its next job through its sender
/// (with the number that names it in this list).
fn idle_waiters() -> &'static Mutex<Vec<(u64, Sender<Job>)>> {
    static IDLE: Mutex<Vec<(u64, Sender<Job>)>> = Mutex::new(Vec::new());
    &IDLE
}

/// Runs `job`, which may wait for other asynchronous work, on a thread of its own: an
/// idle one that ran such a job before, else a new one. Every job runs at once, whatever
/// the others wait for; a thread stays [`IDLE_KEEP`] for the next job, so a stream of
/// such jobs reuses a few threads instead of making one each (runtimes keep state per
/// thread for good: wgpu keeps an error-scope entry for every thread that ever used its
/// device).
pub(crate) fn run_waiting(job: impl FnOnce() + Send + 'static) -> Result<()> {
    let mut job: Job = Box::new(crate::core::shutdown::counted(job));
    loop {
        let idle = idle_waiters()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        match idle {
            Some((_, thread)) => match thread.send(job) {
                Ok(()) => return Ok(()),
                // That thread has ended: try the next.
                Err(e) => job = e.0,
            },
            None => break,
        }
    }
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let me = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::thread::Builder::new()
        .name("locus-copy".into())
        .spawn(move || wait_and_serve(me, job))
        .map(|_| ())
        .map_err(|e| Error::Invalid(format!("starting a thread for asynchronous work: {e}")))
}

/// A thread for waiting jobs: runs `first`, then offers itself for more until it has
/// been idle for [`IDLE_KEEP`].
fn wait_and_serve(me: u64, first: Job) {
    let (offer, jobs) = channel::<Job>();
    crate::core::memory::run_queued(first);
    loop {
        idle_waiters()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((me, offer.clone()));
        let job = match jobs.recv_timeout(IDLE_KEEP) {
            Ok(job) => job,
            Err(_) => {
                // Leave the list; if someone took this thread's sender meanwhile, a job
                // is on its way: run it.
                let mut idle = idle_waiters().lock().unwrap_or_else(|e| e.into_inner());
                match idle.iter().position(|(id, _)| *id == me) {
                    Some(k) => {
                        idle.swap_remove(k);
                        return;
                    }
                    None => {
                        drop(idle);
                        match jobs.recv() {
                            Ok(job) => job,
                            Err(_) => return,
                        }
                    }
                }
            }
        };
        crate::core::memory::run_queued(job);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn spin_time_comes_from_locus_spin_us() {
        assert_eq!(spin_from(None), Duration::from_micros(50));
        assert_eq!(spin_from(Some("0")), Duration::ZERO);
        assert_eq!(spin_from(Some(" 200 ")), Duration::from_micros(200));
        assert_eq!(spin_from(Some("fast")), Duration::from_micros(50));
    }

    #[test]
    fn a_burst_runs_on_a_few_threads() {
        let (tx, rx) = mpsc::channel();
        for _ in 0..200 {
            let tx = tx.clone();
            run(move || {
                let _ = tx.send(std::thread::current().id());
            })
            .unwrap();
        }
        let threads: std::collections::HashSet<_> = (0..200)
            .map(|_| rx.recv_timeout(Duration::from_secs(20)).unwrap())
            .collect();
        assert!(threads.len() <= 8, "{} threads for 200 jobs", threads.len());
    }

    /// A stream of waiting jobs, one after another, reuses a thread instead of starting
    /// one per job (the code before started one each).
    #[test]
    fn waiting_jobs_one_after_another_reuse_a_thread() {
        let mut threads = std::collections::HashSet::new();
        for _ in 0..50 {
            let (tx, rx) = mpsc::channel();
            run_waiting(move || {
                let _ = tx.send(std::thread::current().id());
            })
            .unwrap();
            threads.insert(rx.recv_timeout(Duration::from_secs(20)).unwrap());
            // The thread offers itself again once its job has returned.
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(
            threads.len() <= 4,
            "{} threads for 50 jobs in turn",
            threads.len()
        );
    }

    #[test]
    fn waiting_jobs_each_get_a_thread() {
        // Ten jobs each waiting for the next one's signal: all must run at once.
        let (first_tx, mut rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel();
        for _ in 0..10 {
            let (tx, next_rx) = mpsc::channel::<()>();
            let wait_on = std::mem::replace(&mut rx, next_rx);
            let done = done_tx.clone();
            run_waiting(move || {
                let _ = wait_on.recv();
                let _ = tx.send(());
                let _ = done.send(());
            })
            .unwrap();
        }
        first_tx.send(()).unwrap();
        for _ in 0..10 {
            done_rx
                .recv_timeout(Duration::from_secs(20))
                .expect("every job ran");
        }
    }
}
