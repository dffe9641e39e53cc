//! `Memory::prefetch_to` (issue 67, item 2, in part): memory that migrates is moved
//! ahead of its use on the device's queue, with an event, and memory that does not is
//! left where it is with the reason, at every location here; the data is whole either
//! way. SYCL's USM shared memory runs `queue.prefetch` for real (on a CPU device, where
//! the move has nowhere to go, the runtime's call and event still run).

mod common;

use std::sync::Arc;

use locus::{Location, Memory, MemoryKind, Technology};

fn filled(at: Location, kind: MemoryKind) -> Arc<Memory> {
    let m = Arc::new(Memory::new_kind(at, kind, 1 << 16).unwrap());
    m.write(0, &common::pattern_u8(1 << 16, 9)).unwrap();
    m
}

fn whole(m: &Memory) {
    let mut back = vec![0u8; 1 << 16];
    m.read(0, &mut back).unwrap();
    assert_eq!(back, common::pattern_u8(1 << 16, 9), "{}", m.location());
}

#[test]
fn usm_shared_memory_is_prefetched_to_its_device_and_the_rest_says_why_not() {
    for at in common::required_of(Technology::Sycl) {
        let shared = filled(at, MemoryKind::UsmShared);
        let to_device = shared.prefetch_to(at, 4096..(1 << 16)).unwrap();
        assert!(to_device.moved, "{at}: {}", to_device.why);
        to_device.event.wait().unwrap();
        whole(&shared);
        // SYCL prefetches to its device only; USM device memory does not migrate.
        let to_host = shared.prefetch_to(Location::Host, 0..4096).unwrap();
        assert!(
            !to_host.moved && to_host.why.contains("to its device only"),
            "{}",
            to_host.why
        );
        let device = filled(at, MemoryKind::UsmDevice);
        let stays = device.prefetch_to(at, 0..4096).unwrap();
        assert!(
            !stays.moved && stays.why.contains("only USM shared memory migrates"),
            "{}",
            stays.why
        );
        whole(&device);
    }
}

#[test]
fn memory_that_does_not_migrate_is_left_where_it_is_at_every_location() {
    for at in common::required_locations() {
        if at.technology() == Technology::Sycl {
            continue;
        }
        let m = filled(at, MemoryKind::Default);
        let outcome = m.prefetch_to(at, 0..4096).unwrap();
        assert!(
            !outcome.moved && outcome.event.is_complete(),
            "{at}: {}",
            outcome.why
        );
        assert!(
            outcome.why.contains(&at.to_string()),
            "{at}: {}",
            outcome.why
        );
        whole(&m);
    }
}

#[test]
fn a_bad_range_or_destination_is_refused_or_said() {
    let m = filled(Location::Host, MemoryKind::Default);
    let e = m
        .prefetch_to(Location::Host, 0..(1 << 20))
        .unwrap_err()
        .to_string();
    assert!(e.contains("prefetch") && e.contains("host"), "{e}");
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = m
        .prefetch_to(Location::Host, 10..5)
        .unwrap_err()
        .to_string();
    assert!(reversed.contains("reversed"), "{reversed}");
    if let Some(&other) = common::required_locations().iter().find(|l| !l.is_host()) {
        let elsewhere = m.prefetch_to(other, 0..64).unwrap();
        assert!(
            !elsewhere.moved && elsewhere.why.contains(&other.to_string()),
            "{}",
            elsewhere.why
        );
    }
}
