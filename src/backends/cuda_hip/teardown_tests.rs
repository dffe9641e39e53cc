//! The process's end (issue 61, item 11): once it has begun, a freed allocation, a
//! dropped stream event and an ended host registration leave their native objects to
//! the process instead of calling a driver that may already be shutting down, as
//! OpenCL's and SYCL's objects do. On the code before, each called the driver
//! (`cuMemFree`, `cuEventDestroy`, `cuMemHostUnregister`).

use super::simulated::one_device;
use super::*;

#[test]
fn at_the_process_s_end_nothing_calls_the_driver_to_release() {
    let (api, gpu) = one_device();
    let memory = gpu.allocate(4096).unwrap();
    let mut host = vec![0u8; 1 << 20];
    // SAFETY: `host` outlives the registration (dropped below, before it).
    let registration = unsafe { gpu.register_host(host.as_mut_ptr(), host.len()) }.unwrap();
    // A stream event of locus's own stream, as every queued copy and launch carries.
    let work = {
        let _current = api.enter(0).unwrap();
        super::work::StreamEvent::create(&api, 0, true).unwrap()
    };
    let before = api.calls().len();
    crate::core::shutdown::pretend_ending_on_this_thread(true);
    drop(work);
    drop(registration);
    // SAFETY: allocated above, unused.
    unsafe { gpu.free(&memory, 4096) };
    crate::core::shutdown::pretend_ending_on_this_thread(false);
    let calls = api.calls()[before..].to_vec();
    assert!(
        !calls
            .iter()
            .any(|c| matches!(*c, "cuMemFree" | "cuEventDestroy" | "cuMemHostUnregister")),
        "the driver was called at the process's end: {calls:?}"
    );
    drop(host);
}
