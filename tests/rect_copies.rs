//! Each runtime's own rectangle call (`Device::rect_copies`: `clEnqueue*BufferRect`,
//! `omp_target_memcpy_rect`), driven as the region planner drives it (normalized,
//! rect-ready regions; the host side addressed from its first byte), within the device,
//! from the host and to the host, in one, two and three dimensions, checked byte for byte
//! against the same copy made on the host. The planner takes a memcpy per row where both
//! memories are at host addresses (OpenMP's initial device), so this is where OpenMP's
//! call runs here.

mod common;

use locus::{Direction, Memory, RectCopy, Region};

/// (source region, destination region) pairs in 4096-byte memories, normalized.
fn cases() -> Vec<(Region, Region)> {
    let n = |r: Region| r.normalized();
    vec![
        (Region::contiguous(100, 900), Region::contiguous(3000, 900)),
        (
            n(Region::block_2d::<f64>((16, 32), (2, 30), (13, 2))),
            n(Region::block_2d::<f64>((32, 16), (1, 0), (13, 2))),
        ),
        (
            n(Region::block_3d::<f32>((4, 16, 16), (1, 3, 5), (3, 7, 4))),
            n(Region::block_3d::<f32>((8, 8, 16), (4, 1, 12), (3, 7, 4))),
        ),
    ]
}

fn bytes(n: usize, salt: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ salt).collect()
}

#[test]
fn each_runtime_rectangle_call_copies_as_the_host_would() {
    let len = 4096;
    let mut ran = Vec::new();
    for at in common::required_locations() {
        let device = locus::registry().device(at).unwrap();
        let Some(rect) = device.rect_copies() else {
            continue;
        };
        for (sr, dr) in cases() {
            let (a, b) = (bytes(len, 1), bytes(len, 2));
            let src = Memory::new(at, len).unwrap();
            let dst = Memory::new(at, len).unwrap();
            src.write(0, &a).unwrap();
            dst.write(0, &b).unwrap();
            let copy = RectCopy::Within {
                src: src.native(),
                src_region: sr,
                dst: dst.native(),
                dst_region: dr,
            };
            assert!(!rect.rect_call(copy.direction()).is_empty());
            rect.copy_rect(copy)
                .unwrap_or_else(|e| panic!("{at} within: {e}"));
            let mut got = vec![0u8; len];
            dst.read(0, &mut got).unwrap();
            assert!(
                got == common::region_copied(&a, &sr, &b, &dr),
                "{at}: within, {sr} -> {dr}"
            );

            // From the host: the host slice starts at the source region's first byte.
            dst.write(0, &b).unwrap();
            let start = sr.origin[0];
            let from_zero = Region {
                origin: [0, 0, 0],
                ..sr
            };
            rect.copy_rect(RectCopy::Write {
                src: &a[start..sr.end().unwrap()],
                src_region: from_zero,
                dst: dst.native(),
                dst_region: dr,
            })
            .unwrap_or_else(|e| panic!("{at} write: {e}"));
            dst.read(0, &mut got).unwrap();
            assert!(
                got == common::region_copied(&a, &sr, &b, &dr),
                "{at}: from the host, {sr} -> {dr}"
            );

            // To the host: the host slice starts at the destination region's first byte.
            let mut host = b.clone();
            let (start, end) = (dr.origin[0], dr.end().unwrap());
            let to_zero = Region {
                origin: [0, 0, 0],
                ..dr
            };
            rect.copy_rect(RectCopy::Read {
                src: src.native(),
                src_region: sr,
                dst: &mut host[start..end],
                dst_region: to_zero,
            })
            .unwrap_or_else(|e| panic!("{at} read: {e}"));
            assert!(
                host == common::region_copied(&a, &sr, &b, &dr),
                "{at}: to the host, {sr} -> {dr}"
            );
        }
        ran.push(format!(
            "{at} ({})",
            rect.rect_call(Direction::WithinDevice)
        ));
    }
    println!("rectangle calls checked: {}", ran.join(", "));
    let required = common::required();
    for technology in ["opencl", "openmp"] {
        if required.split(',').any(|t| t.trim() == technology) {
            assert!(
                ran.iter().any(|r| r.starts_with(technology)),
                "no {technology} rectangle call ran: {ran:?}"
            );
        }
    }
}
