//! The conformance suite: written once, instantiated for every location (and, in
//! `pairs_from_here`, for every ordered pair with every available destination).
//! A location this machine lacks is skipped with its reason, unless LOCUS_REQUIRE
//! names it, in which case the test fails.

#[macro_use]
mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{pattern_f32, pattern_u8};
use locus::resource::{self, MemoryResource, Pool};
use locus::{mirror, transfer, Buffer, Error, Location, Memory, RouteKind};

fn live(location: Location) -> usize {
    locus::registry()
        .device(location)
        .expect("available")
        .live_allocations()
}

fn in_place(memory_at: Location, accessor: Location) -> bool {
    locus::access::location_accessibility(locus::registry(), memory_at, accessor)
        .expect("both available")
        .0
}

pub fn constructors_round_trip(l: Location) {
    let data = pattern_f32(1000, 1.5);
    assert_eq!(
        Buffer::from_slice(l, &data).unwrap().to_vec().unwrap(),
        data
    );
    assert_eq!(
        Buffer::<f32>::zeroed(l, 77).unwrap().to_vec().unwrap(),
        vec![0.0; 77]
    );
    assert_eq!(
        Buffer::filled(l, 33, 2.25f32).unwrap().to_vec().unwrap(),
        vec![2.25; 33]
    );
    // Odd byte lengths and a 3-byte element exercise unaligned edges and pattern fills.
    let bytes = pattern_u8(13, 7);
    assert_eq!(
        Buffer::from_slice(l, &bytes).unwrap().to_vec().unwrap(),
        bytes
    );
    let rgb = Buffer::filled(l, 11, [1u8, 2, 3]).unwrap();
    assert_eq!(rgb.to_vec().unwrap(), vec![[1u8, 2, 3]; 11]);
    assert_eq!(
        Buffer::filled(l, 5, u64::MAX - 1)
            .unwrap()
            .to_vec()
            .unwrap(),
        vec![u64::MAX - 1; 5]
    );
    // From a Vec (zero-copy on the host), then moved here.
    let mut moved = Buffer::from_vec(data.clone());
    assert_eq!(moved.location(), Location::Host);
    moved.move_to(l).unwrap();
    assert_eq!(moved.location(), l);
    assert_eq!(moved.replicas(), vec![(l, true)]);
    assert_eq!(moved.to_vec().unwrap(), data);
    // Adopting a native allocation: the deleter runs exactly when the buffer is dropped.
    let memory = Memory::new(l, 16).unwrap();
    memory
        .write(0, bytemuck::cast_slice(&[1u32, 2, 3, 4]))
        .unwrap();
    let native = match memory.native() {
        locus::Native::Host { ptr } => locus::Native::Host { ptr: *ptr },
        _ => {
            // Other technologies: adopt through the memory's own handle kept alive by
            // the deleter's capture.
            let keep = Arc::new(memory);
            let clone = Arc::clone(&keep);
            let deleted = Arc::new(AtomicBool::new(false));
            let flag = Arc::clone(&deleted);
            let adopted = {
                let handle = keep.native().duplicate();
                // SAFETY: the handle refers to `keep`'s allocation of 16 bytes at `l`,
                // which the deleter keeps alive until the buffer drops it.
                unsafe {
                    Buffer::<u32>::adopt(l, handle, 4, move |_| {
                        drop(clone);
                        flag.store(true, Ordering::SeqCst);
                    })
                }
                .unwrap()
            };
            assert_eq!(adopted.to_vec().unwrap(), vec![1, 2, 3, 4]);
            assert!(!deleted.load(Ordering::SeqCst));
            drop(adopted);
            assert!(deleted.load(Ordering::SeqCst), "deleter ran on drop");
            return;
        }
    };
    let keep = Arc::new(memory);
    let clone = Arc::clone(&keep);
    let deleted = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&deleted);
    // SAFETY: `native` is `keep`'s 16-byte host allocation, alive until the deleter runs.
    let adopted = unsafe {
        Buffer::<u32>::adopt(l, native, 4, move |_| {
            drop(clone);
            flag.store(true, Ordering::SeqCst);
        })
    }
    .unwrap();
    assert_eq!(adopted.to_vec().unwrap(), vec![1, 2, 3, 4]);
    drop(adopted);
    assert!(deleted.load(Ordering::SeqCst));
}

pub fn copy_sub_ranges(l: Location) {
    let a = pattern_u8(301, 3);
    let src = Buffer::from_slice(l, &a).unwrap();
    let mut dst = Buffer::from_slice(l, &pattern_u8(301, 100)).unwrap();
    let mut model = pattern_u8(301, 100);
    for (dst_start, range) in [
        (0, 0..301),
        (1, 2..9),
        (17, 0..64),
        (250, 3..54),
        (300, 300..301),
        (5, 5..5),
    ] {
        let n = range.len();
        dst.copy_from(dst_start, &src, range.clone()).unwrap();
        model[dst_start..dst_start + n].copy_from_slice(&a[range]);
        assert_eq!(dst.to_vec().unwrap(), model, "after copy to {dst_start}");
    }
    // The same through the untyped layer (umem copy_to / copy_from).
    let m1 = Memory::new(l, 64).unwrap();
    let m2 = Memory::new(l, 64).unwrap();
    m1.write(0, &pattern_u8(64, 1)).unwrap();
    m2.write(0, &[0u8; 64]).unwrap();
    m1.copy_to(3, &m2, 10, 21).unwrap();
    m2.copy_from(40, &m1, 0, 4).unwrap();
    let mut got = vec![0u8; 64];
    m2.read(0, &mut got).unwrap();
    let mut want = vec![0u8; 64];
    want[10..31].copy_from_slice(&pattern_u8(64, 1)[3..24]);
    want[40..44].copy_from_slice(&pattern_u8(64, 1)[0..4]);
    assert_eq!(got, want);
    // Overlapping copy inside one allocation behaves like memmove.
    m1.copy_to(0, &m1, 5, 30).unwrap();
    let mut moved = vec![0u8; 64];
    m1.read(0, &mut moved).unwrap();
    let mut expect = pattern_u8(64, 1);
    expect.copy_within(0..30, 5);
    assert_eq!(moved, expect);
}

pub fn zero_length(l: Location) {
    let mut empty = Buffer::<f32>::zeroed(l, 0).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.to_vec().unwrap(), Vec::<f32>::new());
    let other = Buffer::<f32>::from_slice(l, &[]).unwrap();
    empty.copy_from(0, &other, 0..0).unwrap();
    assert_eq!(
        empty.access(Location::Host).unwrap().as_slice().unwrap(),
        &[] as &[f32]
    );
    let m = Memory::new(l, 0).unwrap();
    m.copy_to(0, &m, 0, 0).unwrap();
}

#[allow(clippy::reversed_empty_ranges)] // a reversed range is one of the bad inputs
pub fn out_of_range_writes_nothing(l: Location) {
    let src = Buffer::from_slice(l, &[1u32, 2, 3, 4]).unwrap();
    let mut dst = Buffer::from_slice(l, &[9u32; 4]).unwrap();
    for (start, range) in [(0, 0..5), (3, 0..2), (5, 0..0), (0, 3..2)] {
        let err = dst.copy_from(start, &src, range.clone()).unwrap_err();
        assert!(
            matches!(err, Error::OutOfRange { .. }),
            "{start} {range:?}: {err}"
        );
        assert!(err.to_string().contains("nothing was written"), "{err}");
        assert_eq!(dst.to_vec().unwrap(), vec![9; 4]);
    }
    let m = Memory::new(l, 8).unwrap();
    m.write(0, &[5u8; 8]).unwrap();
    assert!(m.write(4, &[0u8; 5]).is_err());
    assert!(m.copy_to(0, &m, 4, 5).is_err());
    assert!(m.copy_to(usize::MAX, &m, 0, 2).is_err());
    assert!(m.fill(6..10, &[0]).is_err());
    let mut back = [0u8; 8];
    m.read(0, &mut back).unwrap();
    assert_eq!(back, [5u8; 8]);
}

pub fn access_everywhere(l: Location) {
    let data = pattern_f32(257, 0.25);
    for accessor in locus::available() {
        let b = Buffer::from_slice(l, &data).unwrap();
        let home = b.memory_at(l).unwrap();
        // The upload from the host slice is counted too (a copy unless `l` is the host).
        let made = b.stats().copies();
        assert_eq!(made, u64::from(!l.is_host()));
        {
            let guard = b.access(accessor).unwrap();
            if in_place(l, accessor) {
                assert!(
                    guard.is_in_place(),
                    "{l} by {accessor}: {:?}",
                    guard.route()
                );
                assert!(
                    Arc::ptr_eq(guard.memory(), &home),
                    "served from the buffer's own memory"
                );
                assert_eq!(b.stats().copies(), made);
            } else {
                assert!(!guard.is_in_place());
                assert_eq!(
                    guard.memory_location(),
                    accessor,
                    "a replica at the consumer"
                );
                assert_eq!(b.stats().copies(), made + 1);
            }
            if let Ok(slice) = guard.as_slice() {
                assert_eq!(slice, data.as_slice());
                if in_place(l, accessor) && accessor.is_host() {
                    // The host sees the device memory itself, not a copy of it.
                    let p = guard.ptr().unwrap();
                    assert_eq!(p, slice.as_ptr());
                }
            }
        }
        // A second read at the same place moves nothing.
        let before = b.stats();
        let again = b.access(accessor).unwrap();
        assert!(again.is_in_place());
        assert_eq!(b.stats().copies(), before.copies());
        assert_eq!(b.stats().bytes_moved(), before.bytes_moved());
    }
}

pub fn writes_invalidate_and_are_never_lost(l: Location) {
    let n = 100;
    let mut b = Buffer::from_slice(l, &pattern_f32(n, 1.0)).unwrap();
    let mut model = pattern_f32(n, 1.0);
    for accessor in locus::available() {
        // Read somewhere first so that a replica may exist.
        drop(b.access(accessor).unwrap());
        // Write at `accessor`: through the host slice where the code runs on the host,
        // otherwise through the memory (as a kernel there would).
        {
            let mut w = b.access_mut(accessor).unwrap();
            let value = accessor.ordinal() as f32 + 10.0 * (accessor.technology() as u8 as f32);
            match w.as_mut_slice() {
                Ok(slice) => slice[3] = value,
                Err(_) => w.memory().write(12, bytemuck::bytes_of(&value)).unwrap(),
            }
            model[3] = value;
        }
        let valid: Vec<_> = b.replicas().into_iter().filter(|(_, v)| *v).collect();
        assert_eq!(
            valid.len(),
            1,
            "only the writer's copy is valid: {:?}",
            b.replicas()
        );
        // Every other location sees the write.
        for reader in locus::available() {
            let g = b.access(reader).unwrap();
            let seen: Vec<f32> = match g.as_slice() {
                Ok(s) => s.to_vec(),
                Err(_) => {
                    let mut raw = vec![0f32; n];
                    g.memory()
                        .read(0, bytemuck::cast_slice_mut(&mut raw))
                        .unwrap();
                    raw
                }
            };
            assert_eq!(seen, model, "write at {accessor} read at {reader}");
        }
    }
    assert_eq!(b.to_vec().unwrap(), model);
}

pub fn resize_keeps_prefix(l: Location) {
    let mut b = Buffer::from_slice(l, &[1u16, 2, 3, 4, 5]).unwrap();
    b.resize(9).unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![1, 2, 3, 4, 5, 0, 0, 0, 0]);
    b.resize(2).unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![1, 2]);
    b.resize(0).unwrap();
    assert!(b.to_vec().unwrap().is_empty());
    b.resize(3).unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![0, 0, 0]);
    assert_eq!(b.location(), l);
}

pub fn dropping_frees(l: Location) {
    let before = live(l);
    {
        let b = Buffer::from_slice(l, &pattern_f32(64, 2.0)).unwrap();
        for accessor in locus::available() {
            drop(b.access(accessor).unwrap());
        }
        let m = Memory::new(l, 128).unwrap();
        let _mirror = mirror::connect(&Arc::new(m), 128, Location::Host, 0).unwrap();
        assert!(live(l) > before);
    }
    // The drop does not wait for the moves still in flight (stream order): each
    // replica's memory goes once they are done, on locus's releaser thread.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while live(l) != before && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_eq!(live(l), before, "every allocation at {l} was freed");
}

pub fn errors_are_clear(l: Location) {
    // A handle of another technology cannot be adopted here.
    if !l.is_host() {
        let mut v = vec![0u8; 8];
        let native = locus::Native::Host {
            ptr: v.as_mut_ptr(),
        };
        // SAFETY: the adoption is refused before the handle is used.
        let err = unsafe { Memory::adopt(l, native, 8, |_| {}) }.unwrap_err();
        assert!(err.to_string().contains("cannot adopt"), "{err}");
    }
    assert!(matches!(
        "gpu:0".parse::<Location>(),
        Err(Error::UnknownLocation { .. })
    ));
    let max = locus::registry().device(l).unwrap().info().max_allocation;
    let before = live(l);
    let too_big = usize::try_from(max)
        .unwrap_or(usize::MAX / 2)
        .saturating_add(1);
    let err = Memory::new(l, too_big).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(
        err.to_string().contains(&l.to_string()),
        "names the location: {err}"
    );
    let err = Buffer::<u8>::zeroed(l, too_big).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert_eq!(live(l), before, "nothing leaked");
    // A device ordinal this technology does not have.
    let missing = l.technology().location(999);
    if !missing.is_host() {
        let err = Buffer::<u8>::zeroed(missing, 4).unwrap_err();
        assert!(matches!(err, Error::Unavailable { .. }), "{err}");
        assert!(err.to_string().contains("999"), "{err}");
    }
}

pub fn mirrors(l: Location) {
    let source = Arc::new(Memory::new_aligned(l, 40, 256).unwrap());
    assert_eq!(source.native().address() % 256, 0, "{l}: aligned to 256");
    source.write(0, &pattern_u8(40, 9)).unwrap();
    for at in locus::available() {
        // Connected for 32 of the 40 bytes, aligned as the source is: in place exactly
        // when `at` reaches the source.
        let m = mirror::connect(&source, 32, at, 256).unwrap();
        assert_eq!(
            m.is_in_place(),
            source.is_accessible_from(at),
            "{l} mirrored at {at}"
        );
        assert_eq!(
            m.memory().native().address() % 256,
            0,
            "{l} at {at}: aligned"
        );
        let mut seen = vec![0u8; 32];
        m.memory().read(0, &mut seen).unwrap();
        assert_eq!(seen, pattern_u8(32, 9), "connect copies the source");
        // umem: the paired side writes, then `sync(n)` pushes n bytes to the source.
        m.memory().write(0, &[0xAB; 8]).unwrap();
        m.sync(4).unwrap();
        let mut back = vec![0u8; 8];
        source.read(0, &mut back).unwrap();
        if m.is_in_place() {
            assert_eq!(back, [0xAB; 8]);
        } else {
            assert_eq!(
                back[..4],
                [0xAB; 4],
                "{l} at {at}: sync pushes to the source"
            );
            assert_eq!(
                back[4..],
                pattern_u8(8, 9)[4..],
                "{l} at {at}: only n bytes"
            );
        }
        // The source changes, then `update(n)` pulls it into the paired memory.
        source.write(0, &pattern_u8(40, 9)).unwrap();
        m.update(32).unwrap();
        m.memory().read(0, &mut seen).unwrap();
        assert_eq!(
            seen,
            pattern_u8(32, 9),
            "{l} at {at}: update pulls the source"
        );
        // Past the connected length: an error, nothing moved.
        assert!(m.sync(33).is_err() && m.update(33).is_err());
        m.disconnect();
    }
    // An alignment the source does not meet gives a separate, aligned pairing even
    // where the source is reachable in place.
    let odd = Arc::new(Memory::new(l, 64).unwrap());
    let big = 1usize << 20;
    if !odd.native().address().is_multiple_of(big as u64) {
        let m = mirror::connect(&odd, 64, l, big).unwrap();
        assert!(
            !m.is_in_place(),
            "{l}: a 1 MiB alignment is not met in place"
        );
        assert_eq!(m.memory().native().address() % big as u64, 0);
    }
    assert!(
        mirror::connect(&odd, 65, l, 0).is_err(),
        "longer than the source"
    );
    assert!(mirror::connect(&odd, 8, l, 3).is_err(), "alignment 3");
}

/// Any power-of-two alignment at every location, from the device and through every
/// kind of resource; `aligned_origin` names the allocation it was carved from.
pub fn aligned_allocations(l: Location) {
    let before = live(l);
    for shift in [0u32, 3, 6, 7, 8, 12, 16, 21] {
        let align = 1usize << shift;
        let m = Memory::new_aligned(l, 1000, align).unwrap();
        assert_eq!(m.native().address() % align as u64, 0, "{l}: {align}");
        assert!(m.aligned_origin() <= m.native().address());
        m.write(0, &pattern_u8(1000, 3)).unwrap();
        let mut back = vec![0u8; 1000];
        m.read(0, &mut back).unwrap();
        assert_eq!(back, pattern_u8(1000, 3), "{l}: {align}");
        let up = resource::upstream(l).unwrap();
        let pool: Arc<dyn MemoryResource> = Arc::new(Pool::new(up.clone(), 1 << 16, 1 << 26));
        let stats: Arc<dyn MemoryResource> = Arc::new(resource::Statistics::new(pool.clone()));
        let fixed: Arc<dyn MemoryResource> =
            Arc::new(resource::FixedSize::new(up.clone(), 1024, 8).unwrap());
        for r in [&up, &pool, &stats, &fixed] {
            let blocks: Vec<Memory> = (0..3)
                .map(|i| Memory::from_resource_aligned(r, 700 + i, align).unwrap())
                .collect();
            for b in &blocks {
                assert_eq!(
                    b.native().address() % align as u64,
                    0,
                    "{l}: {} aligned to {align}",
                    r.describe()
                );
                b.write(0, &pattern_u8(700, 5)).unwrap();
            }
            for b in &blocks {
                let mut back = vec![0u8; 700];
                b.read(0, &mut back).unwrap();
                assert_eq!(back, pattern_u8(700, 5), "{l}: {}", r.describe());
            }
        }
    }
    for bad in [0usize, 3, 24] {
        let err = Memory::new_aligned(l, 8, bad).unwrap_err();
        assert!(err.to_string().contains("power of two"), "{l}: {err}");
        assert!(err.to_string().contains(&l.to_string()), "{l}: {err}");
    }
    assert_eq!(live(l), before, "{l}: aligned allocations are freed whole");
}

/// Every ordered pair (l, dst) with every available destination.
pub fn pairs_from_here(l: Location) {
    for dst in locus::available() {
        eprintln!("pair {l} -> {dst}");
        let data = pattern_f32(3001, 0.5);
        let src = Buffer::from_slice(l, &data).unwrap();
        let copy = src.to_location(dst).unwrap();
        assert_eq!(copy.location(), dst);
        assert_eq!(copy.to_vec().unwrap(), data, "{l} -> {dst}");
        // Sub-range copies between the two.
        let mut target = Buffer::<f32>::zeroed(dst, 3001).unwrap();
        let route = target.copy_from(100, &src, 7..2007).unwrap();
        let expected = transfer::copy_route_for(locus::registry(), l, dst, 2000 * 4).unwrap();
        assert_eq!(route.kind, expected.kind, "{route}");
        let mut model = vec![0f32; 3001];
        model[100..2100].copy_from_slice(&data[7..2007]);
        assert_eq!(target.to_vec().unwrap(), model, "{l} -> {dst} sub-range");
        // Out of range across the pair: an error, nothing written.
        assert!(target.copy_from(2000, &src, 0..1002).is_err());
        assert_eq!(target.to_vec().unwrap(), model);
        // Byte granularity at unaligned offsets.
        let a = Memory::new(l, 37).unwrap();
        let b = Memory::new(dst, 41).unwrap();
        a.write(0, &pattern_u8(37, 1)).unwrap();
        b.write(0, &[0u8; 41]).unwrap();
        a.copy_to(1, &b, 3, 33).unwrap();
        let mut got = vec![0u8; 41];
        b.read(0, &mut got).unwrap();
        let mut want = vec![0u8; 41];
        want[3..36].copy_from_slice(&pattern_u8(37, 1)[1..34]);
        assert_eq!(got, want, "{l} -> {dst} bytes");
    }
}

/// Large enough to go through several staging chunks on every route.
pub fn large_pairs_from_here(l: Location) {
    let n = (20 << 20) / 4 + 3; // 20 MiB and a bit: > 2 staging chunks everywhere
    let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let src = Buffer::from_slice(l, &data).unwrap();
    for dst in locus::available() {
        let copy = src.to_location(dst).unwrap();
        let back = copy.to_vec().unwrap();
        assert!(back == data, "{l} -> {dst}: large copy differs");
        let route = transfer::copy_route(locus::registry(), l, dst).unwrap();
        assert!(RouteKind::ALL.contains(&route.kind));
    }
}

/// The staged engine on every pair, forced, over several chunks and unaligned ends;
/// and a route that does not exist is an error naming both sides.
pub fn staged_pairs_from_here(l: Location) {
    let len = (20 << 20) + 5;
    let data = pattern_u8(len, 11);
    let src = Memory::new(l, len).unwrap();
    src.write(0, &data).unwrap();
    for dst in locus::available() {
        let target = Memory::new(dst, len).unwrap();
        target.fill(0..len, &[0]).unwrap();
        let route = src
            .copy_to_with(
                3,
                &target,
                1,
                len - 4,
                locus::CopyOptions::via(locus::Via::Kind(RouteKind::Staged)),
            )
            .unwrap();
        assert_eq!(route.kind, RouteKind::Staged);
        let mut got = vec![0u8; len];
        target.read(0, &mut got).unwrap();
        assert_eq!(got[0], 0);
        assert!(got[1..len - 3] == data[3..len - 1], "{l} -> {dst} staged");
        assert_eq!(&got[len - 3..], &[0, 0, 0]);
        if l != dst && !l.is_host() && !dst.is_host() && l.technology() != dst.technology() {
            let err = src
                .copy_to_with(
                    0,
                    &target,
                    0,
                    4,
                    locus::CopyOptions::via(locus::Via::Kind(RouteKind::Peer)),
                )
                .unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains(&l.to_string()) && text.contains(&dst.to_string()),
                "{text}"
            );
        }
    }
}

/// Every candidate path the planner may choose from here to every location (not only
/// the one it chooses on this machine) copies exactly: over several 1 MiB staging
/// chunks at unaligned offsets, and a few bytes, nothing written outside the range.
pub fn candidate_pairs_from_here(l: Location) {
    let len = (5 << 19) + 7; // 2.5 MiB and a bit: three 1 MiB chunks
    let data = pattern_u8(len, 29);
    let src = Memory::new(l, len).unwrap();
    src.write(0, &data).unwrap();
    for dst in locus::available() {
        let target = Memory::new(dst, len).unwrap();
        let candidates = locus::registry().matrix().candidates(
            transfer::Endpoint::of(&src),
            transfer::Endpoint::of(&target),
        );
        assert!(
            candidates.iter().any(|(r, _)| r.kind == RouteKind::Staged),
            "{l} -> {dst}: the staged fallback is always a candidate"
        );
        for (route, path) in candidates {
            for (from, to, n) in [(3, 1, len - 4), (5, 9, 37)] {
                target.fill(0..len, &[0]).unwrap();
                let took = src
                    .copy_to_with(
                        from,
                        &target,
                        to,
                        n,
                        locus::CopyOptions::via(locus::Via::Path(path.name())),
                    )
                    .unwrap();
                assert_eq!(took.kind, route.kind, "{took}");
                let mut got = vec![0u8; len];
                target.read(0, &mut got).unwrap();
                let what = format!("{l} -> {dst} via '{}' ({n} bytes)", path.name());
                assert!(
                    got[..to].iter().all(|&b| b == 0),
                    "{what}: before the range"
                );
                assert!(got[to..to + n] == data[from..from + n], "{what}: the data");
                assert!(
                    got[to + n..].iter().all(|&b| b == 0),
                    "{what}: after the range"
                );
            }
        }
        let err = src
            .copy_to_with(
                0,
                &target,
                0,
                4,
                locus::CopyOptions::via(locus::Via::Path("no such path")),
            )
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("staged through"),
            "the candidates are named: {err}"
        );
    }
}

/// The tests of the suite, each with the given attributes (e.g. `#[ignore]`).
macro_rules! suite {
    ($(#[$m:meta])*) => {
        $(#[$m])* #[test] fn constructors_round_trip() { run(super::constructors_round_trip) }
        $(#[$m])* #[test] fn copy_sub_ranges() { run(super::copy_sub_ranges) }
        $(#[$m])* #[test] fn zero_length() { run(super::zero_length) }
        $(#[$m])* #[test] fn out_of_range_writes_nothing() { run(super::out_of_range_writes_nothing) }
        $(#[$m])* #[test] fn access_everywhere() { run(super::access_everywhere) }
        $(#[$m])* #[test] fn writes_invalidate_and_are_never_lost() { run(super::writes_invalidate_and_are_never_lost) }
        $(#[$m])* #[test] fn resize_keeps_prefix() { run(super::resize_keeps_prefix) }
        $(#[$m])* #[test] fn dropping_frees() { run(super::dropping_frees) }
        $(#[$m])* #[test] fn errors_are_clear() { run(super::errors_are_clear) }
        $(#[$m])* #[test] fn mirrors() { run(super::mirrors) }
        $(#[$m])* #[test] fn aligned_allocations() { run(super::aligned_allocations) }
        $(#[$m])* #[test] fn pairs_from_here() { run(super::pairs_from_here) }
        $(#[$m])* #[test] fn large_pairs_from_here() { run(super::large_pairs_from_here) }
        $(#[$m])* #[test] fn staged_pairs_from_here() { run(super::staged_pairs_from_here) }
        $(#[$m])* #[test] fn candidate_pairs_from_here() { run(super::candidate_pairs_from_here) }
    };
}

at_every_location!();
