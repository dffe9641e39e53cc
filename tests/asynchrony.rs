//! Asynchronous copies with the one `Event` type on every pair, native OpenCL
//! dependencies, and stream-ordered reuse of pooled memory.

mod common;

use std::sync::Arc;

use locus::resource::{self, MemoryResource, Pool};
use locus::{Event, Location, Memory, Queue};

const MIB: usize = 1 << 20;

fn address(m: &Memory) -> usize {
    match m.native() {
        locus::Native::Host { ptr } => *ptr as usize,
        other => panic!("not host memory: {other:?}"),
    }
}

#[test]
fn async_copies_on_every_pair_chain_through_events() {
    let _serial = common::serial();
    let n = 2 * MIB + 3;
    let data = common::pattern_u8(n, 9);
    for src in locus::available() {
        for dst in locus::available() {
            let a = Arc::new(Memory::new(src, n).unwrap());
            a.write(0, &data).unwrap();
            let b = Arc::new(Memory::new(dst, n).unwrap());
            let c = Arc::new(Memory::new(src, n).unwrap());
            // a -> b, then b -> c after it: the second depends on the first.
            let first = a.copy_to_async(0, &b, 0, n, &[]).unwrap();
            let second = b
                .copy_to_async(0, &c, 0, n, std::slice::from_ref(&first))
                .unwrap();
            second.wait().unwrap();
            assert!(
                first.is_complete(),
                "{src} -> {dst}: the dependency finished first"
            );
            let mut back = vec![0u8; n];
            c.read(0, &mut back).unwrap();
            assert!(back == data, "{src} -> {dst} -> {src}");
            // Waiting twice is fine; out of range fails at once and starts nothing.
            second.wait().unwrap();
            assert!(a.copy_to_async(1, &b, 0, n, &[]).is_err());
        }
    }
}

#[test]
fn device_copies_are_native_where_the_technology_has_a_queue() {
    let _serial = common::serial();
    let n = MIB;
    for l in locus::available() {
        let a = Arc::new(Memory::new(l, n).unwrap());
        let b = Arc::new(Memory::new(l, n).unwrap());
        let host = Arc::new(Memory::new(Location::Host, n).unwrap());
        let data = common::pattern_u8(n, 11);
        host.write(0, &data).unwrap();
        // CUDA and HIP copy within a device on its stream (`cuMemcpyDtoDAsync`,
        // `hipMemcpyAsync`) too: expecting a worker thread there was a false failure
        // waiting for the first GPU run.
        let native = matches!(
            l.technology(),
            locus::Technology::OpenCl
                | locus::Technology::Sycl
                | locus::Technology::WebGpu
                | locus::Technology::Cuda
                | locus::Technology::Hip
        );
        let up = host.copy_to_async(0, &a, 0, n, &[]).unwrap();
        // A dependency the device cannot take natively (a worker thread's upload here,
        // except on OpenCL, SYCL and WebGPU) is waited for by the copy's worker thread once it is pending,
        // and needs no wait once done: then the copy is the device's own.
        if !up.is_native() {
            up.wait().unwrap();
        }
        let within = a
            .copy_to_async(0, &b, 0, n, std::slice::from_ref(&up))
            .unwrap();
        assert_eq!(within.is_native(), native, "{l}: a copy within the device");
        // SYCL and OpenCL copy to and from host memory on their own queues too (the
        // upload above, and this download after the device copy's event); WebGPU
        // uploads of up to 1 MiB (`Queue::write_buffer`), except on unified memory,
        // where its buffers are mapped in place and an upload is one memcpy (the
        // synchronous write, on a worker thread).
        let host_native = matches!(
            l.technology(),
            locus::Technology::OpenCl | locus::Technology::Sycl
        );
        let upload_native = host_native
            || (l.technology() == locus::Technology::WebGpu
                && a.host_access() == locus::HostAccess::None);
        assert_eq!(up.is_native(), upload_native, "{l}: the upload");
        let back_host = Arc::new(Memory::new(Location::Host, n).unwrap());
        let down = b
            .copy_to_async(0, &back_host, 0, n, std::slice::from_ref(&within))
            .unwrap();
        assert_eq!(down.is_native(), host_native, "{l}: the download");
        down.wait().unwrap();
        let mut seen = vec![0u8; n];
        back_host.read(0, &mut seen).unwrap();
        assert!(seen == data, "{l}: downloaded after the device copy");
        within.wait().unwrap();
        let mut back = vec![0u8; n];
        b.read(0, &mut back).unwrap();
        assert!(back == data, "{l}");
    }
}

#[test]
fn copies_with_memory_at_a_host_address_are_the_runtimes_own_where_planned() {
    // OpenMP initial-device memory and SYCL USM of a CPU device have host addresses: an
    // OpenCL device can read and write them on its own queue (non-blocking
    // clEnqueueReadBuffer / clEnqueueWriteBuffer) and a SYCL queue OpenMP's
    // (queue.memcpy), as they do host memory. They do so asynchronously where the
    // planner chose that runtime's call for the synchronous copy too (Intel's runtime
    // here: a locus worker copying through a mapping ran at half speed beside its
    // threads); elsewhere (PoCL, whose writes from a pointer are slow) a worker takes
    // the planned route.
    use locus::Technology::{OpenCl, OpenMp, Sycl};
    let _serial = common::serial();
    let all = locus::available();
    let n = 3 * MIB + 12;
    let data = common::pattern_u8(n, 9);
    let planned_call = |a: &Memory, b: &Memory| {
        locus::registry()
            .matrix()
            .plan(
                locus::transfer::Endpoint::of(a),
                locus::transfer::Endpoint::of(b),
                n,
            )
            .1
            .is_runtime_call()
    };
    let mut native_somewhere = false;
    for cl in &all {
        for other in &all {
            let runtime_side = matches!(
                (cl.technology(), other.technology()),
                (OpenCl, OpenMp) | (OpenCl, Sycl) | (Sycl, OpenMp)
            );
            if !runtime_side {
                continue;
            }
            let there = Arc::new(Memory::new(*other, n).unwrap());
            if there.host_access() != locus::HostAccess::Pointer {
                continue;
            }
            there.write(0, &data).unwrap();
            let mine = Arc::new(Memory::new(*cl, n).unwrap());
            let up = there.copy_to_async(0, &mine, 0, n, &[]).unwrap();
            assert_eq!(
                up.is_native(),
                planned_call(&there, &mine),
                "{other} -> {cl}: the runtime's own write where planned"
            );
            // A dependency still running on a worker is one no runtime can take natively
            // (the copy would go to a worker too): the upload is done before the download.
            if !up.is_native() {
                up.wait().unwrap();
            }
            let back = Arc::new(Memory::new(*other, n).unwrap());
            let down = mine
                .copy_to_async(0, &back, 0, n, std::slice::from_ref(&up))
                .unwrap();
            assert_eq!(
                down.is_native(),
                planned_call(&mine, &back),
                "{cl} -> {other}: the runtime's own read where planned"
            );
            native_somewhere |= up.is_native() || down.is_native();
            down.wait().unwrap();
            let mut got = vec![0u8; n];
            back.read(0, &mut got).unwrap();
            assert!(got == data, "{other} -> {cl} -> {other}: the data arrived");
        }
    }
    let intel = all.iter().any(|l| l.technology() == Sycl);
    assert!(
        native_somewhere || !intel,
        "with Intel's runtime here, some pair is planned as its own call"
    );
}

#[test]
fn opencl_copies_are_native_and_ordered() {
    let _serial = common::serial();
    // Not `common::location`: the valgrind run limits discovery to the host
    // (LOCUS_BACKENDS=host) with LOCUS_REQUIRE still naming OpenCL.
    let Some(l) = locus::available()
        .into_iter()
        .find(|l| l.technology() == locus::Technology::OpenCl)
    else {
        eprintln!("SKIPPED: no OpenCL location here");
        return;
    };
    let n = 8 * MIB;
    let data = common::pattern_u8(n, 3);
    let a = Arc::new(Memory::new(l, n).unwrap());
    a.write(0, &data).unwrap();
    let b = Arc::new(Memory::new(l, n).unwrap());
    let c = Arc::new(Memory::new(l, n).unwrap());
    let mut chain = Event::done();
    for _ in 0..5 {
        chain = a.copy_to_async(0, &b, 0, n, &[chain]).unwrap();
        chain = b.copy_to_async(0, &c, 0, n, &[chain]).unwrap();
    }
    chain.wait().unwrap();
    let mut back = vec![0u8; n];
    c.read(0, &mut back).unwrap();
    assert!(back == data);
}

#[test]
fn pooled_memory_freed_on_one_queue_waits_for_its_work_before_another_queue_gets_it() {
    let _serial = common::serial();
    let host = Location::Host;
    let block = 32 * MIB;
    let pool: Arc<dyn MemoryResource> = Arc::new(Pool::new(
        resource::upstream(host).unwrap(),
        2 * block,
        2 * block,
    ));
    let (queue_a, queue_b) = (Queue::new(), Queue::new());
    // Slow work on queue A: a big copy first, then x -> y after it.
    let big = Arc::new(Memory::new(host, 512 * MIB).unwrap());
    let big_dst = Arc::new(Memory::new(host, 512 * MIB).unwrap());
    let x = Arc::new(Memory::from_resource_on(&pool, block, queue_a).unwrap());
    let _ = queue_b;
    let original = common::pattern_u8(block, 5);
    x.write(0, &original).unwrap();
    let x_address = address(&x);
    let y = Arc::new(Memory::new(host, block).unwrap());
    // Queue A's work waits on a gate the test opens: pending for certain until then.
    let (gate, open) = Event::user();
    let slow = big
        .copy_to_async(0, &big_dst, 0, 512 * MIB, &[gate])
        .unwrap();
    let work = x.copy_to_async(0, &y, 0, block, &[slow]).unwrap();
    // Free x now, while the copy out of it is still pending.
    x.release_after(queue_a, work.clone()).unwrap();
    // Queue B gets the other half at once, and x's range only after the work is done.
    let on_b = Memory::from_resource_on(&pool, block, queue_b).unwrap();
    assert_ne!(address(&on_b), x_address);
    assert!(!work.is_complete());
    open.complete();
    // x's range goes to queue B with B's work ordered after A's (RMM's stream wait):
    // the pool does not wait, and the synchronous write below does.
    let on_b2 = Memory::from_resource_on(&pool, block, queue_b).unwrap();
    assert_eq!(address(&on_b2), x_address);
    on_b2.write(0, &vec![0xFF; block]).unwrap();
    assert!(
        work.is_complete(),
        "the write on queue B's block waited for queue A's work"
    );
    let mut seen = vec![0u8; block];
    y.read(0, &mut seen).unwrap();
    assert!(
        seen == original,
        "queue A's copy read x before queue B overwrote it"
    );
    drop((on_b, on_b2));
}

#[test]
fn memory_freed_on_a_queue_is_reused_on_that_queue_at_once_and_stays_ordered() {
    let _serial = common::serial();
    let host = Location::Host;
    let block = 32 * MIB;
    let pool: Arc<dyn MemoryResource> = Arc::new(Pool::new(
        resource::upstream(host).unwrap(),
        2 * block,
        2 * block,
    ));
    let queue = Queue::new();
    // Work on the queue: a big copy, then a copy out of x (ordered after it).
    let big = Arc::new(Memory::new(host, 512 * MIB).unwrap());
    let big_dst = Arc::new(Memory::new(host, 512 * MIB).unwrap());
    let x = Arc::new(Memory::from_resource_on(&pool, block, queue).unwrap());
    let original = common::pattern_u8(block, 9);
    x.write(0, &original).unwrap();
    let x_address = address(&x);
    let y = Arc::new(Memory::new(host, block).unwrap());
    // The queue's first copy waits on a gate the test opens: the work below is pending
    // for certain until then, whatever the machine's speed.
    let (gate, open) = Event::user();
    let slow = big
        .copy_to_async_on(queue, 0, &big_dst, 0, 512 * MIB, &[gate])
        .unwrap();
    let work = x.copy_to_async_on(queue, 0, &y, 0, block, &[]).unwrap();
    x.release_after(queue, work.clone()).unwrap();
    // The same queue gets x's range back at once, without waiting for the work...
    let again = Arc::new(Memory::from_resource_on(&pool, block, queue).unwrap());
    assert_eq!(address(&again), x_address, "same-queue reuse");
    assert!(
        !slow.is_complete() && !work.is_complete(),
        "handed out while the queue's earlier work was still pending (no synchronisation)"
    );
    open.complete();
    // ... and its new owner's work on the queue runs after the earlier work: the copy
    // out of x read the original bytes, not the overwrite.
    let ones = Arc::new(Memory::new(host, block).unwrap());
    ones.fill(0..block, &[0xFF]).unwrap();
    let overwrite = ones
        .copy_to_async_on(queue, 0, &again, 0, block, &[])
        .unwrap();
    overwrite.wait().unwrap();
    assert!(
        work.is_complete(),
        "queue order: the earlier copy finished first"
    );
    let mut seen = vec![0u8; block];
    y.read(0, &mut seen).unwrap();
    assert!(
        seen == original,
        "the copy out of x ran before x was overwritten"
    );
    again.read(0, &mut seen).unwrap();
    assert!(seen.iter().all(|&b| b == 0xFF));
    queue.wait().unwrap();
    assert!(queue.last().is_none());
}

#[test]
fn queue_order_holds_on_every_location() {
    let _serial = common::serial();
    for l in locus::available() {
        // Four copies on one queue, each reading what the one before wrote: the data
        // only arrives if they ran in order.
        let n = 4 * MIB;
        let data = common::pattern_u8(n, 3);
        let a = Arc::new(Memory::new(l, n).unwrap());
        let b = Arc::new(Memory::new(l, n).unwrap());
        let d = Arc::new(Memory::new(l, n).unwrap());
        let c = Arc::new(Memory::new(Location::Host, n).unwrap());
        let src = Arc::new(Memory::new(Location::Host, n).unwrap());
        src.write(0, &data).unwrap();
        let queue = Queue::new();
        src.copy_to_async_on(queue, 0, &a, 0, n, &[]).unwrap();
        // Two copies within the device: native ones follow each other on the device's
        // own queue (WebGPU without a host wait between them).
        a.copy_to_async_on(queue, 0, &b, 0, n, &[]).unwrap();
        b.copy_to_async_on(queue, 0, &d, 0, n, &[]).unwrap();
        d.copy_to_async_on(queue, 0, &c, 0, n, &[]).unwrap();
        queue.wait().unwrap();
        let mut back = vec![0u8; n];
        c.read(0, &mut back).unwrap();
        assert!(back == data, "{l}: the queue ran its copies in order");
    }
}

#[test]
fn user_events_gate_work_and_carry_failure() {
    let n = MIB;
    let data = common::pattern_u8(n, 5);
    let src = Arc::new(Memory::new(Location::Host, n).unwrap());
    src.write(0, &data).unwrap();
    let dst = Arc::new(Memory::new(Location::Host, n).unwrap());
    let (gate, open) = Event::user();
    let copy = src
        .copy_to_async(0, &dst, 0, n, std::slice::from_ref(&gate))
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(!gate.is_complete() && !copy.is_complete(), "gated");
    open.complete();
    copy.wait().unwrap();
    let mut back = vec![0u8; n];
    dst.read(0, &mut back).unwrap();
    assert!(back == data);
    // A failed gate fails the work that waits on it; a dropped trigger fails the event.
    let (failed, trigger) = Event::user();
    trigger.fail("the producer gave up");
    let err = src
        .copy_to_async(0, &dst, 0, n, &[failed])
        .unwrap()
        .wait()
        .unwrap_err();
    assert!(err.to_string().contains("the producer gave up"), "{err}");
    let (orphan, trigger) = Event::user();
    drop(trigger);
    assert!(orphan.wait().unwrap_err().to_string().contains("dropped"));
}

/// A failure keeps its kind through the events that wait on it: an out-of-memory error
/// stays one (the failure-callback adaptor and Python's `MemoryError` go by it). The code
/// before kept an event's failure as text and gave every waiter `Error::Invalid`.
#[test]
fn a_failure_reaches_every_waiter_with_its_kind() {
    let n = 4096;
    let src = Arc::new(Memory::new(Location::Host, n).unwrap());
    let dst = Arc::new(Memory::new(Location::Host, n).unwrap());
    let (failed, trigger) = Event::user();
    trigger.fail_with(locus::Error::OutOfMemory {
        location: Location::Host,
        requested: 1 << 40,
        by: "the producer's pool".into(),
        reason: "at its maximum".into(),
    });
    assert!(failed.wait().unwrap_err().is_out_of_memory());
    // Through a worker's copy that waited on it, and through Event::all.
    let copy = src
        .copy_to_async(0, &dst, 0, n, std::slice::from_ref(&failed))
        .unwrap();
    let err = copy.wait().unwrap_err();
    assert!(err.is_out_of_memory(), "{err:?}");
    assert!(
        copy.wait().unwrap_err().is_out_of_memory(),
        "a second waiter"
    );
    let all = Event::all(&[Event::done(), failed]).unwrap();
    assert!(all.wait().unwrap_err().is_out_of_memory());
}

#[test]
fn waiting_on_an_event_does_not_block_its_polling_or_other_waiters() {
    let n = MIB;
    let src = Arc::new(Memory::new(Location::Host, n).unwrap());
    let dst = Arc::new(Memory::new(Location::Host, n).unwrap());
    let (gate, open) = Event::user();
    let copy = src.copy_to_async(0, &dst, 0, n, &[gate]).unwrap();
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let copy = copy.clone();
            std::thread::spawn(move || copy.wait())
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(50));
    // Polling answers at once while two threads wait (a poll that blocked would
    // never answer: the gate is still closed).
    let (tx, rx) = std::sync::mpsc::channel();
    let polled = copy.clone();
    std::thread::spawn(move || tx.send(polled.is_complete()));
    let answer = rx.recv_timeout(std::time::Duration::from_secs(5));
    assert_eq!(answer, Ok(false), "is_complete answered without blocking");
    open.complete();
    for w in waiters {
        w.join().unwrap().unwrap();
    }
    assert!(copy.is_complete());
}

#[test]
fn memory_used_by_async_work_is_let_go_once_the_work_is_done() {
    let _serial = common::serial();
    let n = MIB;
    for l in locus::available() {
        for polled in [false, true] {
            let queue = Queue::new();
            let a = Arc::new(Memory::new(l, n).unwrap());
            let b = Arc::new(Memory::new(l, n).unwrap());
            let (weak_a, weak_b) = (Arc::downgrade(&a), Arc::downgrade(&b));
            let event = a.copy_to_async_on(queue, 0, &b, 0, n, &[]).unwrap();
            // Dropped while the copy may run: the work keeps both alive.
            drop((a, b));
            if polled {
                while !event.is_complete() {
                    std::thread::yield_now();
                }
            } else {
                event.wait().unwrap();
            }
            // Done: neither the event (still held) nor the queue's record of it keeps
            // the memory any longer.
            assert!(
                weak_a.upgrade().is_none() && weak_b.upgrade().is_none(),
                "{l} (polled: {polled}): memory outlived its finished work"
            );
            assert!(event.is_complete());
        }
    }
}

#[test]
fn pooled_blocks_copy_between_each_other_and_come_back_through_events() {
    let _serial = common::serial();
    let n = MIB;
    for l in locus::available() {
        let pool: Arc<dyn MemoryResource> =
            Arc::new(Pool::new(resource::upstream(l).unwrap(), 4 * n, 64 * n));
        let queue = Queue::new();
        let a = Arc::new(Memory::from_resource(&pool, n).unwrap());
        let b = Arc::new(Memory::from_resource(&pool, n).unwrap());
        // Two blocks of one pool chunk (one wgpu buffer on WebGPU): copies between them
        // work, synchronous and asynchronous.
        let data = common::pattern_u8(n, 13);
        a.write(0, &data).unwrap();
        a.copy_to(0, &b, 0, n).unwrap();
        let mut back = vec![0u8; n];
        b.read(0, &mut back).unwrap();
        assert!(back == data, "{l}: copy between two blocks of one pool");
        b.fill(0..n, &[0]).unwrap();
        a.copy_to_async_on(queue, 0, &b, 0, n, &[])
            .unwrap()
            .wait()
            .unwrap();
        b.read(0, &mut back).unwrap();
        assert!(
            back == data,
            "{l}: async copy between two blocks of one pool"
        );
        let event = a.copy_to_async_on(queue, 0, &b, 0, n, &[]).unwrap();
        // Only the copy holds b now, and a goes back to the pool after the copy: the
        // pool checks that event, whose completion lets go of b, which comes back to
        // the same pool (a pool holding its lock meanwhile would deadlock).
        drop(b);
        a.release_after(queue, event).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (tx, rx) = std::sync::mpsc::channel();
        let p = Arc::clone(&pool);
        std::thread::spawn(move || {
            let blocks: Vec<_> = (0..4).map(|_| Memory::from_resource(&p, n)).collect();
            let _ = tx.send(blocks.iter().all(Result::is_ok));
        });
        let answer = rx.recv_timeout(std::time::Duration::from_secs(20));
        assert_eq!(answer, Ok(true), "{l}: the pool answered");
    }
}

#[test]
fn any_location_takes_any_other_locations_event_as_a_dependency() {
    let _serial = common::serial();
    let n = MIB;
    let data = common::pattern_u8(n, 17);
    for first in locus::available() {
        for second in locus::available() {
            // Work within `first`, then work within `second` after it, then a copy out.
            let a = Arc::new(Memory::new(first, n).unwrap());
            a.write(0, &data).unwrap();
            let b = Arc::new(Memory::new(first, n).unwrap());
            let c = Arc::new(Memory::new(second, n).unwrap());
            let d = Arc::new(Memory::new(second, n).unwrap());
            let on_first = a.copy_to_async(0, &b, 0, n, &[]).unwrap();
            let across = b
                .copy_to_async(0, &c, 0, n, std::slice::from_ref(&on_first))
                .unwrap();
            let on_second = c
                .copy_to_async(0, &d, 0, n, std::slice::from_ref(&across))
                .unwrap();
            on_second.wait().unwrap();
            let mut back = vec![0u8; n];
            d.read(0, &mut back).unwrap();
            assert!(back == data, "{first} then {second}");
            // Work within `second` taking `first`'s event while that still runs (a big
            // copy): native events of another device or context must not reach its
            // queue as if they were its own.
            let big = 64 * MIB;
            let (x, y) = (
                Arc::new(Memory::new(first, big).unwrap()),
                Arc::new(Memory::new(first, big).unwrap()),
            );
            let slow = x.copy_to_async(0, &y, 0, big, &[]).unwrap();
            let e = Arc::new(Memory::new(second, n).unwrap());
            let after_slow = d
                .copy_to_async(0, &e, 0, n, std::slice::from_ref(&slow))
                .unwrap();
            after_slow.wait().unwrap();
            assert!(
                slow.is_complete(),
                "{first} then {second}: dependency first"
            );
            e.read(0, &mut back).unwrap();
            assert!(back == data, "{first} then {second}: after a pending event");
        }
    }
}

#[test]
fn starting_work_after_a_pending_foreign_event_never_blocks_the_caller_or_the_device() {
    let _serial = common::serial();
    let n = MIB;
    let data = common::pattern_u8(n, 19);
    for l in locus::available() {
        let a = Arc::new(Memory::new(l, n).unwrap());
        a.write(0, &data).unwrap();
        let b = Arc::new(Memory::new(l, n).unwrap());
        let (gate, open) = Event::user();
        // Started on another thread, so that a call that blocked would show up as a
        // timeout here instead of hanging the test (the gate opens further down).
        let (tx, rx) = std::sync::mpsc::channel();
        let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
        std::thread::spawn(move || {
            let _ = tx.send(a2.copy_to_async(0, &b2, 0, n, &[gate]));
        });
        let started = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("{l}: starting the copy blocked on its gate"));
        let copy = started.unwrap();
        // The device's own queue is free meanwhile: other work on it completes.
        let other = Memory::new(l, 64).unwrap();
        other.write(0, &[7; 64]).unwrap();
        let mut seen = [0u8; 64];
        other.read(0, &mut seen).unwrap();
        assert_eq!(seen, [7; 64], "{l}");
        assert!(!copy.is_complete(), "{l}: the copy waits for its gate");
        open.complete();
        copy.wait().unwrap();
        let mut back = vec![0u8; n];
        b.read(0, &mut back).unwrap();
        assert!(back == data, "{l}: the gated copy's data");
    }
}

#[test]
fn dropping_every_handle_of_running_work_keeps_its_memory_until_it_is_done() {
    let _serial = common::serial();
    let n = 64 * MIB;
    let data = common::pattern_u8(n, 23);
    for l in locus::available() {
        let a = Arc::new(Memory::new(l, n).unwrap());
        a.write(0, &data).unwrap();
        let b = Arc::new(Memory::new(l, n).unwrap());
        let weak_a = Arc::downgrade(&a);
        let copy = a.copy_to_async(0, &b, 0, n, &[]).unwrap();
        // The source and the event go at once, while the copy may still run.
        drop((a, copy));
        // Whatever runs it (the device's queue, then the reaper; or a worker thread)
        // lets go of the source only once the copy is done: then b holds the data.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while weak_a.upgrade().is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "{l}: source never let go"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut back = vec![0u8; n];
        b.read(0, &mut back).unwrap();
        assert!(back == data, "{l}: the copy read its source intact");
    }
}

#[test]
fn async_uploads_and_downloads_of_every_shape_arrive() {
    let _serial = common::serial();
    let cap = MIB + 64;
    let data = common::pattern_u8(cap, 29);
    let host = Arc::new(Memory::new(Location::Host, cap).unwrap());
    host.write(0, &data).unwrap();
    for l in locus::available() {
        let dev = Arc::new(Memory::new(l, cap).unwrap());
        let back = Arc::new(Memory::new(Location::Host, cap).unwrap());
        // Aligned and not, up to the native WebGPU upload limit and past it.
        for (len, src_at, dst_at) in [
            (4, 0, 0),
            (1000, 4, 8),
            (1001, 3, 5),
            (MIB, 0, 0),
            (MIB + 4, 0, 4),
        ] {
            dev.fill(0..cap, &[0]).unwrap();
            let up = host.copy_to_async(src_at, &dev, dst_at, len, &[]).unwrap();
            let down = dev
                .copy_to_async(dst_at, &back, 0, len, std::slice::from_ref(&up))
                .unwrap();
            down.wait().unwrap();
            let mut seen = vec![0u8; len];
            back.read(0, &mut seen).unwrap();
            assert!(
                seen[..] == data[src_at..src_at + len],
                "{l}: {len} bytes from {src_at} to {dst_at} (upload native: {})",
                up.is_native()
            );
        }
    }
}

#[test]
fn a_zero_length_copy_completes_after_its_dependencies() {
    let _serial = common::serial();
    let big = 64 * MIB;
    for l in locus::available() {
        let (x, y) = (
            Arc::new(Memory::new(l, big).unwrap()),
            Arc::new(Memory::new(l, big).unwrap()),
        );
        let slow = x.copy_to_async(0, &y, 0, big, &[]).unwrap();
        let nothing = y
            .copy_to_async(0, &x, 0, 0, std::slice::from_ref(&slow))
            .unwrap();
        nothing.wait().unwrap();
        assert!(
            slow.is_complete(),
            "{l}: the empty copy waited for its dependency"
        );
        let (gate, open) = Event::user();
        let gated = x.copy_to_async(0, &y, 0, 0, &[gate]).unwrap();
        assert!(
            !gated.is_complete(),
            "{l}: an empty copy behind a closed gate"
        );
        open.complete();
        gated.wait().unwrap();
    }
}

/// A chain through host memory, `l -> host -> l`, the second copy after the first's
/// event: the second reads host memory that the first is still filling. NVIDIA's
/// OpenCL takes a non-blocking write's bytes when it is enqueued, before its wait list
/// is done; written so, this test (and tests/stress.rs) received stale bytes at
/// `opencl:1` (an H200) until such a write went to a worker that waits first.
#[test]
fn a_chain_through_host_memory_delivers_at_every_location() {
    let _serial = common::serial();
    let n = 32 * MIB + 4;
    let data = common::pattern_u8(n, 23);
    for l in locus::available() {
        let src = Arc::new(Memory::new(l, n).unwrap());
        src.write(0, &data).unwrap();
        let mid = Arc::new(Memory::new(Location::Host, n).unwrap());
        let dst = Arc::new(Memory::new(l, n).unwrap());
        let first = src.copy_to_async(0, &mid, 0, n, &[]).unwrap();
        let second = mid
            .copy_to_async(0, &dst, 0, n, std::slice::from_ref(&first))
            .unwrap();
        second.wait().unwrap();
        let mut got = vec![0u8; n];
        dst.read(0, &mut got).unwrap();
        let wrong = got.iter().zip(&data).position(|(a, b)| a != b);
        assert_eq!(wrong, None, "{l} -> host -> {l}: first wrong byte");
    }
}
