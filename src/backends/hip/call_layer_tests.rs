//! GpuDevice over HipApi's real call layer on the simulated runtime, for the calls
//! beyond plain copies (issue 61, item 2): registration (device-mapped; ROCm's
//! device-wide wait to unregister), IPC between two simulated processes, pointer
//! attributes, managed memory and advice, locus's own stream-ordered pool, modules and
//! launches. The runtime's rules are the simulator's (`simulated/`,
//! `cuda_hip/sim_model/`).

use std::sync::Arc;

use super::simulated::{SimHip, SimHiprtc};
use super::*;
use crate::backends::cuda_hip::{sim_model, GpuApi, GpuDevice, GpuMemory};
use crate::core::device::Device;
use crate::core::launch::LaunchSpec;

type Sim = (SimHip, Arc<HipApi>, Arc<GpuDevice<HipApi>>);

/// A HIP device of 64 MiB over the simulated runtime, with stream-ordered pools.
fn device() -> Sim {
    let runtime = SimHip::new(64 << 20);
    let api = Arc::new(HipApi::simulated(
        &runtime,
        Box::new(SimHiprtc::default()),
        vec![Some("gfx90a".into())],
    ));
    let mut facts = sim_model::facts("simulated HIP device", 64 << 20);
    facts.stream_ordered_pools = true;
    let gpu = Arc::new(GpuDevice::new(Arc::clone(&api), 0, facts));
    (runtime, api, gpu)
}

fn no_violations(runtime: &SimHip) {
    let v = runtime.0.violations();
    assert!(v.is_empty(), "the runtime's rules broken: {v:?}");
}

/// Registered memory is device-mapped; ending the registration is ROCm's device-wide
/// wait (recorded); a second registration of the range is the runtime's error.
#[test]
fn host_memory_registers_device_mapped_and_unregisters_once() {
    let (runtime, _, gpu) = device();
    let mut host = vec![0u8; 4096];
    let registration = gpu
        .host_registration()
        .expect("a GPU registers host memory");
    // SAFETY: `host` outlives the registration, dropped below before it.
    let first = unsafe { registration.register_host(host.as_mut_ptr(), 4096) }.unwrap();
    assert_eq!(
        runtime.0.registered(),
        vec![(host.as_ptr() as usize, 4096, true)]
    );
    // SAFETY: as above (refused).
    let again = unsafe { registration.register_host(host.as_mut_ptr(), 4096) };
    let Err(e) = again else {
        panic!("already registered")
    };
    let e = e.to_string();
    assert!(
        e.contains("hip:0") && e.contains("hipHostRegister") && e.contains("AlreadyRegistered"),
        "{e}"
    );
    drop(first);
    assert!(runtime.0.registered().is_empty());
    assert_eq!(runtime.0.device_wide_syncs(), vec!["hipHostUnregister"]);
    no_violations(&runtime);
}

#[test]
fn device_memory_is_shared_between_processes_through_ipc_handles() {
    let (maker_runtime, _, maker) = device();
    let (other_runtime, _, other) = device();
    let mine = maker.allocate_kind(2 << 20, GpuMemory::Device).unwrap();
    Device::write(maker.as_ref(), mine.native(), 0, &[7u8; 64]).unwrap();
    let handle = maker
        .ipc_handles()
        .unwrap()
        .ipc_export(mine.native())
        .unwrap();
    let ipc = other.ipc_handles().unwrap();
    // SAFETY: the maker keeps `mine` until after the close below.
    let theirs = unsafe { ipc.ipc_open(&handle) }.unwrap();
    let mut got = [0u8; 64];
    Device::read(other.as_ref(), &theirs, 0, &mut got).unwrap();
    assert_eq!(got, [7u8; 64], "the maker's bytes, in place");
    // SAFETY: the maker's own handle: refused by the runtime.
    let e = unsafe { maker.ipc_handles().unwrap().ipc_open(&handle) }
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("hipIpcOpenMemHandle") && e.contains("InvalidContext"),
        "{e}"
    );
    // SAFETY: opened above, used by nothing now.
    unsafe { ipc.ipc_close(&theirs) };
    assert!(other_runtime.0.ipc_opened().is_empty());
    no_violations(&maker_runtime);
}

#[test]
fn pointer_attributes_and_advice_follow_the_memory_s_kind() {
    let (runtime, api, gpu) = device();
    let managed = gpu.allocate_kind(4096, GpuMemory::Managed).unwrap();
    let device = gpu.allocate_kind(4096, GpuMemory::Device).unwrap();
    let _current = api.enter(0).unwrap();
    assert_eq!(
        api.pointer_device(device.native().address() + 10).unwrap(),
        0
    );
    let e = api.pointer_device(0x10).unwrap_err().to_string();
    assert!(e.contains("hipPointerGetAttribute"), "{e}");
    api.prefer_location(managed.native().address(), 4096, Some(0))
        .unwrap();
    let e = api
        .prefer_location(device.native().address(), 4096, None)
        .unwrap_err();
    assert!(e.to_string().contains("hipMemAdvise"), "{e}");
    no_violations(&runtime);
}

#[test]
fn stream_ordered_memory_comes_from_a_pool_of_locus_s_own() {
    let (runtime, _, gpu) = device();
    for _ in 0..3 {
        drop(
            gpu.allocate_kind(1 << 20, GpuMemory::StreamOrdered)
                .unwrap(),
        );
    }
    let calls = runtime.0.calls();
    let count = |name: &str| calls.iter().filter(|(c, _)| *c == name).count();
    assert_eq!(
        count("hipMemPoolCreate"),
        1,
        "one pool per device: {calls:?}"
    );
    assert_eq!(count("hipMallocFromPoolAsync"), 3);
    assert_eq!(count("hipFreeAsync"), 3);
    no_violations(&runtime);
}

#[test]
fn a_compiled_kernel_loads_and_launches_on_locus_s_stream() {
    let (runtime, _, gpu) = device();
    let spec = LaunchSpec {
        source: "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }",
        entry: "k",
        workgroup: [256, 1, 1],
        global: [1000, 1],
        dims: 1,
    };
    crate::core::capability::Kernels::launch(gpu.as_ref(), &spec, &[]).unwrap();
    let launches = runtime.0.launches();
    assert_eq!(launches.len(), 1);
    assert_eq!(
        (launches[0].name.as_str(), launches[0].stream),
        ("k", 0x5000)
    );
    let missing = LaunchSpec {
        entry: "nothing",
        ..spec
    };
    let e = crate::core::capability::Kernels::launch(gpu.as_ref(), &missing, &[])
        .err()
        .expect("no such kernel")
        .to_string();
    assert!(
        e.contains("hipModuleGetFunction") && e.contains("NotFound"),
        "{e}"
    );
    no_violations(&runtime);
}

#[test]
fn freeing_device_memory_waits_for_the_whole_device() {
    let (runtime, _, gpu) = device();
    drop(gpu.allocate_kind(4096, GpuMemory::Device).unwrap());
    assert_eq!(runtime.0.device_wide_syncs(), vec!["hipFree"]);
    no_violations(&runtime);
}

/// The driver answers for memory whoever allocated it (`locus::lookup` past its index).
#[test]
fn the_driver_answers_for_every_kind_of_its_memory() {
    let (runtime, _, gpu) = device();
    crate::backends::cuda_hip::pointer_query_checks::the_driver_names_every_kind_of_its_memory(
        &gpu,
    );
    no_violations(&runtime);
}
