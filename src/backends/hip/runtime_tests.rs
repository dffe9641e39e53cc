//! GpuDevice over HipApi's real call layer and the simulated HIP runtime (issue 48: the
//! simulator serves HIP's entry points): bytes round-trip through device memory, staged
//! and not, every copy and memset on locus's stream (never the NULL stream), the
//! asynchronous stream waited for where a result is read, and an allocation beyond the
//! device's memory is an out-of-memory error naming `hipMalloc` and hip:0.

use std::sync::Arc;

use super::simulated::{SimHip, SimHiprtc};
use super::*;
use crate::backends::cuda_hip::{sim_model, GpuDevice};
use crate::core::device::Device;

/// A HIP device of 64 MiB over the simulated runtime, sharing the runtime for its records.
fn device() -> (SimHip, Arc<GpuDevice<HipApi>>) {
    device_on(SimHip::new(64 << 20))
}

fn device_on(runtime: SimHip) -> (SimHip, Arc<GpuDevice<HipApi>>) {
    let api = Arc::new(HipApi::simulated(
        &runtime,
        Box::new(SimHiprtc::default()),
        vec![Some("gfx90a".into())],
    ));
    let facts = sim_model::facts("simulated HIP device", 64 << 20);
    (runtime, Arc::new(GpuDevice::new(api, 0, facts)))
}

#[test]
fn bytes_round_trip_through_device_memory_on_locus_s_stream() {
    round_trips(device());
}

// The same with the runtime's streams progressing on their own.
#[test]
fn the_round_trips_hold_with_streams_progressing_on_their_own() {
    round_trips(device_on(SimHip::progressing(64 << 20)));
}

fn round_trips((runtime, gpu): (SimHip, Arc<GpuDevice<HipApi>>)) {
    for n in [100, 64 << 10, (3 << 20) + 100] {
        let memory = gpu.allocate(n).unwrap();
        let bytes: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        Device::write(gpu.as_ref(), &memory, 0, &bytes).unwrap();
        let mut back = vec![0u8; n];
        Device::read(gpu.as_ref(), &memory, 0, &mut back).unwrap();
        assert!(back == bytes, "{n} bytes did not make the round trip");
        Device::fill(gpu.as_ref(), &memory, 0, n, &[9]).unwrap();
        Device::read(gpu.as_ref(), &memory, 0, &mut back).unwrap();
        assert!(back.iter().all(|&b| b == 9), "the memset of {n} bytes");
        // SAFETY: allocated above, unused.
        unsafe { gpu.free(&memory, n) };
    }
    let calls = runtime.0.calls();
    assert!(
        calls.iter().any(|(c, _)| *c == "hipMemcpyAsync"),
        "{calls:?}"
    );
    assert!(
        calls
            .iter()
            .filter(|(c, _)| *c == "hipMemcpyAsync" || *c == "hipMemsetAsync")
            .all(|&(_, stream)| stream != 0),
        "a copy or memset on the NULL stream"
    );
    assert!(
        runtime.0.violations().is_empty(),
        "{:?}",
        runtime.0.violations()
    );
}

#[test]
fn an_allocation_beyond_the_device_is_out_of_memory_naming_hip_malloc() {
    let (_, gpu) = device();
    let e = gpu.allocate(128 << 20).unwrap_err();
    assert!(e.is_out_of_memory(), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("hip:0") && text.contains("hipMalloc"),
        "{text}"
    );
}
