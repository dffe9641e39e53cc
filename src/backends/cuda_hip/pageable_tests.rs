//! Host memory on a device with pageable memory access (HMM, ATS: issue 45, item 2): the
//! device's own answer decides. Where it says yes, host memory is reachable from its
//! kernels in place (accessibility says why, a launch takes the host address); where it
//! says no, it is not, and a launch over host memory is refused naming it.

use super::simulated::{facts, Strict};
use super::*;
use crate::resource::{MemoryResource, SamHeadroom};

fn device(pageable: bool) -> GpuDevice<Strict> {
    simulated(pageable).1
}

fn simulated(pageable: bool) -> (Arc<Strict>, GpuDevice<Strict>) {
    let api = Arc::new(Strict::new(1, vec![], 64 << 20, vec![]));
    let mut facts = facts(0, true);
    facts.pageable_memory_access = pageable;
    (Arc::clone(&api), GpuDevice::new(api, 0, facts))
}

fn host_memory() -> Memory {
    let m = Memory::new(Location::Host, 4096).unwrap();
    m.write(0, &[1u8; 4096]).unwrap();
    m
}

fn launch_over(gpu: &GpuDevice<Strict>, m: &Memory) -> Result<Completion> {
    let spec = LaunchSpec {
        source: "extern \"C\" __global__ void k(float *x) {}",
        entry: "k",
        workgroup: [256, 1, 1],
        global: [1024, 1],
        dims: 1,
    };
    gpu.launch(&spec, &[LaunchArg::Memory(m)])
}

#[test]
fn host_memory_is_in_place_where_the_device_reaches_pageable_memory() {
    let gpu = device(true);
    let m = host_memory();
    let (in_place, why) = gpu
        .accessibility_of(m.device().as_ref(), Some(m.native()), m.host_access())
        .expect("the device answers for host memory");
    assert!(in_place, "{why}");
    assert!(why.contains("pageable memory access"), "{why}");
    launch_over(&gpu, &m).expect("a kernel over host memory in place");
    assert!(gpu
        .info()
        .notes
        .iter()
        .any(|n| n.starts_with("pageable memory access")));
}

#[test]
fn host_memory_is_copied_where_the_device_does_not() {
    let gpu = device(false);
    let m = host_memory();
    assert_eq!(
        gpu.accessibility_of(m.device().as_ref(), Some(m.native()), m.host_access()),
        None,
        "no answer of the device's own: the default (a copy) decides"
    );
    let err = launch_over(&gpu, &m).err().expect("refused");
    assert!(err.to_string().contains("not addressable here"), "{err}");
}

/// RMM's `sam_headroom`: each allocation prefers the GPU for as much as leaves the
/// headroom free there, the host for the rest; its memory is host memory the GPU uses
/// in place.
#[test]
fn sam_headroom_prefers_the_gpu_up_to_its_headroom() {
    let (api, gpu) = simulated(true);
    let gpu: Arc<dyn Device> = Arc::new(gpu);
    let (free, _) = gpu.available_memory().unwrap();
    let fits = 300 << 10;
    let sam: Arc<dyn MemoryResource> =
        Arc::new(SamHeadroom::on(Arc::clone(&gpu), free as usize - fits).unwrap());
    let n = 1 << 20;
    let m = Memory::from_resource(&sam, n).unwrap();
    assert_eq!(m.location(), Location::Host);
    let start = m.native().address();
    assert_eq!(
        api.advice(),
        vec![
            (start, fits, Some(0)),
            (start + fits as u64, n - fits, None)
        ],
        "the GPU for what fits above the headroom, the host for the rest"
    );
    let (in_place, why) = gpu
        .accessibility_of(m.device().as_ref(), Some(m.native()), m.host_access())
        .unwrap();
    assert!(in_place, "{why}");
    // No room above the headroom: all of it on the host.
    let tight: Arc<dyn MemoryResource> =
        Arc::new(SamHeadroom::on(Arc::clone(&gpu), usize::MAX).unwrap());
    let m = Memory::from_resource(&tight, 4096).unwrap();
    assert_eq!(
        api.advice().last(),
        Some(&(m.native().address(), 4096, None))
    );
}

#[test]
fn sam_headroom_is_refused_where_the_gpu_does_not_page_host_memory() {
    let gpu: Arc<dyn Device> = Arc::new(device(false));
    let err = SamHeadroom::on(gpu, 0).err().expect("refused");
    assert!(
        err.to_string()
            .contains("does not use system-allocated memory in place"),
        "{err}"
    );
}
