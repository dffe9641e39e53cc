//! Discovery over HipApi's real call layer and the simulated runtime (issue 61, item 1):
//! opening a device makes it current to create its stream, and discovery must leave the
//! calling thread's current device as it found it. On the code before, the last device
//! stayed current, so the application's next `hipMalloc` on that thread landed on the
//! last GPU.

use super::simulated::SimHip;
use super::*;

fn api(runtime: &SimHip) -> HipApi {
    HipApi {
        raw: Box::new(runtime.clone()),
        rtc: Err("no compiler in this test".into()),
        pool: None,
        pools: Default::default(),
        streams: Vec::new(),
        archs: Vec::new(),
    }
}

fn discover(runtime: &SimHip) -> Result<Discovery, Unavailable> {
    discover_on(api(runtime), |count| vec![None; count as usize])
}

#[test]
fn discovery_leaves_the_callers_device_current() {
    let runtime = SimHip::with_devices(64 << 20, 3);
    for theirs in [0, 1] {
        SimHip::set_current_device(theirs);
        let found = discover(&runtime).unwrap();
        assert_eq!(found.devices.len(), 3);
        assert_eq!(
            SimHip::current_device(),
            theirs,
            "discovery left another device current on the caller's thread"
        );
    }
    assert!(
        runtime.0.violations().is_empty(),
        "{:?}",
        runtime.0.violations()
    );
}

#[test]
fn a_device_that_fails_to_open_is_skipped_and_leaves_the_callers_device() {
    let runtime = SimHip::with_devices(64 << 20, 3);
    runtime.1.lock().unwrap().fail_stream_on = Some(2);
    SimHip::set_current_device(1);
    let found = discover(&runtime).unwrap();
    assert_eq!(found.devices.len(), 2);
    assert!(
        found
            .skipped
            .iter()
            .any(|s| s.contains("HIP device 2") && s.contains("hipStreamCreateWithFlags")),
        "{:?}",
        found.skipped
    );
    assert_eq!(SimHip::current_device(), 1);
}
