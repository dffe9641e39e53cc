//! The threads non-blocking calls run on, kept for reuse: starting a thread for every
//! `isend` / `irecv` cost tens of microseconds each (a window of 64 small messages paid
//! it 64 times). A call takes an idle worker when there is one and starts a new one
//! otherwise, so every call still runs at once, none waits behind another (a receive
//! may need the peer's send, which a queue of one would hold up). A worker idle for
//! [`KEEP`] ends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// A unit of work for a worker.
pub(super) type Job = Box<dyn FnOnce() + Send + 'static>;

/// How long an idle worker waits for work before it ends.
const KEEP: Duration = Duration::from_secs(10);

/// Idle workers: each one's number and the channel it waits on.
static IDLE: Mutex<Vec<(u64, Sender<Job>)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

fn idle() -> MutexGuard<'static, Vec<(u64, Sender<Job>)>> {
    IDLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `job` on an idle worker, or on a new one; an error only when no thread could be
/// started.
pub(super) fn run(job: Job) -> std::io::Result<()> {
    let mut job = job;
    loop {
        let worker = idle().pop();
        let Some((_, to)) = worker else { break };
        match to.send(job) {
            Ok(()) => return Ok(()),
            // That worker has ended: try the next one.
            Err(back) => job = back.0,
        }
    }
    let (to, from) = channel::<Job>();
    let number = NEXT.fetch_add(1, Ordering::Relaxed);
    let me = to.clone();
    // The channel's receiver is alive until the thread ends: the send succeeds.
    let _ = to.send(job);
    std::thread::Builder::new()
        .name("locus-mpi-worker".into())
        .spawn(move || work(number, me, from))
        .map(|_| ())
}

/// A worker: runs what it is given, offers itself again, ends after [`KEEP`] idle.
fn work(number: u64, me: Sender<Job>, from: Receiver<Job>) {
    loop {
        let job = match from.recv_timeout(KEEP) {
            Ok(job) => job,
            Err(RecvTimeoutError::Timeout) => {
                let mut list = idle();
                if let Some(at) = list.iter().position(|(n, _)| *n == number) {
                    list.remove(at);
                    return;
                }
                // A caller took this worker off the list and is sending it a job.
                drop(list);
                match from.recv() {
                    Ok(job) => job,
                    Err(_) => return,
                }
            }
            Err(RecvTimeoutError::Disconnected) => return,
        };
        job();
        idle().push((number, me.clone()));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    #[test]
    fn jobs_run_at_once_and_workers_are_reused() {
        // Two jobs that need each other (as a receive needs the peer's send) both finish.
        let (a_to, a_from) = channel::<()>();
        let (b_to, b_from) = channel::<()>();
        let (done_to, done_from) = channel::<u8>();
        let d1 = done_to.clone();
        super::run(Box::new(move || {
            a_to.send(()).unwrap();
            b_from.recv().unwrap();
            d1.send(1).unwrap();
        }))
        .unwrap();
        super::run(Box::new(move || {
            a_from.recv().unwrap();
            b_to.send(()).unwrap();
            done_to.send(2).unwrap();
        }))
        .unwrap();
        let mut got = [done_from.recv().unwrap(), done_from.recv().unwrap()];
        got.sort();
        assert_eq!(got, [1, 2]);
        // The workers are idle again, and the next jobs take them.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let before = super::NEXT.load(std::sync::atomic::Ordering::Relaxed);
        let (to, from) = channel::<()>();
        super::run(Box::new(move || to.send(()).unwrap())).unwrap();
        from.recv().unwrap();
        assert_eq!(
            super::NEXT.load(std::sync::atomic::Ordering::Relaxed),
            before
        );
    }
}
