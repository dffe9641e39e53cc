//! HAMR's pipeline tests (`test/test_hamr_pipeline_*.cpp`) in locus's terms: buffers of
//! mixed element types made and combined at rotating locations, with asynchronous moves
//! (the buffers' default mode) and codelets, checked element by element.

mod common;

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::{Buffer, Location, Transfer};

/// The target for a kernel at `l`: `l` itself, the host where `l` cannot run it.
fn target(kernel: &locus::codelet::Kernel, l: Location) -> Location {
    let device = locus::registry().device(l).unwrap();
    if !kernel.has_source_for(l.technology())
        || (kernel.needs_f64() && device.lacks_f64().is_some())
    {
        Location::Host
    } else {
        l
    }
}

fn pipeline(start: usize, mode: Transfer) {
    let all = locus::available();
    let at = |k: usize| all[(start + k) % all.len()];
    let n = 20_000;
    let vec_add = kernels::vec_add();
    let daxpy = kernels::daxpy();
    // ao0 = 1 (f32), ao1 = 2 * ao0 via saxpy on zeros (f32), at rotating locations.
    let ao0 = Buffer::filled(at(0), n, 1.0f32)
        .unwrap()
        .with_transfer(mode);
    let mut ao1 = Buffer::<f32>::zeroed(at(1), n).unwrap().with_transfer(mode);
    let saxpy = kernels::saxpy();
    Codelet::new(&saxpy, &[target(&saxpy, at(1))])
        .unwrap()
        .call(
            &mut [
                Arg::f32(2.0),
                Arg::buf(&ao0),
                Arg::buf_mut(&mut ao1),
                Arg::u32(n as u32),
            ],
            Launch::d1(n),
        )
        .unwrap();
    // ao2 = 2 (f64); ao3 = ao2 + ao1 with ao1 converted to f64 = 4.
    let ao2 = Buffer::filled(at(2), n, 2.0f64)
        .unwrap()
        .with_transfer(mode);
    let ao1_wide = Buffer::<f64>::converted_at(at(3), &ao1)
        .unwrap()
        .with_transfer(mode);
    let mut ao3 = Buffer::<f64>::zeroed(at(3), n).unwrap().with_transfer(mode);
    Codelet::new(
        &kernels::vec_add_f64(),
        &[target(&kernels::vec_add_f64(), at(3))],
    )
    .unwrap()
    .call(
        &mut [
            Arg::buf(&ao2),
            Arg::buf(&ao1_wide),
            Arg::buf_mut(&mut ao3),
            Arg::u32(n as u32),
        ],
        Launch::d1(n),
    )
    .unwrap();
    // ao4 = 1000 * ao3 + 0 = 4000 (daxpy into zeros), moved on to the next location.
    let mut ao4 = Buffer::<f64>::zeroed(at(4), n).unwrap().with_transfer(mode);
    Codelet::new(&daxpy, &[target(&daxpy, at(4))])
        .unwrap()
        .call(
            &mut [
                Arg::f64(1000.0),
                Arg::buf(&ao3),
                Arg::buf_mut(&mut ao4),
                Arg::u32(n as u32),
            ],
            Launch::d1(n),
        )
        .unwrap();
    ao4.move_to(at(5)).unwrap();
    // ao6 = 300 (f32) made elsewhere; ao7 a copy of it; ao8 = ao4 + ao7 = 4300 in f32.
    let ao6 = Buffer::filled(at(6), n, 300.0f32)
        .unwrap()
        .with_transfer(mode);
    let mut ao7 = Buffer::<f32>::zeroed(at(7), n).unwrap().with_transfer(mode);
    ao7.copy_from(0, &ao6, 0..n).unwrap();
    let ao4_narrow = Buffer::<f32>::converted_at(at(7), &ao4)
        .unwrap()
        .with_transfer(mode);
    let mut ao8 = Buffer::<f32>::zeroed(at(8), n).unwrap().with_transfer(mode);
    Codelet::new(&vec_add, &[target(&vec_add, at(8))])
        .unwrap()
        .call(
            &mut [
                Arg::buf(&ao4_narrow),
                Arg::buf(&ao7),
                Arg::buf_mut(&mut ao8),
                Arg::u32(n as u32),
            ],
            Launch::d1(n),
        )
        .unwrap();
    // compare_int: get as i32 at yet another location, element by element.
    let ai = Buffer::<i32>::converted_at(at(9), &ao8).unwrap();
    let values = ai.to_vec().unwrap();
    for (i, v) in values.iter().enumerate() {
        assert_eq!(*v, 4300, "element {i} (start {start}, {mode:?})");
    }
}

#[test]
fn hamr_pipeline_at_rotating_locations_async() {
    let _serial = common::serial();
    for start in 0..locus::available().len() {
        pipeline(start, Transfer::Async);
    }
}

#[test]
fn hamr_pipeline_at_rotating_locations_sync_and_sync_host() {
    let _serial = common::serial();
    for start in 0..locus::available().len() {
        pipeline(start, Transfer::Sync);
        pipeline(start, Transfer::SyncHost);
    }
}
