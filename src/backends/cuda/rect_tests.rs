//! Regions on a CUDA device over the real call layer and the simulated driver: the
//! rectangle-copy suite (`cuda_hip/rect_suite_tests.rs`) with `cuMemcpy3DAsync`.

use std::sync::Arc;

use super::simulated::SimCuda;
use super::*;
use crate::backends::cuda_hip::rect_suite_tests::{self as rect_suite, SimulatedDriver};
use crate::backends::cuda_hip::{sim_model, GpuDevice};

const CALL: &str = "cuMemcpy3DAsync";

struct Driver(SimCuda);

impl SimulatedDriver for Driver {
    fn count(&self, call: &str) -> usize {
        self.0 .0.calls().iter().filter(|(c, _)| *c == call).count()
    }

    fn violations(&self) -> Vec<String> {
        self.0 .0.violations()
    }
}

fn device() -> (Driver, Arc<GpuDevice<CudaApi>>) {
    let driver = SimCuda::new(64 << 20);
    let api = Arc::new(CudaApi::simulated(Box::new(driver.clone())));
    let facts = sim_model::facts("simulated CUDA device", 64 << 20);
    (Driver(driver), Arc::new(GpuDevice::new(api, 0, facts)))
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
