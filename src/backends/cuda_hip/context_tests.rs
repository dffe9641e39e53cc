//! Another library's context on the same thread (issue 48, item 3): CuPy, PyTorch or
//! the user's own code keeps its context current between locus's calls, and after each
//! locus call finds it current again. On the code before, every call left locus's
//! device current, so the other library's next operation ran on locus's device.

use super::simulated::{facts, Strict};
use super::*;

fn devices(count: u32) -> (Arc<Strict>, Vec<Arc<GpuDevice<Strict>>>) {
    let peers = if count > 1 {
        vec![(0, 1), (1, 0)]
    } else {
        vec![]
    };
    let api = Arc::new(Strict::new(count, peers, 256 << 20, vec![]));
    let devices: Vec<_> = (0..count)
        .map(|i| Arc::new(GpuDevice::new(Arc::clone(&api), i, facts(i, true))))
        .collect();
    (api, devices)
}

fn foreign_still_current(after: &str) {
    assert_eq!(
        Strict::foreign_is_current(),
        Some(true),
        "after {after}, locus's device was left current on the caller's thread"
    );
}

#[test]
fn the_callers_context_is_current_again_after_every_call() {
    let (api, gpu) = devices(1);
    Strict::make_foreign_current();
    let n = 1 << 20;
    let a = gpu[0].allocate_kind(n, GpuMemory::Device).unwrap();
    foreign_still_current("an allocation");
    a.write(0, &vec![3u8; n]).unwrap();
    foreign_still_current("a write");
    let mut back = vec![0u8; n];
    a.read(0, &mut back).unwrap();
    assert!(back.iter().all(|&b| b == 3));
    foreign_still_current("a read");
    gpu[0].fill(a.native(), 0, 4096, &[9]).unwrap();
    foreign_still_current("a fill");
    gpu[0].synchronize().unwrap();
    foreign_still_current("a synchronize");
    gpu[0].available_memory().unwrap();
    foreign_still_current("a memory query");
    let spec = LaunchSpec {
        source: "extern \"C\" __global__ void k() {}",
        entry: "k",
        workgroup: [256, 1, 1],
        global: [1000, 1],
        dims: 1,
    };
    gpu[0].launch(&spec, &[]).unwrap();
    foreign_still_current("a kernel launch");
    let pinned = gpu[0].allocate_kind(n, GpuMemory::Pinned).unwrap();
    pinned.write(0, &vec![1u8; n]).unwrap();
    foreign_still_current("a write to pinned memory");
    drop((a, pinned));
    foreign_still_current("two frees");
    assert!(api.violations().is_empty(), "{:?}", api.violations());
}

/// A copy between two devices makes each current in turn, and the caller's context
/// after both.
#[test]
fn a_copy_between_two_devices_leaves_the_callers_context() {
    let (api, gpu) = devices(2);
    for (a, b) in [(0, 1), (1, 0)] {
        assert!(gpu[a].try_enable_peer(&gpu[b]));
    }
    Strict::make_foreign_current();
    let n = 64 << 10;
    let src = gpu[0].allocate_kind(n, GpuMemory::Device).unwrap();
    let dst = gpu[1].allocate_kind(n, GpuMemory::Device).unwrap();
    src.write(0, &vec![5u8; n]).unwrap();
    let peer = paths::<Strict>()
        .into_iter()
        .map(|(_, _, p)| p)
        .find(|p| p.name().starts_with("peer copy"))
        .expect("the peer path");
    peer.copy(&src, 0, &dst, 0, n).unwrap();
    foreign_still_current("a peer copy");
    let mut back = vec![0u8; n];
    dst.read(0, &mut back).unwrap();
    assert!(back.iter().all(|&b| b == 5));
    assert!(api.violations().is_empty(), "{:?}", api.violations());
}

/// A thread that had nothing current has nothing current after locus's call (the CUDA
/// runtime of another library then picks its own device, not locus's last one).
#[test]
fn a_thread_with_nothing_current_keeps_nothing_current() {
    let (_api, gpu) = devices(1);
    Strict::clear_current();
    let a = gpu[0].allocate_kind(4096, GpuMemory::Device).unwrap();
    a.write(0, &[1u8; 4096]).unwrap();
    assert_eq!(
        Strict::foreign_is_current(),
        None,
        "locus's device was left current"
    );
}

#[test]
fn the_native_calls_run_with_the_device_current_and_leave_the_callers_context() {
    // The benchmarks' raw baseline (`cuMemcpyHtoD` / `cuMemcpyDtoH` / `cuMemcpyDtoD`):
    // on the code before, the device was made current and put back before the call ran,
    // which failed with CUDA_ERROR_INVALID_CONTEXT (found on an H200).
    let (_api, gpu) = devices(1);
    Strict::make_foreign_current();
    let n = 4096;
    let (a, b) = (
        gpu[0].allocate_kind(n, GpuMemory::Device).unwrap(),
        gpu[0].allocate_kind(n, GpuMemory::Device).unwrap(),
    );
    gpu[0].native_write(a.native(), &[5u8; 4096]).unwrap();
    foreign_still_current("a native write");
    gpu[0]
        .native_copy_within(a.native(), b.native(), n)
        .unwrap();
    foreign_still_current("a native copy");
    let mut back = vec![0u8; n];
    gpu[0].native_read(b.native(), &mut back).unwrap();
    foreign_still_current("a native read");
    assert!(back.iter().all(|&x| x == 5));
}
