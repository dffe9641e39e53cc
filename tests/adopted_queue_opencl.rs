//! A user's own OpenCL command queue adopted by locus (issue 41, item 2), written the way
//! a user writes it: their kernel on their queue writes a locus buffer and nobody waits
//! for it; locus's copy on the adopted queue reads what the kernel wrote. Then locus
//! writes on that queue and the user's own (blocking) read there sees it. At every
//! OpenCL location; bad handles are clear errors.
#![cfg(feature = "opencl")]

mod common;

use std::sync::Arc;

use locus::backends::opencl::OpenClDevice;
use locus::{Location, Memory, Native, NativeQueue, Queue};
use opencl3::program::Program;
use opencl3::types::cl_command_queue;

/// One work item that spins before filling `p`: the write lands long after the enqueue.
const SLOW_FILL: &str = r#"
__kernel void slow_fill(__global uint *p, uint n, uint spins, __global uint *sink) {
    uint acc = 1u;
    for (uint i = 0; i < spins; i++) acc = acc * 1664525u + 1013904223u;
    sink[0] = acc;
    for (uint i = 0; i < n; i++) p[i] = i * 3u + 1u;
}
"#;

fn cl_mem_of(memory: &Memory) -> opencl3::types::cl_mem {
    let Native::OpenCl { mem, offset } = memory.native() else {
        panic!("{}: OpenCL memory", memory.location());
    };
    assert_eq!(*offset, 0, "a whole buffer");
    *mem
}

/// The user's own queue, in locus's context (what pyopencl or opencl3 code holds).
fn users_queue(at: Location) -> cl_command_queue {
    let (context, device, _) = locus::device_as::<OpenClDevice>(at).unwrap().raw_handles();
    // SAFETY: locus's live context and device; released by the caller.
    unsafe {
        cl3::command_queue::create_command_queue_with_properties(
            context as _,
            device as _,
            std::ptr::null(),
        )
    }
    .unwrap()
}

/// The user's kernel on their queue: fills `data` (n u32) with `i * 3 + 1` after a spin;
/// nobody waits for it.
fn enqueue_slow_fill(
    at: Location,
    queue: cl_command_queue,
    data: &Memory,
    sink: &Memory,
    n: usize,
) {
    let device = locus::device_as::<OpenClDevice>(at).unwrap();
    let program = Program::create_and_build_from_source(device.context(), SLOW_FILL, "").unwrap();
    let kernel = opencl3::kernel::Kernel::create(&program, "slow_fill").unwrap();
    let (mem, sink_mem) = (cl_mem_of(data), cl_mem_of(sink));
    let (count, spins) = (n as u32, 20_000_000u32);
    // SAFETY: arguments match the kernel's parameters; the buffers outlive the kernel
    // (the caller finishes the queue before they are dropped); OpenCL retains the kernel
    // while it is queued.
    unsafe {
        kernel.set_arg(0, &mem).unwrap();
        kernel.set_arg(1, &count).unwrap();
        kernel.set_arg(2, &spins).unwrap();
        kernel.set_arg(3, &sink_mem).unwrap();
        let event = cl3::command_queue::enqueue_nd_range_kernel(
            queue,
            kernel.get(),
            1,
            std::ptr::null(),
            [1usize].as_ptr(),
            std::ptr::null(),
            0,
            std::ptr::null(),
        )
        .unwrap();
        cl3::event::release_event(event).unwrap();
    }
}

fn locus_reads_after_the_user_s_kernel(at: Location) {
    let n = 1usize << 18;
    let data = Arc::new(Memory::new(at, 4 * n).unwrap());
    data.fill(0..4 * n, &[0]).unwrap();
    let sink = Memory::new(at, 4).unwrap();
    let queue = users_queue(at);
    // SAFETY: the user's live queue, in locus's context.
    let adopted = unsafe { Queue::from_native(at, NativeQueue::OpenCl(queue.cast())) }.unwrap();

    // The user's kernel, not waited for.
    enqueue_slow_fill(at, queue, &data, &sink, n);

    // locus reads on the adopted queue: after the kernel.
    let host = Arc::new(Memory::new(Location::Host, 4 * n).unwrap());
    data.copy_to_async_on(adopted.queue(), 0, &host, 0, 4 * n, &[])
        .unwrap()
        .wait()
        .unwrap();
    let mut got = vec![0u8; 4 * n];
    host.read(0, &mut got).unwrap();
    let got: Vec<u32> = got
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
    assert!(
        got == want,
        "{at}: locus's read on the adopted queue came before the user's kernel"
    );

    // locus writes on the adopted queue (not waited for); the user's blocking read there.
    let fresh = common::pattern_u8(4 * n, 9);
    let mem = cl_mem_of(&data);
    let upload = Arc::new(Memory::new(Location::Host, 4 * n).unwrap());
    upload.write(0, &fresh).unwrap();
    let _ = upload
        .copy_to_async_on(adopted.queue(), 0, &data, 0, 4 * n, &[])
        .unwrap();
    let mut back = vec![0u8; 4 * n];
    // SAFETY: the user's queue and locus's live buffer; `back` outlives the blocking read.
    unsafe {
        let read = cl3::command_queue::enqueue_read_buffer(
            queue,
            mem,
            cl3::types::CL_TRUE,
            0,
            4 * n,
            back.as_mut_ptr().cast(),
            0,
            std::ptr::null(),
        )
        .unwrap();
        cl3::event::release_event(read).unwrap();
    }
    assert!(
        back == fresh,
        "{at}: the user's read came before locus's write on their queue"
    );

    adopted.synchronize().unwrap();
    // The user lets go of their queue; locus's reference keeps it while adopted.
    // SAFETY: the queue made above, released once.
    unsafe { cl3::command_queue::release_command_queue(queue) }.unwrap();
    let again = Arc::new(Memory::new(Location::Host, 4).unwrap());
    data.copy_to_async_on(adopted.queue(), 0, &again, 0, 4, &[])
        .unwrap()
        .wait()
        .unwrap();
    drop(adopted);
}

/// HAMR's stream form: a buffer whose moves go on the adopted queue. The user's kernel
/// writes the buffer in place through a write access, on their queue; the buffer's next
/// read (to the host, no wait by the user) sees it, and `synchronize` drains the queue.
fn a_buffer_on_the_adopted_queue_reads_after_the_user_s_kernel(at: Location) {
    let n = 1usize << 16;
    let queue = users_queue(at);
    // SAFETY: the user's live queue, in locus's context.
    let adopted = unsafe { Queue::from_native(at, NativeQueue::OpenCl(queue.cast())) }.unwrap();
    let mut b = locus::Buffer::<u32>::zeroed(at, n)
        .unwrap()
        .with_queue(adopted.queue());
    let sink = Memory::new(at, 4).unwrap();
    {
        let guard = b.access_mut(at).unwrap();
        assert!(guard.is_in_place());
        enqueue_slow_fill(at, queue, guard.memory(), &sink, n);
    }
    let got = b.to_vec().unwrap();
    let want: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
    assert!(
        got == want,
        "{at}: the buffer's read came before the user's kernel on its queue"
    );
    b.synchronize().unwrap();
    drop(b);
    drop(adopted);
    // SAFETY: the queue made above, released once.
    unsafe { cl3::command_queue::release_command_queue(queue) }.unwrap();
}

/// locus's own queue, handed out and adopted back: a copy locus runs on a worker thread
/// (between two OpenCL devices) enqueues on that queue itself, so the adopted queue must
/// not be held behind a gate waiting for it (that deadlocked).
fn adopting_locus_s_own_queue_with_a_worker_s_copy(at: Location, other: Location) {
    let native = Queue::new()
        .native_at(at)
        .expect("an OpenCL location hands out its queue");
    // SAFETY: locus's own live queue.
    let adopted = unsafe { Queue::from_native(at, native) }.unwrap();
    let n = 1 << 20;
    let data = common::pattern_u8(n, 13);
    let src = Arc::new(Memory::new(other, n).unwrap());
    src.write(0, &data).unwrap();
    let dst = Arc::new(Memory::new(at, n).unwrap());
    src.copy_to_async_on(adopted.queue(), 0, &dst, 0, n, &[])
        .unwrap()
        .wait()
        .unwrap();
    let mut back = vec![0u8; n];
    dst.read(0, &mut back).unwrap();
    assert!(
        back == data,
        "{at} <- {other} on locus's own queue, adopted"
    );
    adopted.synchronize().unwrap();
}

fn bad_queues_are_refused(at: Location, others: &[Location]) {
    let queue = users_queue(at);
    for other in others.iter().filter(|o| **o != at) {
        // SAFETY: a live queue, of another location.
        let err = unsafe { Queue::from_native(*other, NativeQueue::OpenCl(queue.cast())) }
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&other.to_string()) && err.contains("cannot adopt OpenCL command queue"),
            "{other}: a queue of {at}: {err}"
        );
    }
    // SAFETY: a live queue.
    let err = unsafe { Queue::from_native(Location::Host, NativeQueue::OpenCl(queue.cast())) }
        .unwrap_err()
        .to_string();
    assert!(err.contains("host: cannot adopt"), "{err}");
    // A queue whose AdoptedQueue is gone: work on it is refused, nothing runs.
    // SAFETY: a live queue of `at`.
    let adopted = unsafe { Queue::from_native(at, NativeQueue::OpenCl(queue.cast())) }.unwrap();
    let name = adopted.queue();
    drop(adopted);
    let (src, dst) = (
        Arc::new(Memory::new(at, 8).unwrap()),
        Arc::new(Memory::new(Location::Host, 8).unwrap()),
    );
    let err = src
        .copy_to_async_on(name, 0, &dst, 0, 8, &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("has been dropped"), "{err}");
    // SAFETY: the queue made above, released once.
    unsafe { cl3::command_queue::release_command_queue(queue) }.unwrap();
}

#[test]
fn an_adopted_opencl_queue_orders_both_ways() {
    let opencl = common::required_of(locus::Technology::OpenCl);
    let mut others = opencl.clone();
    others.extend(common::required_of(locus::Technology::Sycl));
    for at in &opencl {
        locus_reads_after_the_user_s_kernel(*at);
        a_buffer_on_the_adopted_queue_reads_after_the_user_s_kernel(*at);
        if let Some(other) = opencl.iter().find(|o| *o != at) {
            adopting_locus_s_own_queue_with_a_worker_s_copy(*at, *other);
        }
        bad_queues_are_refused(*at, &others);
    }
}
