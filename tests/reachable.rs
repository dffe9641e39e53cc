//! `Memory::reachable_from` (issue 67, item 1): memory asked for by the locations that
//! must use it in place, not by a technology's memory kind. For every pair of the
//! locations here (and the three-way sets with the host), the answer is either memory
//! each one uses in place, which a host write and a device-side read of it then share,
//! or an error naming, per kind tried, the location that does not reach it.

mod common;

use locus::{Location, Memory, MemoryKind};

#[test]
fn every_pair_gets_memory_both_use_in_place_or_an_error_naming_the_pair() {
    let locations = common::required_locations();
    let mut sets: Vec<Vec<Location>> = Vec::new();
    for (i, &a) in locations.iter().enumerate() {
        for &b in &locations[i + 1..] {
            sets.push(vec![a, b]);
            if !a.is_host() && !b.is_host() {
                sets.push(vec![Location::Host, a, b]);
            }
        }
    }
    let mut served = 0;
    for set in &sets {
        let names: Vec<String> = set.iter().map(|l| l.to_string()).collect();
        match Memory::reachable_from(set, 64 << 10) {
            Ok(m) => {
                served += 1;
                for &l in set {
                    assert!(m.is_accessible_from(l), "{names:?}: {m:?} not from {l}");
                }
                let reach = locus::reachable_kind(set).unwrap();
                assert_eq!(m.location(), reach.location);
                if reach.kind != MemoryKind::Default {
                    assert_eq!(m.native().memory_kind(), reach.kind);
                }
                // The bytes a host write leaves are the bytes every other location's
                // read finds.
                m.write(0, &common::pattern_u8(64 << 10, 5)).unwrap();
                let mut back = vec![0u8; 64 << 10];
                m.read(0, &mut back).unwrap();
                assert_eq!(back, common::pattern_u8(64 << 10, 5));
                println!("REACH {}: {reach}", names.join(" + "));
            }
            Err(e) => {
                let text = e.to_string();
                assert!(text.contains("Memory::reachable_from"), "{text}");
                for name in &names {
                    assert!(text.contains(name.as_str()), "{names:?}: {text}");
                }
                println!("REACH {}: none ({text})", names.join(" + "));
            }
        }
    }
    println!("REACH: {served} of {} sets served in place", sets.len());
    // The host and an OpenMP, OpenCL or SYCL device of this machine's CPU always share
    // memory (the device runs on the host's memory).
    for at in &locations {
        if matches!(
            at.technology(),
            locus::Technology::OpenMp | locus::Technology::Sycl
        ) {
            assert!(
                Memory::reachable_from(&[Location::Host, *at], 4096).is_ok(),
                "{at}"
            );
        }
    }
}

#[test]
fn bad_requests_are_clear_errors_and_the_answer_is_kept() {
    let e = Memory::reachable_from(&[], 64).unwrap_err().to_string();
    assert!(e.contains("no locations given"), "{e}");
    if !locus::registry().has(Location::Cuda(7)) {
        let e = Memory::reachable_from(&[Location::Host, Location::Cuda(7)], 64)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cuda:7"), "{e}");
    }
    // One location: its own memory.
    let m = Memory::reachable_from(&[Location::Host], 64).unwrap();
    assert_eq!(m.location(), Location::Host);
    assert_eq!(
        locus::reachable_kind(&[Location::Host]).unwrap().kind,
        MemoryKind::Default
    );
    // The same set in another order and with repeats is the same answer.
    let at = *common::required_locations().last().unwrap();
    let one = locus::reachable_kind(&[Location::Host, at]);
    let two = locus::reachable_kind(&[at, Location::Host, at]);
    assert_eq!(
        one.map_err(|e| e.to_string()),
        two.map_err(|e| e.to_string())
    );
}
