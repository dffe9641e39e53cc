//! Adversarial inputs: every public entry point that takes a size, range, alignment,
//! count or location, fed extreme values (0, 1, powers of two and their neighbours,
//! `usize::MAX` and its neighbours, products that overflow), on every location. The
//! answer is `Ok` with the right size, or an error; never a panic, a hang or a wrong
//! size. Run in debug builds, so that an unchecked overflow panics here.

mod common;

use std::sync::{mpsc, Arc};
use std::time::Duration;

use locus::resource::{
    Arena, Binning, FixedSize, Limiting, MemoryResource, Pool, Statistics, Tracking, Upstream,
};
use locus::{Buffer, Location, Memory};
use proptest::prelude::*;

/// 0, 1, small numbers, powers of two and their neighbours, the top of `usize`.
fn extreme() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        Just(1),
        Just(3),
        0usize..5000,
        (0u32..64).prop_map(|k| 1usize << k),
        (1u32..64).prop_map(|k| (1usize << k) - 1),
        (0u32..64).prop_map(|k| (1usize << k) + 1),
        (0usize..64).prop_map(|k| usize::MAX - k),
        (0usize..64).prop_map(|k| usize::MAX / 2 + k),
        any::<usize>(),
    ]
}

/// Sizes worth asking a device for: anything up to 64 MiB, and the top of the range
/// (past 2^48 no device has it, and the arithmetic around it must not wrap). Sizes in
/// between are real allocations of gigabytes, not adversarial input.
fn allocation() -> impl Strategy<Value = usize> {
    extreme().prop_filter("a real multi-gigabyte allocation", |n| {
        *n <= 64 << 20 || *n >= 1 << 48
    })
}

/// Runs `f` on a thread of its own and fails the test if it does not answer in time
/// (a hang is a failure, not a stuck CI job).
fn answers<R: Send + 'static>(what: String, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(Ok(value)) => value,
        Ok(Err(_)) => panic!("{what}: panicked"),
        Err(_) => panic!("{what}: no answer in 30 s (a hang)"),
    }
}

/// This process's resident set, in bytes (`/proc/self/statm`).
#[cfg(target_os = "linux")]
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn locations() -> Vec<Location> {
    locus::available()
}

fn pick(i: usize) -> Location {
    let all = locations();
    all[i % all.len()]
}

fn resources(at: Location) -> Vec<(&'static str, Arc<dyn MemoryResource>)> {
    let device = Arc::clone(locus::registry().device(at).unwrap());
    let up: Arc<dyn MemoryResource> = Arc::new(Upstream::new(device));
    let pool: Arc<dyn MemoryResource> = Arc::new(Pool::new(Arc::clone(&up), 1 << 16, 1 << 24));
    vec![
        ("upstream", Arc::clone(&up)),
        ("pool", Arc::clone(&pool)),
        ("arena", Arc::new(Arena::new(Arc::clone(&up), 1 << 16))),
        (
            "binning",
            Arc::new(Binning::new(Arc::clone(&up), Arc::clone(&pool), 8, 4096, 16).unwrap()),
        ),
        (
            "fixed_size",
            Arc::new(FixedSize::new(Arc::clone(&up), 256, 16).unwrap()),
        ),
        (
            "limiting",
            Arc::new(Limiting::new(Arc::clone(&pool), 1 << 20)),
        ),
        ("statistics", Arc::new(Statistics::new(Arc::clone(&pool)))),
        ("tracking", Arc::new(Tracking::new(Arc::clone(&pool)))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// `Memory::new` and `Memory::new_aligned`: the size asked for, aligned as asked,
    /// or an error (an alignment of 0 or not a power of two is one).
    #[test]
    fn memory_of_any_size_and_alignment(at in any::<usize>(), n in allocation(), align in allocation()) {
        let at = pick(at);
        let (got, aligned) = answers(format!("Memory::new_aligned({at}, {n}, {align})"), move || {
            (Memory::new(at, n).map(|m| m.len()), Memory::new_aligned(at, n, align).map(|m| (m.len(), m.native().address())))
        });
        if let Ok(len) = got {
            prop_assert_eq!(len, n);
        }
        match aligned {
            Ok((len, address)) => {
                prop_assert_eq!(len, n);
                prop_assert!(align.is_power_of_two(), "alignment {} accepted", align);
                prop_assert_eq!(address % align as u64, 0, "address {} for alignment {}", address, align);
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    /// Reads, writes, fills, copies and maps at any offset and length of a 64-byte
    /// memory: in bounds they work, out of bounds (or a reversed range) they are errors
    /// that change nothing.
    #[test]
    fn ranges_of_a_small_memory(at in any::<usize>(), to in any::<usize>(), offset in extreme(), len in extreme(), end in extreme()) {
        let (at, to) = (pick(at), pick(to));
        answers(format!("ranges at {at} -> {to}: offset {offset}, len {len}, end {end}"), move || {
            let original: Vec<u8> = (0..64u8).collect();
            let m = Arc::new(Memory::new(at, 64).unwrap());
            m.write(0, &original).unwrap();
            let other = Arc::new(Memory::new(to, 64).unwrap());
            other.write(0, &[0xee; 64]).unwrap();
            let fits = |o: usize, l: usize| o.checked_add(l).is_some_and(|e| e <= 64);
            let buf = vec![7u8; len.min(128)];
            let write = m.write(offset, &buf);
            assert_eq!(write.is_ok(), fits(offset, buf.len()), "write {offset}+{}", buf.len());
            let mut out = vec![0u8; len.min(128)];
            assert_eq!(m.read(offset, &mut out).is_ok(), fits(offset, out.len()));
            let fill = m.fill(offset..end, &[1, 2, 3, 4]);
            let fill_ok = offset <= end && end <= 64 && (end - offset) % 4 == 0;
            assert_eq!(fill.is_ok(), fill_ok, "fill {offset}..{end}: {fill:?}");
            let copy = m.copy_to(offset, &other, end, len);
            assert_eq!(copy.is_ok(), fits(offset, len) && fits(end, len), "copy_to {offset} -> {end}, {len}: {copy:?}");
            let copy = m.copy_to_async(offset, &other, end, len, &[]).and_then(|e| e.wait());
            assert_eq!(copy.is_ok(), fits(offset, len) && fits(end, len), "copy_to_async: {copy:?}");
            let mapped = m.map(offset..end, false);
            if m.host_access() != locus::HostAccess::None {
                assert_eq!(mapped.is_ok(), offset <= end && end <= 64, "map {offset}..{end}");
            }
            assert!(!m.overlaps(offset, &m, end, len) || (offset < end.saturating_add(len) && end < offset.saturating_add(len)));
        });
    }

    /// Buffers of elements whose byte size overflows, resizes, and copies with any range.
    #[test]
    fn buffers_of_any_length_and_range(at in any::<usize>(), n in allocation(), start in extreme(), end in extreme(), dst in extreme()) {
        let at = pick(at);
        answers(format!("buffers at {at}: n {n}, {start}..{end} -> {dst}"), move || {
            for b in [Buffer::<u64>::zeroed(at, n), Buffer::<u64>::filled(at, n, 7)]
                .into_iter()
                .flatten()
            {
                assert_eq!(b.len(), n);
            }
            let mut b = Buffer::<u64>::from_slice(at, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
            let src = Buffer::<u64>::from_slice(at, &[9; 8]).unwrap();
            let copy = b.copy_from(dst, &src, start..end);
            let fits = start <= end && end <= 8 && dst.checked_add(end - start).is_some_and(|e| e <= 8);
            assert_eq!(copy.is_ok(), fits, "copy_from {start}..{end} to {dst}: {copy:?}");
            if !fits {
                assert_eq!(b.to_vec().unwrap(), vec![1, 2, 3, 4, 5, 6, 7, 8]);
            }
            match b.resize(n) {
                Ok(()) => assert_eq!(b.len(), n),
                Err(_) => assert_eq!(b.len(), 8),
            }
        });
    }

    /// Every resource, any size and alignment: a block of at least the size, aligned as
    /// asked, or an error.
    #[test]
    fn resources_of_any_size_and_alignment(at in any::<usize>(), n in allocation(), align in allocation()) {
        let at = pick(at);
        answers(format!("resources at {at}: {n} bytes aligned {align}"), move || {
            for (name, r) in resources(at) {
                match r.allocate(n, align) {
                    Ok(block) => {
                        assert!(block.bytes() >= n, "{name}: {} bytes for {n}", block.bytes());
                        assert!(align.is_power_of_two(), "{name}: alignment {align} accepted");
                        r.deallocate(block);
                    }
                    Err(e) => assert!(!e.to_string().is_empty()),
                }
                let memory = Memory::from_resource_aligned(&r, n, align);
                if let Ok(m) = memory {
                    assert_eq!(m.len(), n, "{name}");
                }
            }
        });
    }

    /// Resource constructors with any parameters: made or refused, and a made one
    /// answers.
    #[test]
    fn resource_constructors_with_any_parameters(at in any::<usize>(), a in extreme(), b in extreme(), c in extreme()) {
        let at = pick(at);
        answers(format!("constructors at {at}: {a}, {b}, {c}"), move || {
            let device = Arc::clone(locus::registry().device(at).unwrap());
            // Under a 1 GiB budget: a pool's first chunk or a fixed-size chunk of some
            // gigabytes is a real allocation (the host zeroes it page by page, and the
            // OOM killer ends the test), not adversarial input.
            let up: Arc<dyn MemoryResource> =
                Arc::new(Limiting::new(Arc::new(Upstream::new(device)), 1 << 30));
            let small = |r: &dyn MemoryResource| {
                if let Ok(block) = r.allocate(100, 8) {
                    assert!(block.bytes() >= 100);
                    r.deallocate(block);
                }
            };
            let pool = Pool::new(Arc::clone(&up), a, b);
            small(&pool);
            let _ = pool.reserve(c);
            small(&Arena::new(Arc::clone(&up), a));
            small(&Limiting::new(Arc::clone(&up), a));
            if let Ok(fixed) = FixedSize::new(Arc::clone(&up), a, b) {
                assert!(fixed.block_size() >= a, "block size {} for {a}", fixed.block_size());
                small(&fixed);
            }
            if let Ok(binning) = Binning::new(Arc::clone(&up), Arc::clone(&up), a, b, c.min(1 << 20)) {
                small(&binning);
            }
        });
    }

    /// Host requests of any size and alignment, gigabytes included, directly and through
    /// the resources that make chunks: each is refused or granted without touching its
    /// pages (the resident set stays small), never zeroed byte by byte into the OOM killer.
    #[test]
    #[cfg(target_os = "linux")]
    fn host_requests_of_gigabytes_are_refused_or_left_untouched(n in extreme(), align in extreme(), b in extreme()) {
        answers(format!("host: {n} bytes aligned {align}, second parameter {b}"), move || {
            // The registry first: its first use starts every backend (a CUDA context
            // alone maps hundreds of MiB), which is not what is measured here.
            let device = Arc::clone(locus::registry().device(Location::Host).unwrap());
            let before = resident_bytes();
            let up: Arc<dyn MemoryResource> = Arc::new(Upstream::new(device));
            let probe = |r: &dyn MemoryResource| {
                if let Ok(block) = r.allocate(100, 8) {
                    r.deallocate(block);
                }
            };
            let held = (
                Memory::new_aligned(Location::Host, n, align),
                up.allocate(n, align),
            );
            let pool = Pool::new(Arc::clone(&up), n, b);
            probe(&pool);
            let fixed = FixedSize::new(Arc::clone(&up), n, b.min(1 << 10));
            if let Ok(fixed) = &fixed {
                probe(fixed);
            }
            let grown = resident_bytes().saturating_sub(before);
            assert!(grown < 256 << 20, "{n} bytes aligned {align}: the resident set grew by {grown} bytes");
            if let Ok(block) = held.1 {
                up.deallocate(block);
            }
        });
    }

    /// Mirrors of any length and alignment, synced and updated with any count.
    #[test]
    fn mirrors_with_any_length_alignment_and_count(at in any::<usize>(), to in any::<usize>(), len in extreme(), align in extreme(), n in extreme()) {
        let (at, to) = (pick(at), pick(to));
        answers(format!("mirror {at} -> {to}: len {len}, align {align}, n {n}"), move || {
            let source = Arc::new(Memory::new(at, 64).unwrap());
            match locus::mirror::connect(&source, len, to, align) {
                Ok(mirror) => {
                    assert!(len <= 64 && (align == 0 || align.is_power_of_two()));
                    assert_eq!(mirror.len(), len);
                    assert_eq!(mirror.sync(n).is_ok(), n <= len);
                    assert_eq!(mirror.update(n).is_ok(), n <= len);
                }
                Err(_) => assert!(len > 64 || (align != 0 && !align.is_power_of_two()) || align > 1 << 20),
            }
        });
    }
}

/// A default resource is for its own location: putting a host pool in as the default of
/// another location is refused, so that a buffer "at" that location is never made
/// elsewhere without a word.
#[test]
fn a_default_resource_is_for_its_own_location() {
    let locations = locations();
    let Some(&other) = locations.iter().find(|l| **l != Location::Host) else {
        eprintln!("SKIPPED: the host is the only location here");
        return;
    };
    let host = locus::resource::upstream(Location::Host).unwrap();
    let refused = locus::resource::set_default(other, host);
    let message = refused
        .err()
        .expect("a host resource as another location's default")
        .to_string();
    assert!(
        message.contains(&other.to_string()) && message.contains("host"),
        "{message}"
    );
    let b = Buffer::<u32>::zeroed(other, 4).unwrap();
    assert_eq!(b.location(), other);
    assert_eq!(b.memory_at(other).unwrap().location(), other);
}

proptest! {
    /// The reference Jacobi step with any grid size and slices of any length.
    #[test]
    fn jacobi_reference_with_any_grid(nx in extreme(), ny in extreme(), len in 0usize..300) {
        let src = vec![1.0f32; len];
        let mut dst = vec![0.0f32; len];
        answers(format!("jacobi_reference({nx} x {ny}) on {len}"), move || {
            locus::codelet::kernels::jacobi_reference(&src, &mut dst, nx, ny);
        });
    }
}
