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
fn opencl_copies_are_native_and_ordered() {
    let _serial = common::serial();
    let Some(l) = locus::available()
        .into_iter()
        .find(|l| l.technology() == locus::Technology::OpenCl)
    else {
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
    let slow = big.copy_to_async(0, &big_dst, 0, 512 * MIB, &[]).unwrap();
    let work = x.copy_to_async(0, &y, 0, block, &[slow]).unwrap();
    // Free x now, while the copy out of it may still be pending.
    x.release_after(queue_a, work.clone());
    // Queue B gets the other half at once, and x's range only after the work is done.
    let on_b = Memory::from_resource_on(&pool, block, queue_b).unwrap();
    assert_ne!(address(&on_b), x_address);
    let on_b2 = Memory::from_resource_on(&pool, block, queue_b).unwrap();
    assert!(
        work.is_complete(),
        "the pool waited for queue A's work before handing x out again"
    );
    assert_eq!(address(&on_b2), x_address);
    on_b2.write(0, &vec![0xFF; block]).unwrap();
    let mut seen = vec![0u8; block];
    y.read(0, &mut seen).unwrap();
    assert!(
        seen == original,
        "queue A's copy read x before queue B overwrote it"
    );
    drop((on_b, on_b2));
}
