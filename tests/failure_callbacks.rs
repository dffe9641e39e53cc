//! A failure callback that gives back memory of the very resource asking for more (the
//! usual shape: a cache of blocks dropped when an allocation fails), at every location:
//! the pool and the fixed-size resource over a failure-callback adaptor serve it and the
//! retry succeeds. On the code before, both held their lock while asking the upstream,
//! and the callback's free deadlocked the thread (2 of 2 runs hung).

mod common;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use locus::resource::{self, FailureCallback, FixedSize, Limiting, MemoryResource, Pool};
use locus::{Location, Memory};

const MIB: usize = 1 << 20;

/// Runs `f` on a thread of its own and fails the test (instead of hanging it) when it
/// has not finished within a minute.
fn within_a_minute(what: String, f: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: deadlocked (no answer in 60 s)"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: the thread panicked"),
    }
}

/// A resource made over `upstream` (the failure-callback adaptor), at `l`.
type Over = fn(Arc<dyn MemoryResource>) -> Arc<dyn MemoryResource>;

fn callback_frees_a_block_of_the_resource_above(l: Location, name: &'static str, over: Over) {
    within_a_minute(format!("{name} at {l}"), move || {
        // A budget of two chunks; a cache of blocks the callback may drop.
        let limited: Arc<dyn MemoryResource> =
            Arc::new(Limiting::new(resource::upstream(l).unwrap(), 2 * MIB));
        let cache: Arc<Mutex<Vec<Memory>>> = Arc::new(Mutex::new(Vec::new()));
        let dropping = Arc::clone(&cache);
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let retrying: Arc<dyn MemoryResource> =
            Arc::new(FailureCallback::new(limited, 4, move |_| {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                // Frees a block of the resource that is, at this moment, asking for more.
                dropping.lock().unwrap().pop().is_some()
            }));
        let top = over(retrying);
        for _ in 0..2 {
            let m = Memory::from_resource(&top, MIB).unwrap();
            m.fill(0..MIB, &[1]).unwrap();
            cache.lock().unwrap().push(m);
        }
        // The budget is spent: this one is served by the callback's free.
        let third = Memory::from_resource(&top, MIB)
            .unwrap_or_else(|e| panic!("{name} at {l}: the retry after the callback: {e}"));
        third.fill(0..MIB, &[3]).unwrap();
        let mut got = vec![0u8; MIB];
        third.read(0, &mut got).unwrap();
        assert!(got.iter().all(|&b| b == 3), "{name} at {l}");
        assert!(
            calls.load(std::sync::atomic::Ordering::SeqCst) >= 1,
            "{name} at {l}: the callback ran"
        );
    });
}

#[test]
fn a_pool_serves_a_callback_that_frees_one_of_its_blocks() {
    let _serial = common::serial();
    for l in common::required_locations() {
        callback_frees_a_block_of_the_resource_above(l, "pool", |up| {
            Arc::new(Pool::new(up, MIB, 64 * MIB))
        });
    }
}

#[test]
fn a_fixed_size_resource_serves_a_callback_that_frees_one_of_its_blocks() {
    let _serial = common::serial();
    for l in common::required_locations() {
        callback_frees_a_block_of_the_resource_above(l, "fixed-size", |up| {
            // One block per chunk, so each allocation asks the upstream.
            Arc::new(FixedSize::new(up, MIB, 1).unwrap())
        });
    }
}

/// A callback that always answers "retry" (and frees nothing) is called a bounded number
/// of times, and the error says how many.
#[test]
fn a_callback_that_always_retries_is_bounded() {
    let _serial = common::serial();
    let l = Location::Host;
    let limited: Arc<dyn MemoryResource> =
        Arc::new(Limiting::new(resource::upstream(l).unwrap(), 4096));
    let retrying = FailureCallback::new(limited, 5, |_| true);
    let e = retrying.allocate(8192, 64).unwrap_err();
    assert!(e.is_out_of_memory(), "{e}");
    assert!(e.to_string().contains("called 5 times"), "{e}");
}
