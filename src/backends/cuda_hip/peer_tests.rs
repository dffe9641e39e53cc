//! Copies between two GPUs of one technology on the strict simulated driver (issue 48,
//! item 1): each device runs its own stream, and a peer copy queued on the
//! destination's stream must wait for what is still queued on the source's.

use super::simulated::{facts, Strict};
use super::*;

fn two_devices_with_peer_access() -> (Arc<Strict>, Vec<Arc<GpuDevice<Strict>>>) {
    let api = Arc::new(Strict::new(2, vec![(0, 1), (1, 0)], 256 << 20, vec![]));
    let devices: Vec<_> = (0..2)
        .map(|i| Arc::new(GpuDevice::new(Arc::clone(&api), i, facts(i, true))))
        .collect();
    for (a, b) in [(0, 1), (1, 0)] {
        assert!(devices[a].try_enable_peer(&devices[b]));
    }
    (api, devices)
}

/// A write into the source still queued on the source device's stream lands before
/// the peer copy reads it. On the code before, the copy was queued on the destination's
/// stream alone and read the bytes from before the write.
#[test]
fn a_peer_copy_waits_for_the_source_devices_stream() {
    let (api, gpu) = two_devices_with_peer_access();
    let n = 64 << 10;
    let src = gpu[0].allocate_kind(n, GpuMemory::Device).unwrap();
    let dst = gpu[1].allocate_kind(n, GpuMemory::Device).unwrap();
    src.write(0, &vec![1u8; n]).unwrap();
    // Queued on device 0's stream, not waited for (as an asynchronous producer leaves it).
    let (ptr, _) = gpu[0].ptr(src.native()).unwrap();
    let _current = gpu[0].activate().unwrap();
    // SAFETY: simulated device memory of `n` bytes, alive while `src` is.
    unsafe { api.memset(ptr, 7, n, false) }.unwrap();
    let peer = paths::<Strict>()
        .into_iter()
        .map(|(_, _, p)| p)
        .find(|p| p.name().starts_with("peer copy"))
        .expect("the peer path");
    peer.copy(&src, 0, &dst, 0, n).unwrap();
    let mut back = vec![0u8; n];
    dst.read(0, &mut back).unwrap();
    assert!(
        back.iter().all(|&b| b == 7),
        "the peer copy read the source before the write queued on its device landed (first byte {})",
        back[0]
    );
    assert!(api.violations().is_empty(), "{:?}", api.violations());
}

/// Stream-ordered pool memory of one device is not reachable in place from another,
/// peer access or not (issue 48, item 2): peer access covers `cuMemAlloc` memory, while
/// the pool's own access list names its device only, so a kernel elsewhere faults
/// (`CUDA_ERROR_ILLEGAL_ADDRESS`, as the simulated driver says). The code before
/// reported it accessible from the peer and handed the kernel the pointer.
#[test]
fn pool_memory_is_its_devices_alone() {
    let (api, gpu) = two_devices_with_peer_access();
    let n = 4096;
    let pool = gpu[0].allocate_kind(n, GpuMemory::StreamOrdered).unwrap();
    let plain = gpu[0].allocate_kind(n, GpuMemory::Device).unwrap();
    let (usable, why) = gpu[1]
        .accessibility_of(gpu[0].as_ref(), Some(pool.native()), HostAccess::None)
        .expect("the GPU's say on another GPU's memory");
    assert!(
        !usable,
        "pool memory of cuda:0 reachable from cuda:1: {why}"
    );
    assert!(why.contains("pool"), "{why}");
    // Memory from `cuMemAlloc` stays reachable through peer access.
    let (usable, why) = gpu[1]
        .accessibility_of(gpu[0].as_ref(), Some(plain.native()), HostAccess::None)
        .unwrap();
    assert!(usable, "{why}");
    // A kernel on device 1 is refused the pool memory before the driver sees it.
    let spec = LaunchSpec {
        source: "extern \"C\" __global__ void k(const float *a) {}",
        entry: "k",
        workgroup: [256, 1, 1],
        global: [1024, 1],
        dims: 1,
    };
    let refused = gpu[1]
        .launch(&spec, &[LaunchArg::Memory(&pool)])
        .err()
        .expect("pool memory of another device is refused");
    assert!(
        refused.to_string().contains("not addressable here"),
        "{refused}"
    );
    gpu[1].launch(&spec, &[LaunchArg::Memory(&plain)]).unwrap();
    assert!(api.violations().is_empty(), "{:?}", api.violations());
}

/// Handing a device's memory to another library on a thread of locus's own (issue 48,
/// item 6): `Device::make_current` makes the device current there first (the
/// device-aware MPI wire calls it before MPI takes the pointer; the trait had no such
/// hook before, and the thread had no device). Pool memory has no address for MPI,
/// which cannot export it to its peers, so its messages are staged.
#[test]
fn another_library_gets_the_device_current_and_no_pool_memory() {
    let (api, gpu) = two_devices_with_peer_access();
    let pool = gpu[1]
        .allocate_kind(4096, GpuMemory::StreamOrdered)
        .unwrap();
    let plain = gpu[1].allocate_kind(4096, GpuMemory::Device).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            Strict::clear_current();
            assert!(
                api.memory_info().is_err(),
                "a fresh thread has no current device"
            );
            Device::make_current(gpu[1].as_ref()).unwrap();
            api.memory_info()
                .expect("device 1 is current after make_current");
        });
    });
    #[cfg(feature = "mpi")]
    {
        use crate::backends::mpi::wire::device_address;
        assert!(device_address(&pool).is_none(), "pool memory handed to MPI");
        assert!(device_address(&plain).is_some());
    }
    drop((pool, plain));
}

/// A copy between device memory and host memory the driver knows (pinned memory of a
/// device of this driver, as a mapped route hands over) is one driver copy each way,
/// not staged again through pinned chunks (issue 48, item 10: `read` and `write` told
/// the copy the host side was pageable, always, and it staged every byte twice).
#[test]
fn pinned_host_memory_is_copied_without_staging() {
    let (api, gpu) = two_devices_with_peer_access();
    let n = 3 * STAGING + 100;
    let device = gpu[0].allocate_kind(n, GpuMemory::Device).unwrap();
    let pinned = gpu[1].allocate_kind(n, GpuMemory::Pinned).unwrap();
    let data: Vec<u8> = (0..n).map(|i| (i % 253) as u8).collect();
    pinned.write(0, &data).unwrap();
    let records = |api: &Strict| {
        api.calls()
            .iter()
            .filter(|c| **c == "cuEventRecord")
            .count()
    };
    let before = records(&api);
    let (host, _) = Strict::unpack(pinned.native()).unwrap();
    // SAFETY: simulated pinned memory is host memory of `n` bytes, alive while `pinned`
    // is; nothing else uses it during the test.
    let view = unsafe { std::slice::from_raw_parts_mut(host as *mut u8, n) };
    Device::write(gpu[0].as_ref(), device.native(), 0, view).unwrap();
    view.fill(0);
    Device::read(gpu[0].as_ref(), device.native(), 0, view).unwrap();
    assert!(view == &data[..], "the bytes made the round trip");
    assert_eq!(
        records(&api) - before,
        0,
        "staged through pinned chunks (an event per chunk) though the host side is pinned"
    );
    assert!(api.violations().is_empty(), "{:?}", api.violations());
}
