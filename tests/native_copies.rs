//! Each technology's own transfer calls on locus memory (`Memory::native_write`,
//! `native_read`, `native_copy_to`): the raw baselines `locus bench` times beside
//! locus's routes, checked byte for byte at every pair of the locations this machine is
//! required to have, with the calls named as that API's users know them.

mod common;

use locus::{Direction, Location, Memory};

#[test]
fn native_calls_copy_every_pair_exactly() {
    let _serial = common::serial();
    let locations = common::required_locations();
    let n = 3 * 4096 + 12;
    let data = common::pattern_u8(n, 7);
    let mut scratch = vec![0u8; n];
    for &s in &locations {
        let src = Memory::new(s, n).unwrap();
        src.native_write(&data).unwrap();
        let mut back = vec![0u8; n];
        src.native_read(&mut back).unwrap();
        assert_eq!(back, data, "{s}: native write then read");
        for &d in &locations {
            let dst = Memory::new(d, n).unwrap();
            src.native_copy_to(&dst, n - 4, &mut scratch)
                .unwrap_or_else(|e| panic!("{s} -> {d}: {e}"));
            let mut got = vec![0u8; n - 4];
            dst.read(0, &mut got).unwrap();
            assert_eq!(
                got,
                data[..n - 4],
                "{s} -> {d}: {}",
                src.native_calls_to(&dst)
            );
            assert!(!src.native_calls_to(&dst).is_empty());
        }
    }
}

#[test]
fn native_calls_are_named_by_their_technology() {
    let expect = |l: Location, d: Direction, name: &str| {
        if common::required_locations().contains(&l) {
            let m = Memory::new(l, 64).unwrap();
            assert_eq!(m.native_call(d), name, "{l} {d:?}");
        } else {
            println!("SKIPPED: {l} is not here");
        }
    };
    expect(Location::Host, Direction::HostToDevice, "memcpy");
    expect(
        Location::OpenMp(0),
        Direction::DeviceToHost,
        "omp_target_memcpy",
    );
    expect(
        Location::OpenCl(0),
        Direction::HostToDevice,
        "clEnqueueWriteBuffer",
    );
    expect(
        Location::OpenCl(0),
        Direction::DeviceToHost,
        "clEnqueueReadBuffer",
    );
    expect(
        Location::OpenCl(0),
        Direction::WithinDevice,
        "clEnqueueCopyBuffer",
    );
    expect(
        Location::Sycl(0),
        Direction::WithinDevice,
        "DPCTLQueue_Memcpy",
    );
    expect(Location::Cuda(0), Direction::DeviceToHost, "cuMemcpyDtoH");
}

#[test]
fn native_copies_refuse_bad_ranges_and_say_why() {
    let locations = common::required_locations();
    let (a, b) = (locations[0], *locations.last().unwrap());
    let (src, dst) = (Memory::new(a, 64).unwrap(), Memory::new(b, 32).unwrap());
    let mut scratch = vec![0u8; 64];
    let e = src
        .native_copy_to(&dst, 64, &mut scratch)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&b.to_string()) && e.contains("native copy"),
        "{e}"
    );
    assert!(src.native_write(&[0; 65]).is_err());
    assert!(src.native_read(&mut [0; 65]).is_err());
    let e = src
        .native_copy_to(&src, 8, &mut scratch)
        .unwrap_err()
        .to_string();
    assert!(e.contains("onto itself"), "{e}");
    if let Some(&(x, y)) = locations
        .iter()
        .flat_map(|&x| locations.iter().map(move |&y| (x, y)))
        .find(|(x, y)| !x.is_host() && !y.is_host() && x != y)
        .as_ref()
    {
        let (x, y) = (Memory::new(x, 64).unwrap(), Memory::new(y, 64).unwrap());
        let e = x
            .native_copy_to(&y, 64, &mut [0; 8])
            .unwrap_err()
            .to_string();
        assert!(e.contains("scratch"), "{e}");
    } else {
        println!("SKIPPED: no two device locations here");
    }
}
