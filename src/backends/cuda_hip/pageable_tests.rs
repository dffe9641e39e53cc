//! Host memory on a device with pageable memory access (HMM, ATS: issue 45, item 2): the
//! device's own answer decides. Where it says yes, host memory is reachable from its
//! kernels in place (accessibility says why, a launch takes the host address); where it
//! says no, it is not, and a launch over host memory is refused naming it.

use super::simulated::{facts, Strict};
use super::*;

fn device(pageable: bool) -> GpuDevice<Strict> {
    let api = Arc::new(Strict::new(1, vec![], 64 << 20, vec![]));
    let mut facts = facts(0, true);
    facts.pageable_memory_access = pageable;
    GpuDevice::new(api, 0, facts)
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
