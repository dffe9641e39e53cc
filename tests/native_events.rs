//! Handing locus's ordering out (issue 41, item 3): an asynchronous copy's
//! [`Event::native_event`] is the runtime's own event, which a user's work takes as a
//! device-side dependency with no host wait. Here a user's own OpenCL command queue, in
//! locus's context, reads the memory locus's copy wrote, after that copy's `cl_event`
//! (its wait list), at every OpenCL location. And `Event::on_complete`, for code with no
//! event of a runtime to wait on (an OpenMP detached task).
#![cfg(feature = "opencl")]

mod common;

use std::sync::Arc;

use locus::backends::opencl::OpenClDevice;
use locus::{Location, Memory, Native, NativeEvent};

fn a_user_queue_waits_on_locus_s_copy(at: Location) {
    let n = 1 << 20;
    let data = common::pattern_u8(n, 7);
    let src = Arc::new(Memory::new(at, n).unwrap());
    src.write(0, &data).unwrap();
    let dst = Arc::new(Memory::new(at, n).unwrap());
    let copy = src.copy_to_async(0, &dst, 0, n, &[]).unwrap();
    assert!(
        copy.is_native(),
        "{at}: a copy within OpenCL runs on its queue"
    );
    let Some(NativeEvent::OpenCl(event)) = copy.native_event() else {
        panic!("{at}: the copy's cl_event, got {:?}", copy.native_event());
    };
    assert!(!event.is_null());
    let Native::OpenCl { mem, offset } = dst.native() else {
        panic!("{at}: OpenCL memory");
    };
    let (context, device, _) = locus::device_as::<OpenClDevice>(at).unwrap().raw_handles();
    let mut back = vec![0u8; n];
    // SAFETY: the context and device are locus's, alive while the registry is; the
    // queue is released below; `mem` lives while `dst` does; `back` outlives the blocking
    // wait on the read; the wait list is the copy's live event (`copy` is held).
    unsafe {
        let queue = cl3::command_queue::create_command_queue_with_properties(
            context as _,
            device as _,
            std::ptr::null(),
        )
        .unwrap();
        let wait_list = [event as cl3::types::cl_event];
        let read = cl3::command_queue::enqueue_read_buffer(
            queue,
            *mem as _,
            cl3::types::CL_FALSE,
            *offset,
            n,
            back.as_mut_ptr().cast(),
            1,
            wait_list.as_ptr(),
        )
        .unwrap();
        cl3::event::wait_for_events(&[read]).unwrap();
        cl3::event::release_event(read).unwrap();
        cl3::command_queue::release_command_queue(queue).unwrap();
    }
    assert!(back == data, "{at}: the user's read after locus's copy");
    drop(copy);
}

fn a_worker_s_copy_has_no_native_event(at: Location) {
    let (gate, open) = locus::Event::user();
    let src = Arc::new(Memory::new(at, 64).unwrap());
    let dst = Arc::new(Memory::new(Location::Host, 64).unwrap());
    let copy = src.copy_to_async(0, &dst, 0, 64, &[gate]).unwrap();
    open.complete();
    copy.wait().unwrap();
    // Behind a user event, a locus worker thread runs the copy: no runtime event.
    assert!(!copy.is_native(), "{at}: a copy behind a user event");
    assert_eq!(copy.native_event(), None, "{at}: a worker's copy");
}

#[test]
fn every_opencl_location_hands_out_its_cl_event() {
    let opencl = common::required_of(locus::Technology::OpenCl);
    for at in opencl {
        a_user_queue_waits_on_locus_s_copy(at);
        a_worker_s_copy_has_no_native_event(at);
    }
}

/// `Event::on_complete`: called once the work is done, with its outcome, never before
/// and without blocking the caller (a gated copy), at once for finished work.
#[test]
fn on_complete_runs_after_the_work_with_its_outcome() {
    use std::sync::mpsc;
    let (gate, open) = locus::Event::user();
    let src = Arc::new(Memory::new(Location::Host, 64).unwrap());
    let dst = Arc::new(Memory::new(Location::Host, 64).unwrap());
    src.write(0, &[5; 64]).unwrap();
    let copy = src.copy_to_async(0, &dst, 0, 64, &[gate]).unwrap();
    let (tx, rx) = mpsc::channel();
    let seen = Arc::clone(&dst);
    copy.on_complete(move |outcome| {
        let mut back = [0u8; 64];
        seen.read(0, &mut back).unwrap();
        tx.send((outcome.is_ok(), back[63])).unwrap();
    });
    assert!(rx.try_recv().is_err(), "called before the gated copy ran");
    open.complete();
    assert_eq!(rx.recv().unwrap(), (true, 5));
    // Finished work: called at once, on this thread.
    let (tx, rx) = mpsc::channel();
    locus::Event::done().on_complete(move |o| tx.send(o.is_ok()).unwrap());
    assert_eq!(rx.try_recv(), Ok(true));
    // A failure reaches the callback.
    let (failing, trigger) = locus::Event::user();
    let (tx, rx) = mpsc::channel();
    failing.on_complete(move |o| tx.send(o.is_err()).unwrap());
    trigger.fail("the producer failed");
    assert!(rx.recv().unwrap());
}
