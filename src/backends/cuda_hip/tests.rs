//! The GPU logic without a GPU, on the strict simulated driver (`simulated.rs`): routes,
//! staging chunk plans, accessibility and data paths as functions of the device facts,
//! memory kinds and resources (the driver's rules themselves: `driver_rules_tests.rs`).

use super::simulated::{facts, Strict};
use super::work::StreamEvent;
use super::*;
use crate::runtime::event::Event;
use crate::runtime::transfer::matrix::TransferMatrix;

/// No dependencies.
pub(super) const NONE: &[Event] = &[];

/// The strict simulated driver (see `simulated.rs`).
pub(super) type Simulated = Strict;

pub(super) fn devices(peer: Vec<(u32, u32)>, managed: bool) -> Vec<Arc<GpuDevice<Simulated>>> {
    on(Arc::new(Strict::new(2, peer, 256 << 20, vec![])), managed)
}

pub(super) fn on(api: Arc<Strict>, managed: bool) -> Vec<Arc<GpuDevice<Simulated>>> {
    let devices: Vec<_> = (0..2)
        .map(|i| Arc::new(GpuDevice::new(Arc::clone(&api), i, facts(i, managed))))
        .collect();
    enable_peers(&devices);
    devices
}

pub(super) fn dynamic(d: &Arc<GpuDevice<Simulated>>) -> Arc<dyn Device> {
    Arc::clone(d) as Arc<dyn Device>
}

fn matrix() -> TransferMatrix {
    let mut m = TransferMatrix::default();
    for (s, d, p) in paths::<Simulated>() {
        m.register(s, d, p);
    }
    m
}

#[test]
fn copies_within_a_device_are_stream_events() {
    let sim = devices(vec![], true);
    let (d, other) = (dynamic(&sim[0]), dynamic(&sim[1]));
    let n = 3 * STAGING + 5;
    let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let a = Arc::new(Memory::on(&d, n).unwrap());
    let b = Arc::new(Memory::on(&d, n).unwrap());
    a.write(0, &data).unwrap();
    let event = d
        .queued_copies()
        .unwrap()
        .copy_async(&a, &b, CopySpan::whole(n), &NONE)
        .unwrap()
        .expect("a copy within one GPU runs on its stream");
    assert!(event.work_as::<StreamEvent<Simulated>>().is_some());
    event.wait().unwrap();
    let mut back = vec![0u8; n];
    b.read(0, &mut back).unwrap();
    assert!(back == data);
    // Overlapping ranges of one allocation, and other devices, are not stream copies.
    assert!(d
        .queued_copies()
        .unwrap()
        .copy_async(
            &a,
            &a,
            CopySpan {
                src_offset: 0,
                dst_offset: 1,
                len: 8
            },
            &NONE
        )
        .unwrap()
        .is_none());
    let c = Arc::new(Memory::on(&other, n).unwrap());
    assert!(d
        .queued_copies()
        .unwrap()
        .copy_async(&a, &c, CopySpan::whole(n), &NONE)
        .unwrap()
        .is_none());
}

#[test]
fn routes_follow_the_peer_facts() {
    let m = matrix();
    let with_peer = devices(vec![(0, 1), (1, 0)], true);
    let (a, b) = (dynamic(&with_peer[0]), dynamic(&with_peer[1]));
    let e = |d| Endpoint {
        device: d,
        host: HostAccess::None,
    };
    assert_eq!(m.plan(e(&a), e(&b), 1 << 20).0.kind, RouteKind::Peer);
    assert_eq!(
        m.plan(e(&a), e(&a), 1 << 20).0.kind,
        RouteKind::Direct,
        "same device"
    );
    let without = devices(vec![], true);
    let (c, d) = (dynamic(&without[0]), dynamic(&without[1]));
    let route = m.plan(e(&c), e(&d), 1 << 20).0;
    assert_eq!(route.kind, RouteKind::Staged);
    assert!(route.reason.contains("pinned"), "{route}");
    // One-way peer access still allows the peer copy.
    let one_way = devices(vec![(1, 0)], true);
    assert_eq!(
        m.plan(e(&dynamic(&one_way[0])), e(&dynamic(&one_way[1])), 1 << 20)
            .0
            .kind,
        RouteKind::Peer
    );
}

#[test]
fn other_technologies_go_through_pinned_memory_and_the_host_is_direct() {
    let m = matrix();
    let gpu = devices(vec![], false);
    let g = dynamic(&gpu[0]);
    let host = crate::runtime::registry::registry().host();
    let e = |d, h| Endpoint { device: d, host: h };
    // The host itself: one direct copy (pageable memory staged inside, pinned DMA).
    let r = m
        .plan(
            e(&host, HostAccess::Pointer),
            e(&g, HostAccess::None),
            1 << 20,
        )
        .0;
    assert_eq!(r.kind, RouteKind::Direct, "{r}");
    // Any other technology, even a host-visible one: staged through pinned memory.
    if let Ok(omp) = crate::runtime::registry::registry().device(Location::OpenMp(0)) {
        let r = m
            .plan(
                e(omp, HostAccess::Pointer),
                e(&g, HostAccess::None),
                1 << 20,
            )
            .0;
        assert_eq!(r.kind, RouteKind::Staged, "{r}");
        assert!(r.reason.contains("pinned host memory of cuda:0"), "{r}");
        let back = m
            .plan(
                e(&g, HostAccess::None),
                e(omp, HostAccess::Pointer),
                1 << 20,
            )
            .0;
        assert_eq!(back.kind, RouteKind::Staged, "{back}");
    }
}

#[test]
fn accessibility_from_the_driver_facts() {
    for managed in [false, true] {
        let gpu = devices(vec![(0, 1)], managed);
        let d0 = &gpu[0];
        let access = |kind| d0.host_access(&Native::Cuda { ptr: 64, kind });
        assert_eq!(access(GpuMemory::Device), HostAccess::None);
        assert_eq!(
            access(GpuMemory::Pinned),
            HostAccess::Pointer,
            "pinned: in place, not copied"
        );
        let expect = if managed {
            HostAccess::Pointer
        } else {
            HostAccess::None
        };
        assert_eq!(
            access(GpuMemory::Managed),
            expect,
            "managed with concurrent access = {managed}"
        );
        // Peer memory: accessible only where peer access was enabled (0 -> 1 here).
        assert!(gpu[0]
            .accessibility_of(gpu[1].as_ref(), None, HostAccess::None)
            .is_some_and(|(ok, _)| ok));
        assert!(gpu[1]
            .accessibility_of(gpu[0].as_ref(), None, HostAccess::None)
            .is_none());
    }
}

#[test]
fn staging_plans_move_every_byte() {
    let gpu = devices(vec![], false);
    let d = &gpu[0];
    // Pageable uploads and downloads larger than two chunks, with an odd tail.
    let n = 2 * STAGING + 12_345;
    let data: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
    let mem = d.allocate_kind(n, GpuMemory::Device).unwrap();
    mem.write(0, &data).unwrap();
    let mut back = vec![0u8; n];
    mem.read(0, &mut back).unwrap();
    assert!(back == data);
    // Through pinned memory between the two simulated devices (no peer access).
    let other = gpu[1].allocate_kind(n, GpuMemory::Managed).unwrap();
    through_pinned(d, &mem, 0, &other, 0, n).unwrap();
    let mut seen = vec![0u8; n];
    other.read(0, &mut seen).unwrap();
    assert!(seen == data);
    // Fill with a byte pattern goes through memset.
    mem.fill(0..n, &[9]).unwrap();
    mem.read(0, &mut back).unwrap();
    assert!(back.iter().all(|&b| b == 9));
}

#[test]
fn the_drivers_out_of_memory_code_is_out_of_memory() {
    // Fails on the old code, where every driver failure was a string in Error::Backend.
    let sim = devices(vec![], true);
    let d = dynamic(&sim[0]);
    let err = Memory::on(&d, 512 << 20).unwrap_err();
    assert!(err.is_out_of_memory(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("cuda:0")
            && text.contains("cuMemAlloc")
            && text.contains("CUDA_ERROR_OUT_OF_MEMORY"),
        "{text}"
    );
    // Any other driver failure is a backend error naming the call and its code.
    let e = sim[0].fail(
        "copy on device",
        GpuError {
            call: "cuMemcpyDtoDAsync",
            code: 700,
            name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(),
            out_of_memory: false,
        },
    );
    assert!(!e.is_out_of_memory());
    assert!(
        e.to_string().contains("cuMemcpyDtoDAsync returned 700"),
        "{e}"
    );
}

/// The bytes of simulated device memory as they are now, without waiting for anything.
pub(super) fn raw(memory: &Memory) -> Vec<u8> {
    let (ptr, _) = Simulated::unpack(memory.native()).unwrap();
    // SAFETY: simulated device memory is host memory of `memory.len()` bytes, alive
    // while `memory` is; nothing writes it while the simulation's stream lock is not
    // taken by another thread (each test owns its driver).
    unsafe { std::slice::from_raw_parts(ptr as *const u8, memory.len()) }.to_vec()
}

/// A kernel that does nothing, over `items` work items in one dimension.
pub(super) fn empty_kernel(items: usize) -> LaunchSpec<'static> {
    LaunchSpec {
        source: "extern \"C\" __global__ void k() {}",
        entry: "k",
        workgroup: [256, 1, 1],
        global: [items, 1],
        dims: 1,
    }
}

/// The memory kinds a CUDA / HIP location offers, named alike everywhere: pinned host
/// memory is used in place by the host, device memory is not; SYCL's kinds are refused
/// with what is offered; the data round-trips in each kind.
#[test]
fn memory_kinds_through_the_device_trait() {
    use crate::core::native::MemoryKind;
    let gpu = devices(vec![], false);
    let d = dynamic(&gpu[0]);
    assert_eq!(
        d.memory_kinds(),
        vec![
            MemoryKind::Default,
            MemoryKind::PinnedHost,
            MemoryKind::Managed,
            MemoryKind::StreamOrdered
        ]
    );
    for (kind, host) in [
        (MemoryKind::Default, HostAccess::None),
        (MemoryKind::PinnedHost, HostAccess::Pointer),
        (MemoryKind::Managed, HostAccess::None),
        (MemoryKind::StreamOrdered, HostAccess::None),
    ] {
        let m = Memory::on_kind(&d, kind, 256).unwrap();
        assert_eq!(m.host_access(), host, "{kind}");
        m.write(0, &[kind as u8 + 1; 256]).unwrap();
        let mut out = [0u8; 256];
        m.read(0, &mut out).unwrap();
        assert_eq!(out, [kind as u8 + 1; 256], "{kind}");
    }
    let err = Memory::on_kind(&d, MemoryKind::UsmShared, 256)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("usm-shared") && err.contains("pinned-host, managed"),
        "{err}"
    );
}

/// RMM's memory kinds as resources (`managed_memory_resource`,
/// `pinned_host_memory_resource`, `cuda_async_memory_resource`): each allocates its kind;
/// the driver's pool gives memory back in stream order (a copy queued before the free
/// still reads the data, and the memory counts as used until the stream gets there, and
/// after: the pool keeps it);
/// free memory is the driver's; a driver without pools refuses the kind, saying so.
#[test]
fn rmm_s_kinds_as_resources_and_the_driver_s_pool_in_stream_order() {
    use crate::core::native::MemoryKind;
    use crate::resource::{MemoryResource, Upstream};
    const TOTAL: usize = 1 << 20;
    let api = Arc::new(Strict::new(2, vec![], TOTAL, vec![]));
    let gpu = on(Arc::clone(&api), false);
    let d = dynamic(&gpu[0]);
    assert_eq!(d.available_memory().unwrap(), (TOTAL as u64, TOTAL as u64));
    let data: Vec<u8> = (0..4096).map(|i| (i % 253) as u8).collect();
    for (kind, native) in [
        (MemoryKind::Managed, GpuMemory::Managed),
        (MemoryKind::PinnedHost, GpuMemory::Pinned),
        (MemoryKind::StreamOrdered, GpuMemory::StreamOrdered),
    ] {
        let r = Upstream::of_kind(Arc::clone(&d), kind).unwrap();
        assert!(r.describe().contains(kind.name()), "{}", r.describe());
        let block = r.allocate(data.len(), 256).unwrap();
        let (ptr, got) = Strict::unpack(&block.native).unwrap();
        assert_eq!(got, native, "{kind}");
        assert_eq!(ptr % 256, 0, "{kind}");
        d.write(&block.native, 0, &data).unwrap();
        let in_use = d.available_memory().unwrap().0;
        assert!(in_use <= (TOTAL - data.len()) as u64, "{kind}: {in_use}");
        let mut out = vec![0u8; data.len()];
        let _current = gpu[0].activate().unwrap();
        // SAFETY: `out` and the block outlive the copy (the stream is synchronised below,
        // and a stream-ordered free runs after the copy).
        unsafe { api.to_host(out.as_mut_ptr(), ptr, out.len(), false) }.unwrap();
        r.deallocate(block);
        if kind == MemoryKind::StreamOrdered {
            assert_eq!(
                d.available_memory().unwrap().0,
                in_use,
                "given back before the stream reached the free"
            );
        }
        d.synchronize().unwrap();
        assert_eq!(out, data, "{kind}");
        // The pool keeps what the stream-ordered free gave back (its release threshold
        // raised, as RMM does): still counted as used by the driver.
        let kept = if kind == MemoryKind::StreamOrdered {
            data.len()
        } else {
            0
        };
        assert_eq!(
            d.available_memory().unwrap().0,
            (TOTAL - kept) as u64,
            "{kind}"
        );
    }
    assert!(api.violations().is_empty(), "{:?}", api.violations());
    assert!(
        api.calls().contains(&"cuMemAllocFromPoolAsync") && api.calls().contains(&"cuMemFreeAsync")
    );

    // A driver without memory pools: no stream-ordered kind, and the resource says so.
    let old = Arc::new(GpuDevice::new(
        Arc::clone(&api),
        1,
        GpuFacts {
            name: "old driver".into(),
            memory_bytes: TOTAL as u64,
            concurrent_managed_access: false,
            stream_ordered_pools: false,
            pageable_memory_access: false,
            version: "sim".into(),
            pci: None,
            notes: vec![],
        },
    )) as Arc<dyn Device>;
    assert!(!old.memory_kinds().contains(&MemoryKind::StreamOrdered));
    let err = Upstream::of_kind(old, MemoryKind::StreamOrdered)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("no stream-ordered memory"), "{err}");
}

/// Work chained after a copy still queued on the same device's stream is queued behind
/// it, with no host wait: the stream is in order. On the old code the second copy was
/// refused as a stream copy (it went to a worker that waited), and a launch after it
/// waited on the host first (`cuEventSynchronize` before `cuLaunchKernel`).
#[test]
fn work_after_this_stream_s_own_events_is_queued_without_a_host_wait() {
    let sim = devices(vec![], true);
    let d = dynamic(&sim[0]);
    let n = 4096;
    let data: Vec<u8> = (0..n).map(|i| (i % 241) as u8).collect();
    let [a, b, c] = [0; 3].map(|_| Arc::new(Memory::on(&d, n).unwrap()));
    a.write(0, &data).unwrap();
    let first = d
        .queued_copies()
        .unwrap()
        .copy_async(&a, &b, CopySpan::whole(n), &NONE)
        .unwrap()
        .unwrap();
    let first = [Event::native(first, vec![Arc::clone(&a), Arc::clone(&b)])];
    assert!(
        !first[0].is_complete(),
        "the simulated stream holds the copy back"
    );
    let second = d
        .queued_copies()
        .unwrap()
        .copy_async(&b, &c, CopySpan::whole(n), &first.as_slice())
        .unwrap()
        .expect("a copy after this stream's own event is a stream copy");
    let launched = sim[0]
        .launch_after(&empty_kernel(256), &[], &first.as_slice())
        .unwrap();
    let calls = sim[0].api.calls();
    assert!(
        !calls.contains(&"cuEventSynchronize"),
        "nothing waited on the host: {calls:?}"
    );
    launched.wait().unwrap();
    second.wait().unwrap();
    assert!(raw(&c) == data);
    assert!(sim[0].api.violations().is_empty());
}

/// The driver's allocations are 256-byte aligned for every kind, as the real calls'
/// are (pools over them: `tests/resources.rs`). Fails on the code before: the simulator
/// handed out memory at the host allocator's alignment (the RMM-kinds test above then
/// failed in 2 of 3 runs of the whole library in one process).
#[test]
fn driver_memory_and_pool_blocks_are_256_byte_aligned() {
    use crate::core::native::MemoryKind;
    use crate::resource::{MemoryResource, Upstream};
    let gpu = devices(vec![], true);
    let d = dynamic(&gpu[0]);
    for kind in [
        MemoryKind::Default,
        MemoryKind::Managed,
        MemoryKind::PinnedHost,
        MemoryKind::StreamOrdered,
    ] {
        let upstream: Arc<dyn MemoryResource> =
            Arc::new(Upstream::of_kind(Arc::clone(&d), kind).unwrap());
        // Odd sizes, so that the host allocator's own alignment would show.
        let blocks: Vec<_> = [1, 100, 4097, 3]
            .iter()
            .map(|&n| upstream.allocate(n, 1).unwrap())
            .collect();
        for b in &blocks {
            assert_eq!(
                b.native.address() % 256,
                0,
                "{kind}: {:#x}",
                b.native.address()
            );
        }
        blocks.into_iter().for_each(|b| upstream.deallocate(b));
    }
}

/// A pool over a device made outside the registry (here the simulated driver's; an
/// adopted device too) sub-allocates on that device, and a block freed on queue A is
/// served to queue B, whose copy goes on the stream. Fails on the
/// code before: the pool looked its device up in the registry by location, fell back to
/// the host device, and panicked on the CUDA handle ("host device given a foreign
/// handle"); `Memory::from_resource` refused the location the same way.
#[test]
fn a_pool_over_a_device_outside_the_registry_serves_and_reuses_its_blocks() {
    use crate::resource::{MemoryResource, Pool, Upstream};
    use crate::runtime::queue::Queue;
    let sim = devices(vec![], true);
    let d = dynamic(&sim[0]);
    let n = 4096;
    let pool: Arc<dyn MemoryResource> = Arc::new(Pool::new(
        Arc::new(
            Upstream::of_kind(Arc::clone(&d), crate::core::native::MemoryKind::Default).unwrap(),
        ),
        n,
        n,
    ));
    let (queue_a, queue_b) = (Queue::new(), Queue::new());
    let data: Vec<u8> = (0..n).map(|i| (i % 239) as u8).collect();
    let x = Arc::new(Memory::from_resource_on(&pool, n, queue_a).unwrap());
    x.write(0, &data).unwrap();
    let sink = Arc::new(Memory::on(&d, n).unwrap());
    let work = x.copy_to_async_on(queue_a, 0, &sink, 0, n, &[]).unwrap();
    let key = x.native().key();
    x.release_after(queue_a, work).unwrap();
    // The pool holds one block: B gets A's (pending or done: the simulated stream runs
    // when asked, so whether it still is cannot be arranged here).
    let y = Arc::new(Memory::from_resource_on(&pool, n, queue_b).unwrap());
    assert_eq!(y.native().key(), key, "A's block, handed to queue B");
    let out = Arc::new(Memory::on(&d, n).unwrap());
    let second = y.copy_to_async_on(queue_b, 0, &out, 0, n, &[]).unwrap();
    assert!(
        second.is_native(),
        "B's copy is a stream copy, not a worker's"
    );
    second.wait().unwrap();
    assert!(raw(&sink) == data, "A's copy");
    assert!(raw(&out) == data);
    assert!(sim[0].api.violations().is_empty());
}

/// A stream copy's event hands out the driver's `CUevent` and its device, for a user's
/// `cuStreamWaitEvent` (issue 41, item 3).
#[test]
fn a_stream_copy_hands_out_its_cuevent() {
    let sim = devices(vec![], true);
    let d = dynamic(&sim[0]);
    let [a, b] = [0; 2].map(|_| Arc::new(Memory::on(&d, 256).unwrap()));
    let work = d
        .queued_copies()
        .unwrap()
        .copy_async(&a, &b, CopySpan::whole(256), &NONE)
        .unwrap()
        .unwrap();
    let event = Event::native(work, vec![Arc::clone(&a), Arc::clone(&b)]);
    match event.native_event() {
        Some(crate::core::completion::NativeEvent::Cuda {
            event: e,
            ordinal: 0,
        }) => {
            assert_ne!(e, 0)
        }
        other => panic!("a CUDA stream event, got {other:?}"),
    }
    event.wait().unwrap();
}
