//! Regions on a HIP device over the real call layer and the simulated runtime: the
//! rectangle-copy suite (`cuda_hip/rect_suite_tests.rs`) with `hipMemcpy3DAsync`.

use std::sync::Arc;

use super::simulated::{SimHip, SimHiprtc};
use super::*;
use crate::backends::cuda_hip::rect_suite_tests::{self as rect_suite, SimulatedDriver};
use crate::backends::cuda_hip::{sim_model, GpuDevice};

const CALL: &str = "hipMemcpy3DAsync";

struct Driver(SimHip);

impl SimulatedDriver for Driver {
    fn count(&self, call: &str) -> usize {
        self.0 .0.calls().iter().filter(|(c, _)| *c == call).count()
    }

    fn violations(&self) -> Vec<String> {
        self.0 .0.violations()
    }
}

fn device() -> (Driver, Arc<GpuDevice<HipApi>>) {
    let runtime = SimHip::new(64 << 20);
    let api = Arc::new(HipApi::simulated(
        &runtime,
        Box::new(SimHiprtc::default()),
        vec![Some("gfx90a".into())],
    ));
    let facts = sim_model::facts("simulated HIP device", 64 << 20);
    (Driver(runtime), Arc::new(GpuDevice::new(api, 0, facts)))
}

#[test]
fn a_column_face_moves_in_one_driver_call_each_way() {
    let (driver, gpu) = device();
    rect_suite::a_column_face_moves_in_one_driver_call_each_way(&driver, &gpu, CALL);
}

#[test]
fn a_side_of_a_box_moves_within_the_device() {
    let (driver, gpu) = device();
    rect_suite::a_side_of_a_box_moves_within_the_device(&driver, &gpu, CALL);
}

#[test]
fn rows_past_an_allocation_are_the_drivers_error() {
    let (driver, gpu) = device();
    rect_suite::rows_past_an_allocation_are_the_drivers_error(&driver, &gpu, CALL);
}
