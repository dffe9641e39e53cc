//! `locus::lookup(address)` (issue 45, item 3) as a user calls it: an address that came
//! out of locus — an allocation's first byte, one inside it, one from a pool, an adopted
//! one, one of every memory kind a location offers — names its location, allocation,
//! offset, kind and resource; a freed or unknown address is an error naming it. OpenCL
//! and WebGPU hand out buffer objects, not addresses: their memory is not looked up.

mod common;

use std::sync::Arc;

use locus::{resource, Location, Memory, MemoryKind, Technology};

/// Whether memory at `at` is handed out as an address (not a buffer object).
fn has_addresses(at: Location) -> bool {
    !matches!(at.technology(), Technology::OpenCl | Technology::WebGpu)
}

#[test]
fn every_address_inside_an_allocation_names_it_at_every_location() {
    for at in common::required_locations() {
        let memory = Memory::new(at, 10_000).unwrap();
        let base = memory.native().address();
        if !has_addresses(at) {
            assert!(
                locus::lookup(base).map_or(true, |i| i.location != at),
                "{at}: a buffer object's offset was taken for an address"
            );
            eprintln!("{at}: buffer objects, no addresses to look up");
            continue;
        }
        for offset in [0, 1, 4096, 9_999] {
            let info = locus::lookup(base + offset).unwrap();
            assert_eq!(info.location, at);
            assert_eq!(
                (info.base, info.len, info.offset),
                (base, 10_000, offset as usize)
            );
            assert_eq!(info.kind, reported(MemoryKind::Default, at));
            assert_eq!(info.resource, None, "{at}: allocated directly");
        }
        // One past the end is not inside it (unless another allocation starts there).
        if let Ok(next) = locus::lookup(base + 10_000) {
            assert_ne!(
                next.base, base,
                "{at}: one past the end was taken for inside"
            );
        }
        drop(memory);
        let gone = locus::lookup(base + 1);
        assert!(
            gone.as_ref()
                .map_or(true, |i| i.base != base || i.len != 10_000),
            "{at}: freed memory still looked up: {gone:?}"
        );
    }
}

/// The kind lookup reports for memory of `kind` at `at`: SYCL's ordinary memory is
/// device USM.
fn reported(kind: MemoryKind, at: Location) -> MemoryKind {
    match (kind, at.technology()) {
        (MemoryKind::Default, Technology::Sycl) => MemoryKind::UsmDevice,
        _ => kind,
    }
}

#[test]
fn memory_from_a_pool_names_the_pool_and_its_block() {
    for at in common::required_locations()
        .into_iter()
        .filter(|&l| has_addresses(l))
    {
        let upstream = resource::upstream(at).unwrap();
        let pool: Arc<dyn resource::MemoryResource> =
            Arc::new(resource::Pool::new(upstream, 1 << 20, 4 << 20));
        let a = Memory::from_resource(&pool, 1000).unwrap();
        let b = Memory::from_resource(&pool, 3000).unwrap();
        for (m, len) in [(&a, 1000), (&b, 3000)] {
            let base = m.native().address();
            let info = locus::lookup(base + 999).unwrap();
            assert_eq!((info.location, info.base, info.len), (at, base, len));
            let named = info.resource.unwrap_or_default();
            assert!(named.contains("pool"), "{at}: resource named {named:?}");
        }
        // Given back: the block is no longer an allocation of a user's.
        let base = a.native().address();
        drop(a);
        let after = locus::lookup(base);
        assert!(
            after.as_ref().map_or(true, |i| i.len != 1000),
            "{at}: a block given back to the pool still looked up: {after:?}"
        );
    }
}

#[test]
fn every_memory_kind_a_location_offers_is_looked_up_as_that_kind() {
    for at in common::required_locations()
        .into_iter()
        .filter(|&l| has_addresses(l))
    {
        let device = locus::registry().device(at).unwrap().clone();
        for kind in device.memory_kinds() {
            let memory = Memory::new_kind(at, kind, 256).unwrap();
            let base = memory.native().address();
            let info = locus::lookup(base + 255).unwrap();
            assert_eq!((info.location, info.base, info.offset), (at, base, 255));
            assert_eq!(info.kind, reported(kind, at), "{at}: kind of {kind} memory");
        }
    }
}

#[test]
fn host_vectors_adopted_memory_and_aligned_memory_are_looked_up() {
    let vec = Memory::from_vec(vec![1u32; 100]);
    let info = locus::lookup(vec.native().address() + 399).unwrap();
    assert_eq!(
        (info.location, info.len, info.offset),
        (Location::Host, 400, 399)
    );

    let registered = Memory::from_vec_registered(vec![0u8; 1 << 16]).unwrap();
    let info = locus::lookup(registered.native().address() + 10).unwrap();
    assert_eq!((info.location, info.len), (Location::Host, 1 << 16));

    let aligned = Memory::new_aligned(Location::Host, 100, 1 << 16).unwrap();
    let base = aligned.native().address();
    assert_eq!(base % (1 << 16), 0);
    let info = locus::lookup(base + 50).unwrap();
    assert_eq!((info.base, info.len, info.offset), (base, 100, 50));

    // Someone else's memory, adopted without a copy: looked up while adopted.
    let mut theirs = vec![0u8; 4096];
    let ptr = theirs.as_mut_ptr();
    // SAFETY: `theirs` outlives the adopted memory and the deleter does nothing.
    let adopted =
        unsafe { Memory::adopt(Location::Host, locus::Native::Host { ptr }, 4096, |_| {}) }
            .unwrap();
    let info = locus::lookup(ptr as u64 + 4000).unwrap();
    assert_eq!((info.base, info.len, info.offset), (ptr as u64, 4096, 4000));
    drop(adopted);
    assert!(locus::lookup(ptr as u64 + 4000).is_err());
    drop(theirs);
}

#[test]
fn an_address_locus_never_handed_out_is_an_error_naming_it() {
    let mine = [0u8; 64];
    let at = mine.as_ptr() as u64 + 8;
    let e = locus::lookup(at).unwrap_err().to_string();
    assert!(e.contains(&format!("{at:#x}")), "{e}");
    assert!(e.contains("no live allocation"), "{e}");
    assert!(locus::lookup(0).is_err());
    assert!(locus::lookup(u64::MAX).is_err());
}

#[test]
fn lookups_from_many_threads_while_others_allocate_and_free() {
    let keep: Vec<Memory> = (0..64)
        .map(|i| Memory::new(Location::Host, 64 + i).unwrap())
        .collect();
    std::thread::scope(|s| {
        for t in 0..4 {
            let keep = &keep;
            s.spawn(move || {
                for round in 0..500 {
                    // Churn: memory made and freed beside the kept memory.
                    let churn = Memory::new(Location::Host, 128 + t * 8 + round % 7).unwrap();
                    let m = &keep[(round * 7 + t) % keep.len()];
                    let info = locus::lookup(m.native().address() + 63).unwrap();
                    assert_eq!((info.len, info.offset), (m.len(), 63));
                    let c = locus::lookup(churn.native().address()).unwrap();
                    assert_eq!(c.len, churn.len());
                }
            });
        }
    });
}
