//! Stream-ordered release through every resource (RMM's stream order): memory given back
//! with `release_after` while work on a queue still uses it never blocks the caller, is
//! handed out again at once on the same queue, and to another queue only after the work.
//! The work is a user event that the test holds back; on the code before this suite
//! every adaptor and composite waited for the event in the caller (the first check
//! below timed out).

mod common;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use locus::resource::{self, MemoryResource, Pool};
use locus::{Event, Location, Memory, Queue};

const MIB: usize = 1 << 20;

/// Every kind of resource at `l`, with whether it reuses memory on the releasing queue
/// before the work is done (the upstream gives memory back to the device after it).
fn resources(l: Location) -> Vec<(Arc<dyn MemoryResource>, bool)> {
    let up = resource::upstream(l).unwrap();
    let pool = || -> Arc<dyn MemoryResource> { Arc::new(Pool::new(up.clone(), MIB, 64 * MIB)) };
    vec![
        (up.clone(), false),
        (pool(), true),
        (Arc::new(resource::Statistics::new(pool())), true),
        (Arc::new(resource::Limiting::new(pool(), 8 * MIB)), true),
        (Arc::new(resource::Tracking::new(pool())), true),
        (
            Arc::new(resource::Logging::new(pool(), Box::new(std::io::sink())).unwrap()),
            true,
        ),
        (
            Arc::new(resource::FailureCallback::new(pool(), 1, |_| false)),
            true,
        ),
        (Arc::new(resource::Arena::new(up.clone(), MIB)), true),
        (
            Arc::new(resource::Binning::new(up.clone(), pool(), 256, 64 * 1024, 8).unwrap()),
            true,
        ),
        (
            Arc::new(resource::FixedSize::new(up.clone(), 4096, 8).unwrap()),
            true,
        ),
        (
            Arc::new(resource::Statistics::new(Arc::new(
                resource::Tracking::new(Arc::new(resource::Arena::new(up.clone(), MIB))),
            ))),
            true,
        ),
    ]
}

/// Waits (up to 10 s) for `device`'s live allocations to come back to `live_before`:
/// stream-ordered frees run on locus's releaser threads once the work is done.
fn freed_back_to(device: &dyn locus::Device, live_before: usize, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while device.live_allocations() != live_before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(device.live_allocations(), live_before, "{what}");
}

/// Runs `f` on another thread and says whether it returned within 10 s.
fn returns_promptly(f: impl FnOnce() + Send + 'static) -> bool {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(10)).is_ok()
}

#[test]
fn release_after_never_blocks_and_reuses_in_stream_order() {
    let _serial = common::serial();
    for l in common::required_locations() {
        for (r, reuses) in resources(l) {
            let what = format!("{l}: {}", r.describe());
            let live_before = locus::registry().device(l).unwrap().live_allocations();
            let queue = Queue::new();
            let (work, gate) = Event::user();
            let m = Arc::new(Memory::from_resource_on(&r, 4096, queue).unwrap());
            m.write(0, &[1u8; 4096]).unwrap();
            let key = m.native().key();
            let released = {
                let (m, work) = (Arc::clone(&m), work.clone());
                returns_promptly(move || m.release_after(queue, work).unwrap())
            };
            assert!(released, "{what}: release_after waited for the work");
            assert!(!work.is_complete(), "{what}: the gate is still shut");
            if reuses {
                // The same queue runs after the work: the memory comes back at once.
                let again = Memory::from_resource_on(&r, 4096, queue).unwrap();
                assert_eq!(again.native().key(), key, "{what}: reused on its queue");
                // Another queue must not get it before the work is done.
                let other = Memory::from_resource_on(&r, 4096, Queue::new()).unwrap();
                assert_ne!(other.native().key(), key, "{what}: handed to another queue");
                let released = {
                    let (again, work) = (Arc::new(again), work.clone());
                    returns_promptly(move || again.release_after(queue, work).unwrap())
                };
                assert!(released, "{what}: the second release waited");
                drop(other);
            }
            gate.complete();
            work.wait().unwrap();
            drop(m);
            drop(r);
            // Everything goes back to the device once the work is done (the upstream's
            // release runs on the releaser thread).
            let device = locus::registry().device(l).unwrap();
            freed_back_to(
                device.as_ref(),
                live_before,
                &format!("{what}: freed after the work"),
            );
        }
    }
}

/// The releaser thread frees upstream memory once the work is done, in whatever order
/// events complete.
#[test]
fn upstream_release_after_frees_once_the_work_is_done() {
    let _serial = common::serial();
    let l = Location::Host;
    let device = locus::registry().device(l).unwrap();
    let up = resource::upstream(l).unwrap();
    let before = device.live_allocations();
    let (work, gate) = Event::user();
    let m = Arc::new(Memory::from_resource(&up, 1024).unwrap());
    m.release_after(Queue::new(), work).unwrap();
    assert_eq!(
        device.live_allocations(),
        before + 1,
        "not freed under running work"
    );
    gate.complete();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while device.live_allocations() != before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(device.live_allocations(), before);
}

/// A handle kept past `release_after` is refused, never used: on the code before,
/// `a.write(..)` after the pool handed the same range to `b` returned `Ok` and `b` read
/// `ee ee ee ee` (the use of a freed block from safe code). A second release is an
/// error too, and `b`'s bytes stay its own. (The caller's own handle cannot be used at
/// all: `release_after` takes it; the doctest on it is a compile-fail test.)
#[test]
fn a_handle_kept_past_release_is_refused_and_a_block_is_released_once() {
    let _serial = common::serial();
    for text in ["host", "openmp:0", "opencl:0", "sycl:0", "webgpu:0"] {
        let Some(l) = common::location(text) else {
            continue;
        };
        let pool: Arc<dyn MemoryResource> =
            Arc::new(Pool::new(resource::upstream(l).unwrap(), MIB, 4 * MIB));
        let queue = Queue::new();
        let a = Arc::new(Memory::from_resource_on(&pool, 4096, queue).unwrap());
        let kept = Arc::clone(&a);
        a.release_after(queue, Event::done()).unwrap();
        let b = Memory::from_resource_on(&pool, 4096, queue).unwrap();
        assert_eq!(b.native().key(), kept.native().key(), "{l}: reused at once");
        b.write(0, &[0x11; 4096]).unwrap();
        let err = kept.write(0, &[0xee; 4]).unwrap_err().to_string();
        assert!(
            err.contains(&l.to_string()) && err.contains("given back to its resource"),
            "{l}: {err}"
        );
        let mut seen = [0u8; 4];
        assert!(kept.read(0, &mut seen).is_err(), "{l}: read after release");
        let again = Arc::clone(&kept).release_after(queue, Event::done());
        let err = again.unwrap_err().to_string();
        assert!(err.contains("given back already"), "{l}: {err}");
        b.read(0, &mut seen).unwrap();
        assert_eq!(seen, [0x11; 4], "{l}: the new owner's bytes are its own");
    }
}

/// A block handed out again on its queue while the queue's earlier work still reads it:
/// a synchronous `write` by the new owner waits for that work (work on the queue needs
/// no wait). On the code before, the write ran at once and the queued copy read the
/// overwrite.
#[test]
fn a_synchronous_write_to_a_block_reused_on_its_queue_waits_for_the_queue_s_work() {
    let _serial = common::serial();
    let host = Location::Host;
    let pool: Arc<dyn MemoryResource> =
        Arc::new(Pool::new(resource::upstream(host).unwrap(), MIB, 4 * MIB));
    let queue = Queue::new();
    let x = Arc::new(Memory::from_resource_on(&pool, 4096, queue).unwrap());
    x.write(0, &[7u8; 4096]).unwrap();
    let y = Arc::new(Memory::new(host, 4096).unwrap());
    let (gate, open) = Event::user();
    let work = x.copy_to_async_on(queue, 0, &y, 0, 4096, &[gate]).unwrap();
    let key = x.native().key();
    x.release_after(queue, work.clone()).unwrap();
    let again = Memory::from_resource_on(&pool, 4096, queue).unwrap();
    assert_eq!(again.native().key(), key, "same-queue reuse at once");
    let again = written_after_the_gate(again, open, "the queue's work");
    work.wait().unwrap();
    assert_old_bytes(&y, "the queued copy read the old bytes");
    drop(again);
}

/// Writes 0xff over `memory` on another thread and checks that the write waits until
/// `open` fires (the work it must come after is held by that gate); returns the memory.
fn written_after_the_gate(memory: Memory, open: locus::EventTrigger, what: &str) -> Memory {
    let n = memory.len();
    let writer = std::thread::spawn(move || memory.write(0, &vec![0xffu8; n]).map(|_| memory));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!writer.is_finished(), "the write waited for {what}");
    open.complete();
    writer.join().unwrap().unwrap()
}

/// Checks that `y` holds the 7s written before the block was given back.
fn assert_old_bytes(y: &Memory, what: &str) {
    let mut seen = vec![0u8; y.len()];
    y.read(0, &mut seen).unwrap();
    assert!(seen.iter().all(|&b| b == 7), "{what}");
}

/// Dropping a buffer never blocks: its memory goes back in stream order once the moves
/// in flight on it are done. A move between two locations (every pair that makes a
/// replica), held back by a user event: on the code before, the drop waited for the
/// event (it blocked until the gate opened; `returns_promptly` timed out). The replica
/// is freed once the gate opens.
#[test]
fn dropping_a_buffer_with_a_move_in_flight_returns_at_once_and_frees_after_it() {
    let _serial = common::serial();
    let named = [
        "host", "openmp:0", "opencl:0", "opencl:1", "sycl:0", "webgpu:0",
    ];
    let here: Vec<Location> = named.iter().filter_map(|t| common::location(t)).collect();
    let mut tested = 0;
    for &home in &here {
        for &to in &here {
            let device = locus::registry().device(to).unwrap();
            let live_before = device.live_allocations();
            let b = locus::Buffer::filled(home, 1 << 18, 1.5f32).unwrap();
            let (gate, open) = Event::user();
            b.order_after(&gate);
            b.prefetch(to).unwrap();
            if b.replicas().len() == 1 {
                // Served in place: nothing moves.
                open.complete();
                continue;
            }
            tested += 1;
            assert!(
                returns_promptly(move || drop(b)),
                "{home} -> {to}: the drop waited"
            );
            assert!(
                device.live_allocations() > live_before,
                "{home} -> {to}: not freed under the move"
            );
            open.complete();
            freed_back_to(
                device.as_ref(),
                live_before,
                &format!("{home} -> {to}: freed after the move"),
            );
        }
    }
    println!("{tested} pairs made a replica");
    assert!(tested > 0, "no pair of locations here makes a replica");
}

/// A block another queue's gated work still uses: an allocation on a second queue gets
/// it at once, with that queue's work (and a synchronous use) ordered after the work, as
/// RMM's stream-ordered pool does (`cudaStreamWaitEvent`, no host wait). On the code
/// before, the allocation waited on the host until the gate opened (more than 3 s in
/// the run; here it would never return, since the test opens the gate after).
#[test]
fn a_block_pending_on_another_queue_is_handed_out_at_once_and_ordered_after_its_work() {
    let _serial = common::serial();
    let host = Location::Host;
    let pool: Arc<dyn MemoryResource> =
        Arc::new(Pool::new(resource::upstream(host).unwrap(), MIB, MIB));
    let (queue_a, queue_b) = (Queue::new(), Queue::new());
    let x = Arc::new(Memory::from_resource_on(&pool, MIB, queue_a).unwrap());
    x.write(0, &vec![7u8; MIB]).unwrap();
    let y = Arc::new(Memory::new(host, MIB).unwrap());
    let (gate, open) = Event::user();
    let work = x.copy_to_async_on(queue_a, 0, &y, 0, MIB, &[gate]).unwrap();
    let key = x.native().key();
    x.release_after(queue_a, work.clone()).unwrap();
    let (tx, rx) = mpsc::channel();
    let p = Arc::clone(&pool);
    std::thread::spawn(move || {
        let _ = tx.send(Memory::from_resource_on(&p, MIB, queue_b));
    });
    let on_b = rx
        .recv_timeout(Duration::from_secs(1))
        .expect("the allocation on queue B waited for queue A's gated work")
        .unwrap();
    assert_eq!(
        on_b.native().key(),
        key,
        "the pending block, handed to queue B"
    );
    assert!(!work.is_complete());
    // Queue B follows A's work itself, which a backend chains natively (an OpenCL wait
    // list, a SYCL dependency, the CUDA stream): before, B followed an event made of it
    // that one of locus's threads waited for.
    assert_eq!(
        queue_b.last(),
        Some(work.clone()),
        "queue B's next work follows queue A's work itself"
    );
    // A synchronous write by B's owner waits for A's work; so does B's queued work.
    let on_b = written_after_the_gate(on_b, open, "queue A's work");
    assert_old_bytes(&y, "queue A's copy read the old bytes");
    drop(on_b);
}

/// Two queues whose work is gated on user events that the other side opens after its
/// own allocation: with the pool at its maximum, each allocation takes the block the
/// other queue's work still uses (ordered after it) and returns, so both gates open.
/// On the code before, each allocation host-waited for every pending event: a deadlock.
#[test]
fn two_queues_gated_on_each_other_s_user_events_do_not_deadlock() {
    let _serial = common::serial();
    let host = Location::Host;
    let pool: Arc<dyn MemoryResource> =
        Arc::new(Pool::new(resource::upstream(host).unwrap(), MIB, 2 * MIB));
    let (queue_a, queue_b) = (Queue::new(), Queue::new());
    let sink = Arc::new(Memory::new(host, MIB).unwrap());
    let mut gates = Vec::new();
    for queue in [queue_a, queue_b] {
        let m = Arc::new(Memory::from_resource_on(&pool, MIB, queue).unwrap());
        let (gate, open) = Event::user();
        let work = m
            .copy_to_async_on(queue, 0, &sink, 0, MIB, &[gate])
            .unwrap();
        m.release_after(queue, work).unwrap();
        gates.push(open);
    }
    let open_b = gates.pop().unwrap();
    let open_a = gates.pop().unwrap();
    let (tx, rx) = mpsc::channel();
    for open in [open_b, open_a] {
        let (p, tx) = (Arc::clone(&pool), tx.clone());
        std::thread::spawn(move || {
            let got = Memory::from_resource_on(&p, MIB, Queue::new());
            open.complete(); // the other side's gate, opened only after this allocation
            let _ = tx.send(got.map(|m| m.len()));
        });
    }
    for _ in 0..2 {
        let got = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("an allocation waited on a gate only the other allocation opens");
        assert_eq!(got.unwrap(), MIB);
    }
}
