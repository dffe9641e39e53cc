//! 09: Asynchronous copies, one event type for every technology, queues, and
//! stream-ordered reuse of pooled memory (CUDA's streams and events, at any location).
//!
//! `cargo run --release --example 09_queues_and_events -- opencl:0`

mod common;

use std::sync::Arc;

use locus::resource::{self, MemoryResource, Pool};
use locus::{Event, Location, Memory, Native, Queue};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let at = common::location_from_args()?;
    let n = 16 << 20;
    let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let host = Arc::new(Memory::new(Location::Host, n)?);
    host.write(0, &data)?;
    let a = Arc::new(Memory::new(at, n)?);
    let b = Arc::new(Memory::new(at, n)?);
    let back = Arc::new(Memory::new(Location::Host, n)?);

    // 1. A queue runs what is submitted on it in order: upload, copy on the device,
    //    download. Each call returns an Event at once.
    let queue = Queue::new();
    let up = host.copy_to_async_on(queue, 0, &a, 0, n, &[])?;
    let within = a.copy_to_async_on(queue, 0, &b, 0, n, &[])?;
    let down = b.copy_to_async_on(queue, 0, &back, 0, n, &[])?;
    println!(
        "three copies submitted on one queue; native to {at}'s own queue: upload {}, on the device {}, download {}",
        up.is_native(),
        within.is_native(),
        down.is_native()
    );
    queue.wait()?; // the synchronous form: everything on the queue is done
    let mut seen = vec![0u8; n];
    back.read(0, &mut seen)?;
    assert!(seen == data);
    println!("after Queue::wait: {} MiB came back intact", n >> 20);

    // 2. Any event is a dependency of any later copy, whatever the technologies. A
    //    user event (OpenCL's idea) holds work back until something outside locus says go.
    let (gate, go) = Event::user();
    let gated = a.copy_to_async(0, &b, 0, n, &[gate])?;
    println!(
        "a copy behind a closed gate: started without blocking, complete: {}",
        gated.is_complete()
    );
    go.complete();
    gated.wait()?;
    println!("gate opened: complete: {}", gated.is_complete());

    // 3. Stream-ordered memory: memory given back on a queue while work there may still
    //    use it is handed out again at once to an allocation on the same queue (whose
    //    work runs after), and to other queues only after the work's event.
    let pool: Arc<dyn MemoryResource> =
        Arc::new(Pool::new(resource::upstream(at)?, 64 << 20, 1 << 30));
    let scratch = Arc::new(Memory::from_resource_on(&pool, n, queue)?);
    let uses = scratch.copy_to_async_on(queue, 0, &b, 0, n, &[])?;
    let first = where_it_is(scratch.native());
    scratch.release_after(queue, uses)?;
    let again = Memory::from_resource_on(&pool, n, queue)?;
    let reused = where_it_is(again.native()) == first;
    println!(
        "freed on the queue while in use, reallocated on the same queue: same memory: {reused}"
    );
    assert!(
        reused,
        "work on one queue runs in order: its memory is reused at once"
    );
    let other = Memory::from_resource_on(&pool, n, Queue::new())?;
    println!(
        "on another queue: same memory: {} (it waits for the work, or takes other memory)",
        where_it_is(other.native()) == first
    );
    queue.wait()?;
    Ok(())
}

/// Where a handle points (an address, or a buffer object and offset).
fn where_it_is(native: &Native) -> String {
    format!("{native:?}")
}
