//! Discovery over CudaApi's real call layer and the simulated driver (issue 61, item 1):
//! opening a device makes its primary context current to create its stream, and
//! discovery must leave the calling thread as it found it. On the code before, the last
//! device's context stayed current, so the application's next `cudaMalloc` on that
//! thread landed on the last GPU; and a device whose stream creation failed left its
//! released primary context current.

use super::simulated::SimCuda;
use super::*;

/// Another library's context, current on the test's thread before discovery.
const THEIRS: usize = 0xC0FFEE0;

#[test]
fn discovery_leaves_the_callers_context_current() {
    let driver = SimCuda::with_devices(64 << 20, 3);
    SimCuda::set_current_context(THEIRS);
    let found = discover_on(Box::new(driver.clone())).unwrap();
    assert_eq!(found.devices.len(), 3);
    assert_eq!(
        SimCuda::current_context(),
        THEIRS,
        "discovery left a context of its own current on the caller's thread"
    );
    assert_eq!(driver.1.lock().unwrap().retained, vec![1, 1, 1]);
    assert!(
        driver.0.violations().is_empty(),
        "{:?}",
        driver.0.violations()
    );
}

#[test]
fn discovery_on_a_thread_with_nothing_current_leaves_nothing_current() {
    let driver = SimCuda::with_devices(64 << 20, 2);
    SimCuda::set_current_context(0);
    discover_on(Box::new(driver)).unwrap();
    assert_eq!(SimCuda::current_context(), 0);
}

#[test]
fn a_device_that_fails_to_open_is_released_skipped_and_leaves_the_callers_context() {
    let driver = SimCuda::with_devices(64 << 20, 2);
    driver.1.lock().unwrap().fail_stream_on = Some(1);
    SimCuda::set_current_context(THEIRS);
    let found = discover_on(Box::new(driver.clone())).unwrap();
    assert_eq!(found.devices.len(), 1);
    assert!(
        found
            .skipped
            .iter()
            .any(|s| s.contains("CUDA device 1") && s.contains("cuStreamCreate")),
        "{:?}",
        found.skipped
    );
    assert_eq!(
        driver.1.lock().unwrap().retained,
        vec![1, 0],
        "the failed device's primary context stays retained"
    );
    assert_eq!(SimCuda::current_context(), THEIRS);
}

#[test]
fn no_device_that_opens_is_an_error_naming_each_device_s_reason() {
    let driver = SimCuda::with_devices(64 << 20, 1);
    driver.1.lock().unwrap().fail_stream_on = Some(0);
    SimCuda::set_current_context(THEIRS);
    let Err(why) = discover_on(Box::new(driver.clone())) else {
        panic!("discovery found a device whose stream could not be made");
    };
    assert!(why.to_string().contains("cuStreamCreate"), "{why}");
    assert_eq!(driver.1.lock().unwrap().retained, vec![0]);
    assert_eq!(SimCuda::current_context(), THEIRS);
}

/// Each device names its PCI address from the driver's attributes (issue 66, item 1):
/// two GPUs are two physical devices.
#[test]
fn each_device_names_its_pci_address() {
    let driver = SimCuda::with_devices(64 << 20, 2);
    let found = discover_on(Box::new(driver)).unwrap();
    let physical: Vec<_> = found.devices.iter().map(|d| d.info().physical).collect();
    let pci = |bus| {
        Some(crate::core::device::PhysicalDevice::Pci {
            domain: 0,
            bus,
            device: 0,
            function: 0,
        })
    };
    assert_eq!(physical, vec![pci(0x10), pci(0x11)]);
}
