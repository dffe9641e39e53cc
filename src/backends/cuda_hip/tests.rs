//! The GPU logic without a GPU: a simulated driver whose "device memory" is host
//! memory (CHAI's simulation idea), so routes, staging chunk plans, accessibility
//! and data paths are tested as functions of the device facts.

use super::work::StreamEvent;
use super::*;
use crate::runtime::event::Event;
use crate::runtime::transfer::matrix::TransferMatrix;

/// No dependencies.
const NONE: &[Event] = &[];

/// A fake CUDA driver: `peer` says which ordinals may access which; allocations larger
/// than `memory` fail with the driver's out-of-memory code.
struct Simulated {
    peer: Vec<(u32, u32)>,
    memory: usize,
}

impl GpuApi for Simulated {
    const TECHNOLOGY: Technology = Technology::Cuda;
    fn activate(&self, _: u32) -> Result<(), GpuError> {
        Ok(())
    }
    unsafe fn alloc(&self, _: GpuMemory, bytes: usize) -> Result<u64, GpuError> {
        if bytes > self.memory {
            return Err(GpuError {
                call: "cuMemAlloc",
                code: 2,
                name: "CUDA_ERROR_OUT_OF_MEMORY: out of memory".into(),
                out_of_memory: true,
            });
        }
        Ok(Box::into_raw(vec![0u8; bytes].into_boxed_slice()) as *mut u8 as u64)
    }
    unsafe fn free(&self, _: GpuMemory, _: u64) {
        // Leaked on purpose: the simulated allocations do not record their sizes.
    }
    unsafe fn to_device(
        &self,
        dst: u64,
        src: *const u8,
        n: usize,
        _: bool,
    ) -> Result<(), GpuError> {
        // SAFETY: simulated device memory is host memory of at least `n` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src, dst as *mut u8, n) };
        Ok(())
    }
    unsafe fn to_host(&self, dst: *mut u8, src: u64, n: usize, _: bool) -> Result<(), GpuError> {
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst, n) };
        Ok(())
    }
    unsafe fn on_device(&self, dst: u64, src: u64, n: usize, _: bool) -> Result<(), GpuError> {
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, n) };
        Ok(())
    }
    unsafe fn peer(&self, dst: u64, _: u32, src: u64, _: u32, n: usize) -> Result<(), GpuError> {
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, n) };
        Ok(())
    }
    unsafe fn memset(&self, dst: u64, byte: u8, n: usize) -> Result<(), GpuError> {
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(dst as *mut u8, byte, n) };
        Ok(())
    }
    fn synchronize(&self) -> Result<(), GpuError> {
        Ok(())
    }
    fn event_create(&self) -> Result<u64, GpuError> {
        Ok(1)
    }
    unsafe fn event_record(&self, _: u64) -> Result<(), GpuError> {
        Ok(())
    }
    unsafe fn event_wait(&self, _: u64) -> Result<(), GpuError> {
        Ok(())
    }
    unsafe fn event_query(&self, _: u64) -> Result<bool, GpuError> {
        Ok(true)
    }
    unsafe fn event_destroy(&self, _: u64) {}
    fn enable_peer(&self, from: u32, to: u32) -> bool {
        self.peer.contains(&(from, to))
    }
    fn compile(&self, _: &str, _: &str) -> Result<u64, GpuError> {
        Err(GpuError::other(
            "nvrtcCompileProgram",
            "no compiler in the simulation",
        ))
    }
    unsafe fn launch(
        &self,
        _: u64,
        _: [u32; 3],
        _: [u32; 3],
        _: &mut [*mut c_void],
    ) -> Result<(), GpuError> {
        Err(GpuError::other(
            "cuLaunchKernel",
            "no kernels in the simulation",
        ))
    }
    fn native(ptr: u64, kind: GpuMemory) -> Native {
        Native::Cuda { ptr, kind }
    }
    fn unpack(native: &Native) -> Option<(u64, GpuMemory)> {
        match native {
            Native::Cuda { ptr, kind } => Some((*ptr, *kind)),
            _ => None,
        }
    }
}

fn devices(peer: Vec<(u32, u32)>, managed: bool) -> Vec<Arc<GpuDevice<Simulated>>> {
    let api = Arc::new(Simulated {
        peer,
        memory: 256 << 20,
    });
    let devices: Vec<_> = (0..2)
        .map(|i| {
            Arc::new(GpuDevice::new(
                Arc::clone(&api),
                i,
                GpuFacts {
                    name: format!("sim {i}"),
                    memory_bytes: 1 << 30,
                    concurrent_managed_access: managed,
                    notes: vec![],
                },
            ))
        })
        .collect();
    enable_peers(&devices);
    devices
}

fn dynamic(d: &Arc<GpuDevice<Simulated>>) -> Arc<dyn Device> {
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
        .copy_async(&a, 0, &b, 0, n, &NONE)
        .unwrap()
        .expect("a copy within one GPU runs on its stream");
    assert!(event.work_as::<StreamEvent<Simulated>>().is_some());
    assert!(
        event.poll_complete(),
        "the simulated event reports completion"
    );
    event.wait().unwrap();
    let mut back = vec![0u8; n];
    b.read(0, &mut back).unwrap();
    assert!(back == data);
    // Overlapping ranges of one allocation, and other devices, are not stream copies.
    assert!(d.copy_async(&a, 0, &a, 1, 8, &NONE).unwrap().is_none());
    let c = Arc::new(Memory::on(&other, n).unwrap());
    assert!(d.copy_async(&a, 0, &c, 0, n, &NONE).unwrap().is_none());
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
    assert_eq!(m.plan(e(&a), e(&b)).0.kind, RouteKind::Peer);
    assert_eq!(
        m.plan(e(&a), e(&a)).0.kind,
        RouteKind::Direct,
        "same device"
    );
    let without = devices(vec![], true);
    let (c, d) = (dynamic(&without[0]), dynamic(&without[1]));
    let route = m.plan(e(&c), e(&d)).0;
    assert_eq!(route.kind, RouteKind::Staged);
    assert!(route.reason.contains("pinned"), "{route}");
    // One-way peer access still allows the peer copy.
    let one_way = devices(vec![(1, 0)], true);
    assert_eq!(
        m.plan(e(&dynamic(&one_way[0])), e(&dynamic(&one_way[1])))
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
        .plan(e(&host, HostAccess::Pointer), e(&g, HostAccess::None))
        .0;
    assert_eq!(r.kind, RouteKind::Direct, "{r}");
    // Any other technology, even a host-visible one: staged through pinned memory.
    if let Ok(omp) = crate::runtime::registry::registry().device(Location::OpenMp(0)) {
        let r = m
            .plan(e(omp, HostAccess::Pointer), e(&g, HostAccess::None))
            .0;
        assert_eq!(r.kind, RouteKind::Staged, "{r}");
        assert!(r.reason.contains("pinned host memory of cuda:0"), "{r}");
        let back = m
            .plan(e(&g, HostAccess::None), e(omp, HostAccess::Pointer))
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
            .accessibility_of(gpu[1].as_ref(), HostAccess::None)
            .is_some_and(|(ok, _)| ok));
        assert!(gpu[1]
            .accessibility_of(gpu[0].as_ref(), HostAccess::None)
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
