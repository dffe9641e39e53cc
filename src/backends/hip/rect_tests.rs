//! Regions on a HIP device over the real call layer and the simulated runtime (issue
//! 65): a column face uploaded, copied within the device and downloaded, each in one
//! `hipMemcpy3DAsync` on locus's stream, byte for byte; a plane of a 3-D box; rows past an
//! allocation are the runtime's error, and locus checks regions before the runtime sees
//! them.

use std::sync::Arc;

use super::simulated::{SimHip, SimHiprtc};
use super::*;
use crate::backends::cuda_hip::{sim_model, GpuDevice, GpuMemory};
use crate::core::device::Device;
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::rect_copy::RectCopy;
use crate::core::region::Region;
use crate::transfer::{RegionRouteKind, RegionVia};

fn device() -> (SimHip, Arc<GpuDevice<HipApi>>) {
    let runtime = SimHip::new(64 << 20);
    let api = Arc::new(HipApi::simulated(
        &runtime,
        Box::new(SimHiprtc::default()),
        vec![Some("gfx90a".into())],
    ));
    let facts = sim_model::facts("simulated HIP device", 64 << 20);
    (runtime, Arc::new(GpuDevice::new(api, 0, facts)))
}

fn calls(driver: &SimHip, call: &str) -> usize {
    driver.0.calls().iter().filter(|(c, _)| *c == call).count()
}

fn host_with(bytes: &[u8]) -> Memory {
    let m = Memory::new(Location::Host, bytes.len()).unwrap();
    m.write(0, bytes).unwrap();
    m
}

#[test]
fn a_column_face_moves_in_one_driver_call_each_way() {
    let (driver, gpu) = device();
    let (rows, cols) = (64, 40);
    let grid: Vec<u8> = (0..rows * cols * 8).map(|i| (i % 251) as u8).collect();
    let host = host_with(&grid);
    let on_gpu = gpu.allocate_kind(grid.len(), GpuMemory::Device).unwrap();
    let face = Region::block_2d::<f64>((rows, cols), (0, 7), (rows, 1));
    let halo = Region::block_2d::<f64>((rows, cols), (0, 0), (rows, 1));
    let rect = RegionVia::Kind(RegionRouteKind::Rect);
    let up = host
        .copy_region_to_via(&face, &on_gpu, &face, rect)
        .unwrap();
    assert!(up.how.contains("hipMemcpy3DAsync"), "{up}");
    let within = on_gpu.copy_region_to(&face, &on_gpu, &halo).unwrap();
    assert_eq!(within.kind, RegionRouteKind::Rect, "{within}");
    let back = Memory::new(Location::Host, rows * 8).unwrap();
    on_gpu
        .copy_region_to_via(&halo, &back, &halo.packed(), rect)
        .unwrap();
    let mut got = vec![0u8; rows * 8];
    back.read(0, &mut got).unwrap();
    for r in 0..rows {
        let want = &grid[r * cols * 8 + 56..r * cols * 8 + 64];
        assert_eq!(&got[r * 8..r * 8 + 8], want, "row {r}");
    }
    assert_eq!(
        calls(&driver, "hipMemcpy3DAsync"),
        3,
        "{:?}",
        driver.0.calls()
    );
    let v = driver.0.violations();
    assert!(v.is_empty(), "the driver's rules broken: {v:?}");
}

#[test]
fn a_side_of_a_box_moves_within_the_device() {
    let (driver, gpu) = device();
    let dims = (6, 10, 12);
    let n = dims.0 * dims.1 * dims.2 * 4;
    let bytes: Vec<u8> = (0..n).map(|i| (i * 7 % 256) as u8).collect();
    let a = gpu.allocate_kind(n, GpuMemory::Device).unwrap();
    a.write(0, &bytes).unwrap();
    let side = Region::block_3d::<f32>(dims, (0, 0, 11), (6, 10, 1));
    let b = gpu
        .allocate_kind(side.bytes().unwrap(), GpuMemory::Device)
        .unwrap();
    let route = a.copy_region_to(&side, &b, &side.packed()).unwrap();
    assert!(route.how.contains("hipMemcpy3DAsync"), "{route}");
    let mut got = vec![0u8; side.bytes().unwrap()];
    b.read(0, &mut got).unwrap();
    for z in 0..6 {
        for y in 0..10 {
            let at = (z * 10 + y) * 12 * 4 + 11 * 4;
            assert_eq!(
                &got[(z * 10 + y) * 4..][..4],
                &bytes[at..at + 4],
                "({z}, {y})"
            );
        }
    }
    assert!(
        driver.0.violations().is_empty(),
        "{:?}",
        driver.0.violations()
    );
}

#[test]
fn rows_past_an_allocation_are_the_drivers_error() {
    let (driver, gpu) = device();
    let a = gpu.allocate_kind(4096, GpuMemory::Device).unwrap();
    let b = gpu.allocate_kind(4096, GpuMemory::Device).unwrap();
    // Past `a`'s end: locus's own check refuses it before the runtime is called.
    let long = Region::rows((0, 0), 64, 65, 64);
    let e = a.copy_region_to(&long, &b, &long.packed()).unwrap_err();
    assert!(
        e.to_string().contains("past the memory's 4096 bytes"),
        "{e}"
    );
    assert_eq!(calls(&driver, "hipMemcpy3DAsync"), 0);
    // Handed to the runtime directly, the same rows are its error, naming the call.
    let rect = gpu.rect_copies().expect("HIP has a rectangle copy");
    let e = rect
        .copy_rect(RectCopy::Within {
            src: a.native(),
            src_region: long.normalized(),
            dst: b.native(),
            dst_region: long.packed(),
        })
        .unwrap_err();
    assert!(e.to_string().contains("hipMemcpy3DAsync"), "{e}");
    assert!(
        !driver.0.violations().is_empty(),
        "the simulator saw no fault"
    );
}
