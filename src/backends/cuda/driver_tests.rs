//! GpuDevice over CudaApi's real call layer and the simulated CUDA driver (issue 48,
//! item 8): bytes round-trip through device memory, pageable and pinned, small and
//! large, with every copy on locus's own stream: never the legacy NULL stream, whose
//! synchronous `cuMemcpyHtoD` / `cuMemcpyDtoH` wait for (and hold up) every blocking
//! stream of the context, PyTorch's and CuPy's default streams among them.

use std::sync::Arc;

use super::simulated::SimCuda;
use super::*;
use crate::backends::cuda_hip::{sim_model, GpuDevice};

/// A CUDA device of 64 MiB over the simulated driver, which the test keeps too.
fn device() -> (SimCuda, Arc<GpuDevice<CudaApi>>) {
    device_on(SimCuda::new(64 << 20))
}

fn device_on(driver: SimCuda) -> (SimCuda, Arc<GpuDevice<CudaApi>>) {
    let api = Arc::new(CudaApi::simulated(Box::new(driver.clone())));
    let facts = sim_model::facts("simulated CUDA device", 64 << 20);
    (driver, Arc::new(GpuDevice::new(api, 0, facts)))
}

#[test]
fn uploads_and_downloads_of_every_size_stay_on_locus_s_stream() {
    round_trips(device());
}

// The same with the driver's streams progressing on their own, as a GPU's copy engines
// do beside the host: what waits for what must still hold.
#[test]
fn the_round_trips_hold_with_streams_progressing_on_their_own() {
    round_trips(device_on(SimCuda::progressing(64 << 20)));
}

fn round_trips((driver, gpu): (SimCuda, Arc<GpuDevice<CudaApi>>)) {
    for n in [100, 64 << 10, (64 << 10) + 1, (3 << 20) + 100] {
        let memory = gpu.allocate(n).unwrap();
        let bytes: Vec<u8> = (0..n).map(|i| (i % 249) as u8).collect();
        Device::write(gpu.as_ref(), &memory, 0, &bytes).unwrap();
        let mut back = vec![0u8; n];
        Device::read(gpu.as_ref(), &memory, 0, &mut back).unwrap();
        assert!(back == bytes, "{n} bytes did not make the round trip");
        // SAFETY: allocated above, unused.
        unsafe { gpu.free(&memory, n) };
    }
    assert!(
        driver.0.violations().is_empty(),
        "copies on the legacy NULL stream: {:?}",
        driver.0.violations()
    );
    let calls = driver.0.calls();
    assert!(
        calls.iter().any(|(c, _)| *c == "cuMemcpyHtoDAsync"),
        "{calls:?}"
    );
    assert!(
        calls.iter().any(|(c, _)| *c == "cuMemcpyDtoHAsync"),
        "{calls:?}"
    );
}

#[test]
fn an_allocation_beyond_the_device_is_out_of_memory_naming_the_call() {
    let (_, gpu) = device();
    let e = gpu.allocate(128 << 20).unwrap_err();
    assert!(e.is_out_of_memory(), "{e}");
    assert!(e.to_string().contains("cuda:0"), "{e}");
}

/// Stream-ordered memory comes from a pool of locus's own (issue 61, item 4): made with
/// `cuMemPoolCreate` for the device, told to keep freed memory, allocated from with
/// `cuMemAllocFromPoolAsync`; the device's default pool, which CuPy's and PyTorch's
/// stream-ordered allocators share, is never tuned. On the code before, locus set the
/// default pool's release threshold to the maximum (so the other libraries' freed memory
/// was never given back) and allocated with `cuMemAllocAsync` from whichever pool another
/// library had made current.
#[test]
fn stream_ordered_memory_comes_from_a_pool_of_locus_s_own() {
    let driver = SimCuda::new(64 << 20);
    let api = Arc::new(CudaApi::simulated(Box::new(driver.clone())));
    let mut facts = sim_model::facts("simulated CUDA device", 64 << 20);
    facts.stream_ordered_pools = true;
    let gpu = Arc::new(GpuDevice::new(api, 0, facts));
    for _ in 0..3 {
        let memory = gpu
            .allocate_kind(1 << 20, crate::backends::cuda_hip::GpuMemory::StreamOrdered)
            .unwrap();
        drop(memory);
    }
    let calls = driver.0.calls();
    let count = |name: &str| calls.iter().filter(|(c, _)| *c == name).count();
    assert_eq!(
        count("cuMemPoolCreate"),
        1,
        "one pool per device: {calls:?}"
    );
    assert_eq!(count("cuMemAllocFromPoolAsync"), 3, "{calls:?}");
    let pool = driver.1.lock().unwrap().pools[0];
    assert!(
        calls.contains(&("cuMemPoolSetAttribute", pool)),
        "locus's pool keeps its freed memory: {calls:?}"
    );
    assert!(
        driver.0.violations().is_empty(),
        "{:?}",
        driver.0.violations()
    );
}
