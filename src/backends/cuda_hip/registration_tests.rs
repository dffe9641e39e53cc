//! Host memory registered in place (issue 45, item 1): while registered, copies between
//! it and the device go straight by DMA (no staging through locus's pinned chunks, as
//! for the driver's own pinned memory); dropping the registration undoes it; the
//! driver's refusals are errors naming the device and the call, with nothing left
//! registered.

use super::simulated::{one_device as device, Strict};
use super::*;

fn staging_events(api: &Strict) -> usize {
    api.calls()
        .iter()
        .filter(|c| **c == "cuEventRecord")
        .count()
}

#[test]
fn registered_host_memory_is_copied_without_staging_until_the_registration_ends() {
    let (api, gpu) = device();
    let n = 3 * STAGING + 100;
    let dev = gpu.allocate_kind(n, GpuMemory::Device).unwrap();
    let mut host: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let want = host.clone();

    // Pageable: staged through pinned chunks (an event per chunk).
    let before = staging_events(&api);
    Device::write(gpu.as_ref(), dev.native(), 0, &host).unwrap();
    assert!(
        staging_events(&api) > before,
        "pageable memory was not staged"
    );

    // SAFETY: `host` outlives the registration, dropped below before it.
    let registration = unsafe {
        gpu.host_registration()
            .expect("a GPU registers host memory")
            .register_host(host.as_mut_ptr(), n)
    }
    .unwrap();
    assert_eq!(registration.location(), Location::Cuda(0));
    assert_eq!(api.registered(), vec![(host.as_ptr() as u64, n)]);
    let before = staging_events(&api);
    Device::write(gpu.as_ref(), dev.native(), 0, &host).unwrap();
    host.fill(0);
    Device::read(gpu.as_ref(), dev.native(), 0, &mut host).unwrap();
    assert_eq!(host, want, "the bytes made the round trip");
    assert_eq!(
        staging_events(&api),
        before,
        "registered memory was staged through pinned chunks"
    );

    drop(registration);
    assert!(
        api.registered().is_empty(),
        "dropping it did not unregister"
    );
    assert!(api.violations().is_empty(), "{:?}", api.violations());
}

#[test]
fn the_drivers_refusals_name_the_device_and_leave_nothing_registered() {
    let (api, gpu) = device();
    let mut host = vec![0u8; 1 << 20];
    let p = host.as_mut_ptr();
    // SAFETY: `host` outlives both registrations (dropped at the end of the test).
    let first = unsafe { gpu.register_host(p, 1 << 20) }.unwrap();
    // SAFETY: as above; a range inside the registered one.
    let again = unsafe { gpu.register_host(p.wrapping_add(4096), 4096) }.unwrap_err();
    let text = again.to_string();
    assert!(
        text.contains("cuda:0")
            && text.contains("cuMemHostRegister")
            && text.contains("ALREADY_REGISTERED"),
        "{text}"
    );
    drop(first);
    api.fail_once("cuMemHostRegister");
    // SAFETY: as above.
    let failed = unsafe { gpu.register_host(p, 1 << 20) }.unwrap_err();
    assert!(
        failed.to_string().contains("register host memory in place"),
        "{failed}"
    );
    assert!(api.registered().is_empty());
    drop(host);
}

#[test]
fn every_gpu_memory_kind_is_looked_up_as_its_kind_at_its_device() {
    let (_api, gpu) = device();
    let gpu: Arc<dyn Device> = gpu;
    for kind in gpu.memory_kinds() {
        let memory = crate::core::memory::Memory::on_kind(&gpu, kind, 1000).unwrap();
        let base = memory.native().address();
        let info = crate::core::address_index::lookup_tracked(base + 999).unwrap();
        assert_eq!(
            (info.location, info.base, info.offset),
            (Location::Cuda(0), base, 999)
        );
        assert_eq!(info.kind, kind, "lookup of {kind} memory");
        drop(memory);
        assert!(
            crate::core::address_index::lookup_tracked(base + 999).map_or(true, |i| i.len != 1000),
            "freed {kind} memory still looked up"
        );
    }
}
