//! SYCL-specific: the three USM kinds, their pointer types as the runtime reports them,
//! host access in place, and copies of each kind to and from every location.

mod common;

use std::sync::Arc;

use locus::backends::sycl::UsmKind;
use locus::{HostAccess, Location, Memory, RouteKind};

#[test]
fn usm_kinds_round_trip_everywhere() {
    let _serial = common::serial();
    let Some(loc) = common::location("sycl:0") else {
        return;
    };
    let device = locus::device_as::<locus::backends::sycl::SyclDevice>(loc).unwrap();
    let data = common::pattern_u8(4099, 5);
    for kind in [UsmKind::Device, UsmKind::Shared, UsmKind::Host] {
        if !device.supports(kind) {
            eprintln!("{loc} does not support USM {kind:?}: skipped");
            continue;
        }
        let memory = Arc::new(device.allocate_kind(data.len(), kind).unwrap());
        let ptr = match memory.native() {
            locus::Native::Sycl { ptr, kind: k } => {
                assert_eq!(*k, kind, "the runtime reports the kind that was asked for");
                *ptr
            }
            other => panic!("not USM: {other:?}"),
        };
        assert_eq!(device.pointer_kind(ptr), Some(kind));
        memory.write(0, &data).unwrap();
        // Shared and host USM (and device USM on a CPU device) are used in place.
        let cpu = locus::registry().device(loc).unwrap().info().kind == "cpu";
        let expect_host = kind != UsmKind::Device || cpu;
        assert_eq!(memory.host_access() != HostAccess::None, expect_host);
        assert_eq!(memory.is_accessible_from(Location::Host), expect_host);
        if expect_host {
            let view = memory.map(0..data.len(), false).unwrap();
            assert_eq!(view.as_slice(), data.as_slice());
            assert_eq!(view.as_ptr(), ptr.cast_const(), "in place, not a copy");
        }
        for other in locus::available() {
            let there = Memory::new(other, data.len()).unwrap();
            let route = memory.copy_to(0, &there, 0, data.len()).unwrap();
            // Never staged where one copy would do, unless this machine measured the
            // staged route faster (a calibrated planner says so in the reason).
            assert!(
                route.kind != RouteKind::Staged
                    || other == loc
                    || route.reason.contains("measured at"),
                "{route}"
            );
            let mut seen = vec![0u8; data.len()];
            there.read(0, &mut seen).unwrap();
            assert_eq!(seen, data, "{kind:?} -> {other}");
            // And back into a fresh allocation of this kind.
            let back = device.allocate_kind(data.len(), kind).unwrap();
            there.copy_to(0, &back, 0, data.len()).unwrap();
            let mut again = vec![0u8; data.len()];
            back.read(0, &mut again).unwrap();
            assert_eq!(again, data, "{other} -> {kind:?}");
        }
    }
}

#[test]
fn unsupported_kinds_are_refused_before_the_runtime_is_called() {
    let _serial = common::serial();
    let Some(loc) = common::location("sycl:0") else {
        return;
    };
    let device = locus::device_as::<locus::backends::sycl::SyclDevice>(loc).unwrap();
    let too_big = device.allocate_kind(usize::MAX / 2, UsmKind::Shared);
    assert!(too_big.is_err());
    for kind in [UsmKind::Device, UsmKind::Shared, UsmKind::Host] {
        if !device.supports(kind) {
            let err = device.allocate_kind(16, kind).unwrap_err().to_string();
            assert!(err.contains("does not support"), "{err}");
        }
    }
}
