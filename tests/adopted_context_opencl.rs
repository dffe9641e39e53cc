//! An application's own OpenCL context joining locus (issue 64, items 1 and 2), written
//! as an opencl3 program writes it: its own context, queue, buffer and kernel; the kernel
//! fills the buffer and nobody waits. locus adopts the context (a location of its own),
//! the queue and the buffer, and copies the buffer to every location after the
//! application's kernel; then writes into it from every location and the application's
//! own blocking read sees the data. Adopting twice finds the same location; locus's own
//! context is never adopted again; a buffer outlives the application's reference.
#![cfg(feature = "opencl")]

mod common;

use std::sync::Arc;

use locus::backends::opencl::OpenClDevice;
use locus::{Location, Memory, NativeQueue, Queue};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::cl_uint;

const FILL: &str = r#"
__kernel void fill(__global uint *p, uint n, uint spins, __global uint *sink) {
    uint acc = 1u;
    for (uint i = 0; i < spins; i++) acc = acc * 1664525u + 1013904223u;
    sink[0] = acc;
    for (uint i = 0; i < n; i++) p[i] = i * 5u + 2u;
}
"#;

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// What an application holds: its own context on the device of `at`, a queue and a
/// buffer of `n` u32 in it.
struct App {
    context: Context,
    queue: CommandQueue,
    data: Buffer<cl_uint>,
    sink: Buffer<cl_uint>,
}

fn app_on(at: Location, n: usize) -> App {
    let ours = locus::device_as::<OpenClDevice>(at).unwrap();
    let context = Context::from_device(ours.cl_device()).unwrap();
    #[allow(deprecated)]
    let queue = CommandQueue::create_default(&context, 0).unwrap();
    // SAFETY: no host pointer; sizes in elements.
    let data =
        unsafe { Buffer::<cl_uint>::create(&context, CL_MEM_READ_WRITE, n, std::ptr::null_mut()) }
            .unwrap();
    // SAFETY: as above.
    let sink =
        unsafe { Buffer::<cl_uint>::create(&context, CL_MEM_READ_WRITE, 1, std::ptr::null_mut()) }
            .unwrap();
    App {
        context,
        queue,
        data,
        sink,
    }
}

/// The application's kernel on its queue; nobody waits for it.
fn enqueue_fill(app: &App, n: usize) {
    let program = Program::create_and_build_from_source(&app.context, FILL, "").unwrap();
    let kernel = opencl3::kernel::Kernel::create(&program, "fill").unwrap();
    let (count, spins) = (n as u32, 5_000_000u32);
    // SAFETY: arguments match the kernel's parameters; the buffers outlive the kernel
    // (the test finishes the queue before dropping them).
    unsafe {
        opencl3::kernel::ExecuteKernel::new(&kernel)
            .set_arg(&app.data)
            .set_arg(&count)
            .set_arg(&spins)
            .set_arg(&app.sink)
            .set_global_work_size(1)
            .enqueue_nd_range(&app.queue)
            .unwrap();
    }
}

#[test]
fn an_application_s_own_context_queue_and_buffer_join_locus() {
    let opencl = common::required_of(locus::Technology::OpenCl);
    let everywhere = common::required_locations();
    for &at in &opencl {
        let n = 1usize << 16;
        let app = app_on(at, n);
        let (context, device) = (
            app.context.get(),
            locus::device_as::<OpenClDevice>(at)
                .unwrap()
                .cl_device()
                .id(),
        );
        // SAFETY: the application's live context and one of its devices.
        let adopted =
            unsafe { locus::adopt_opencl_context(context.cast(), device.cast()) }.unwrap();
        assert_ne!(adopted, at, "the application's context is not locus's");
        assert_eq!(adopted.technology(), locus::Technology::OpenCl);
        assert!(locus::available().contains(&adopted), "{adopted} is listed");
        // SAFETY: as above.
        let again = unsafe { locus::adopt_opencl_context(context.cast(), device.cast()) }.unwrap();
        assert_eq!(again, adopted, "a context is adopted once");
        let info = locus::registry().device(adopted).unwrap().info().clone();
        assert!(info.notes.iter().any(|n| n.contains("adopted")), "{info:?}");

        // SAFETY: the application's live queue, of the adopted context.
        let queue =
            unsafe { Queue::from_native(adopted, NativeQueue::OpenCl(app.queue.get().cast())) }
                .unwrap();
        // SAFETY: the application's live buffer.
        let data = Arc::new(unsafe { Memory::adopt_opencl_buffer(app.data.get().cast()) }.unwrap());
        assert_eq!((data.location(), data.len()), (adopted, 4 * n));

        enqueue_fill(&app, n);
        // Copies to every location on the adopted queue: after the application's kernel.
        let want: Vec<u32> = (0..n as u32).map(|i| i * 5 + 2).collect();
        for &to in &everywhere {
            let there = Arc::new(Memory::new(to, 4 * n).unwrap());
            data.copy_to_async_on(queue.queue(), 0, &there, 0, 4 * n, &[])
                .unwrap()
                .wait()
                .unwrap_or_else(|e| panic!("{adopted} -> {to}: {e}"));
            let mut got = vec![0u8; 4 * n];
            there.read(0, &mut got).unwrap();
            assert!(
                words(&got) == want,
                "{adopted} -> {to}: before the application's kernel"
            );
        }

        // Every location writes into the application's buffer; its own blocking read
        // there sees each.
        for (k, &from) in everywhere.iter().enumerate() {
            let fresh = common::pattern_u8(4 * n, k as u8);
            let source = Memory::new(from, 4 * n).unwrap();
            source.write(0, &fresh).unwrap();
            source.copy_to(0, &data, 0, 4 * n).unwrap();
            let mut back = vec![0u32; n];
            // SAFETY: a blocking read of the whole buffer into a live vector.
            unsafe {
                app.queue
                    .enqueue_read_buffer(&app.data, opencl3::types::CL_BLOCKING, 0, &mut back, &[])
                    .unwrap();
            }
            assert!(
                back == words(&fresh),
                "{from} -> {adopted}: the application's read"
            );
        }

        // The application lets go of its buffer; locus's reference keeps it.
        app.queue.finish().unwrap();
        drop(app);
        let mut got = vec![0u8; 4 * n];
        data.read(0, &mut got).unwrap();
        assert!(words(&got) == words(&common::pattern_u8(4 * n, (everywhere.len() - 1) as u8)));
    }
}

#[test]
fn locus_s_own_context_is_found_not_adopted_and_bad_devices_are_refused() {
    for at in common::required_of(locus::Technology::OpenCl) {
        let (context, device, _) = locus::device_as::<OpenClDevice>(at).unwrap().raw_handles();
        let before = locus::available().len();
        // SAFETY: locus's own live context and device.
        let found = unsafe { locus::adopt_opencl_context(context as _, device as _) }.unwrap();
        assert_eq!(found, at);
        assert_eq!(locus::available().len(), before, "nothing was adopted");
        // A device that is not one of the context's.
        let others: Vec<Location> = common::required_of(locus::Technology::OpenCl)
            .into_iter()
            .filter(|&l| l != at)
            .collect();
        let Some(&other) = others.first() else {
            continue;
        };
        let (_, other_device, _) = locus::device_as::<OpenClDevice>(other)
            .unwrap()
            .raw_handles();
        let app = app_on(at, 4);
        // SAFETY: a live context; the device is checked against it.
        let e = unsafe { locus::adopt_opencl_context(app.context.get().cast(), other_device as _) }
            .unwrap_err();
        assert!(e.to_string().contains("is not one of its devices"), "{e}");
    }
}
