//! The rectangle-copy contract every GPU backend's driver is held to (issue 65), one
//! suite run per vendor over its real call layer and simulated driver
//! (`cuda/rect_tests.rs`, `hip/rect_tests.rs`): a column face uploaded, copied within
//! the device and downloaded, each in one call of the driver's 3-D copy on locus's
//! stream, byte for byte; a side of a 3-D box within the device; rows past an
//! allocation are the driver's error, and locus checks regions before the driver sees
//! them.

use std::sync::Arc;

use super::{GpuApi, GpuDevice, GpuMemory};
use crate::core::device::Device;
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::rect_copy::RectCopy;
use crate::core::region::Region;
use crate::runtime::transfer::{RegionRouteKind, RegionVia};

/// What a suite needs of a simulated driver: how often `call` was made, and the rules
/// it saw broken.
pub(crate) trait SimulatedDriver {
    /// Calls of `call` so far.
    fn count(&self, call: &str) -> usize;
    /// The driver's rules broken so far.
    fn violations(&self) -> Vec<String>;
}

fn host_with(bytes: &[u8]) -> Memory {
    let m = Memory::new(Location::Host, bytes.len()).unwrap();
    m.write(0, bytes).unwrap();
    m
}

/// A column face up, within the device and down: one call of `call` each.
pub(crate) fn a_column_face_moves_in_one_driver_call_each_way<A: GpuApi>(
    driver: &dyn SimulatedDriver,
    gpu: &Arc<GpuDevice<A>>,
    call: &str,
) {
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
    assert!(up.how.contains(call), "{up}");
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
    assert_eq!(driver.count(call), 3);
    let v = driver.violations();
    assert!(v.is_empty(), "the driver's rules broken: {v:?}");
}

/// The x = 11 side of a 6 x 10 x 12 box of f32, within the device.
pub(crate) fn a_side_of_a_box_moves_within_the_device<A: GpuApi>(
    driver: &dyn SimulatedDriver,
    gpu: &Arc<GpuDevice<A>>,
    call: &str,
) {
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
    assert!(route.how.contains(call), "{route}");
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
    assert!(driver.violations().is_empty(), "{:?}", driver.violations());
}

/// Rows past an allocation: locus's check first, the driver's error when handed to it.
pub(crate) fn rows_past_an_allocation_are_the_drivers_error<A: GpuApi>(
    driver: &dyn SimulatedDriver,
    gpu: &Arc<GpuDevice<A>>,
    call: &str,
) {
    let a = gpu.allocate_kind(4096, GpuMemory::Device).unwrap();
    let b = gpu.allocate_kind(4096, GpuMemory::Device).unwrap();
    let long = Region::rows((0, 0), 64, 65, 64);
    let e = a.copy_region_to(&long, &b, &long.packed()).unwrap_err();
    assert!(
        e.to_string().contains("past the memory's 4096 bytes"),
        "{e}"
    );
    assert_eq!(driver.count(call), 0);
    let rect = gpu.rect_copies().expect("the driver has a rectangle copy");
    let e = rect
        .copy_rect(RectCopy::Within {
            src: a.native(),
            src_region: long.normalized(),
            dst: b.native(),
            dst_region: long.packed(),
        })
        .unwrap_err();
    assert!(e.to_string().contains(call), "{e}");
    assert!(
        !driver.violations().is_empty(),
        "the simulator saw no fault"
    );
}
