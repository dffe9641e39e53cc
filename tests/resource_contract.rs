//! The memory-resource contract (RMM's `mr_ref` tests), written once and instantiated per
//! resource and adaptor; every instance runs on every location this machine has.
//!
//! Every resource must: hand out blocks at its own location that keep their bytes and do
//! not overlap (checked by writing a different pattern into each live block, then reading
//! them all back); align blocks to the 64 bytes asked for; serve zero bytes; take blocks
//! back and serve again over many cycles without taking more from its upstream; serve two
//! threads at once; answer a request it cannot serve with an error, not a panic, leaving
//! it usable; and, dropped with every block given back, hold nothing of its upstream
//! (the upstream is counted by a statistics adaptor: what a resource that loses blocks
//! keeps, or takes again, shows there).

mod common;

use std::cell::RefCell;
use std::sync::Arc;

use locus::resource::{self, MemoryResource};
use locus::{Location, Memory, Native};

/// The sizes a contract test asks for, up to `max` (what the resource serves at most).
fn sizes(max: usize) -> Vec<usize> {
    [1, 7, 64, 100, 1000, 4096, 65536, 1 << 20]
        .into_iter()
        .filter(|&s| s <= max)
        .collect()
}

/// The block's address within its allocation space: the pointer, or the offset into
/// the OpenCL / wgpu buffer (buffers themselves are aligned by the runtime).
fn address(native: &Native) -> usize {
    match native {
        Native::Host { ptr } => *ptr as usize,
        Native::OpenMp { ptr, .. } => *ptr as usize,
        Native::Sycl { ptr, .. } => *ptr as usize,
        Native::OpenCl { offset, .. } => *offset,
        Native::WebGpu { offset, .. } => *offset as usize,
        Native::Cuda { ptr, .. } | Native::Hip { ptr, .. } => *ptr as usize,
        _ => 0,
    }
}

pub fn blocks_keep_their_bytes_and_do_not_overlap(r: &Arc<dyn MemoryResource>, max: usize) {
    let location = r.location();
    let live: Vec<(Memory, Vec<u8>)> = sizes(max)
        .into_iter()
        .enumerate()
        .map(|(i, n)| {
            let m = Memory::from_resource(r, n).unwrap_or_else(|e| panic!("{location}: {e}"));
            assert_eq!((m.location(), m.len()), (location, n));
            let data = common::pattern_u8(n, i as u8 + 1);
            m.write(0, &data).unwrap();
            (m, data)
        })
        .collect();
    for (m, data) in &live {
        let mut back = vec![0u8; m.len()];
        m.read(0, &mut back).unwrap();
        assert!(
            back == *data,
            "{location}: a block of {} bytes lost its bytes",
            m.len()
        );
    }
}

pub fn blocks_are_aligned(r: &Arc<dyn MemoryResource>, max: usize) {
    for n in sizes(max) {
        let block = r.allocate(n, 64).unwrap();
        assert_eq!(block.location(), r.location());
        assert!(block.bytes() >= n);
        assert_eq!(
            address(block.native()) % 64,
            0,
            "{}: {n} bytes at {:?}",
            r.location(),
            block.native()
        );
        r.deallocate(block);
    }
}

pub fn zero_bytes_are_served(r: &Arc<dyn MemoryResource>, _max: usize) {
    let m = Memory::from_resource(r, 0).unwrap_or_else(|e| panic!("{}: {e}", r.location()));
    assert!(m.is_empty());
}

pub fn blocks_come_back_and_are_served_again(r: &Arc<dyn MemoryResource>, max: usize) {
    let sizes = sizes(max.min(65536));
    let mut live: Vec<Memory> = Vec::new();
    for i in 0..300usize {
        if i % 3 == 2 && !live.is_empty() {
            live.swap_remove((i * 7) % live.len());
        } else {
            let n = sizes[i % sizes.len()];
            let m = Memory::from_resource(r, n).unwrap();
            m.write(n - 1, &[i as u8]).unwrap();
            live.push(m);
        }
    }
    drop(live);
    // Everything came back: the same sizes are served again...
    for &n in &sizes {
        Memory::from_resource(r, n).unwrap();
    }
    // ...from what the resource holds: the same cycles again take nothing more from its
    // upstream (a resource that lost the blocks given back would take new ones).
    let held = upstream_bytes();
    let mut live: Vec<Memory> = Vec::new();
    for i in 0..300usize {
        if i % 3 == 2 && !live.is_empty() {
            live.swap_remove((i * 7) % live.len());
        } else {
            live.push(Memory::from_resource(r, sizes[i % sizes.len()]).unwrap());
        }
    }
    drop(live);
    assert!(
        upstream_bytes() <= held,
        "{}: the same cycles again took {} more bytes from the upstream (blocks given back were not reused)",
        r.describe(),
        upstream_bytes() - held
    );
}

pub fn two_threads_at_once(r: &Arc<dyn MemoryResource>, max: usize) {
    let n = max.min(4096);
    std::thread::scope(|s| {
        for seed in 0..2u8 {
            s.spawn(move || {
                for i in 0..100u8 {
                    let m = Memory::from_resource(r, n).unwrap();
                    let data = common::pattern_u8(n, seed.wrapping_mul(101).wrapping_add(i));
                    m.write(0, &data).unwrap();
                    let mut back = vec![0u8; n];
                    m.read(0, &mut back).unwrap();
                    assert!(back == data, "{}: thread {seed}, round {i}", r.location());
                }
            });
        }
    });
}

pub fn what_it_cannot_serve_is_an_error(r: &Arc<dyn MemoryResource>, max: usize) {
    let err = r
        .allocate(usize::MAX / 4, 64)
        .expect_err("an allocation of usize::MAX / 4 bytes");
    assert!(
        err.to_string().contains(&r.location().to_string()),
        "the error names the location: {err}"
    );
    // Still usable.
    let block = r.allocate(max.min(4096), 64).unwrap();
    r.deallocate(block);
    assert!(!r.describe().is_empty());
}

/// One test per contract clause for the resource `make(location)` makes, run on every
/// location; `max` is the largest block it serves. `@each` takes a function making
/// several resources per location.
macro_rules! contract {
    ($name:ident, $max:expr, $make:expr) => {
        contract!(@each $name, $max, |l| {
            let make: fn(Location) -> Arc<dyn MemoryResource> = $make;
            vec![make(l)]
        });
    };
    (@each $name:ident, $max:expr, $many:expr) => {
        mod $name {
            use super::*;

            fn each(check: fn(&Arc<dyn MemoryResource>, usize)) {
                let _serial = common::serial();
                let many: fn(Location) -> Vec<Arc<dyn MemoryResource>> = $many;
                for location in common::required_locations() {
                    UPSTREAMS.with(|u| u.borrow_mut().clear());
                    for r in many(location) {
                        check(&r, $max);
                        let what = r.describe();
                        drop(r);
                        let kept = upstream_bytes();
                        assert_eq!(
                            kept, 0,
                            "{what}: dropped with every block given back, it still holds {kept} bytes of its upstream"
                        );
                    }
                }
            }

            #[test]
            fn blocks_keep_their_bytes_and_do_not_overlap() {
                each(super::blocks_keep_their_bytes_and_do_not_overlap);
            }

            #[test]
            fn blocks_are_aligned() {
                each(super::blocks_are_aligned);
            }

            #[test]
            fn zero_bytes_are_served() {
                each(super::zero_bytes_are_served);
            }

            #[test]
            fn blocks_come_back_and_are_served_again() {
                each(super::blocks_come_back_and_are_served_again);
            }

            #[test]
            fn two_threads_at_once() {
                each(super::two_threads_at_once);
            }

            #[test]
            fn what_it_cannot_serve_is_an_error() {
                each(super::what_it_cannot_serve_is_an_error);
            }
        }
    };
}

thread_local! {
    /// The counted upstreams of the resources the running check made (on this thread).
    static UPSTREAMS: RefCell<Vec<Arc<resource::Statistics>>> = const { RefCell::new(Vec::new()) };
}

/// The location's upstream, counted: the resources under test take their memory from it.
fn upstream(l: Location) -> Arc<dyn MemoryResource> {
    let counted = Arc::new(resource::Statistics::new(resource::upstream(l).unwrap()));
    UPSTREAMS.with(|u| u.borrow_mut().push(Arc::clone(&counted)));
    counted
}

/// Bytes the resources under test hold from their counted upstreams now.
fn upstream_bytes() -> usize {
    UPSTREAMS.with(|u| u.borrow().iter().map(|s| s.totals().current_bytes).sum())
}

const ANY: usize = 1 << 20;

contract!(upstream_resource, ANY, |l| resource::upstream(l).unwrap());
// Every memory kind each location offers (SYCL's USM device / shared / host here; CUDA
// and HIP's pinned, managed and stream-ordered on a GPU), as RMM's kind resources.
contract!(@each upstream_of_every_kind, ANY, |l| {
    locus::registry()
        .device(l)
        .unwrap()
        .memory_kinds()
        .into_iter()
        .map(|k| resource::upstream_of_kind(l, k).unwrap())
        .collect()
});
contract!(pool, ANY, |l| Arc::new(resource::Pool::new(
    upstream(l),
    1 << 20,
    64 << 20
)));
contract!(arena, ANY, |l| Arc::new(resource::Arena::new(
    upstream(l),
    4 << 20
)));
contract!(fixed_size, 4096, |l| Arc::new(
    resource::FixedSize::new(upstream(l), 4096, 16).unwrap()
));
contract!(binning, ANY, |l| Arc::new(
    resource::Binning::new(
        upstream(l),
        Arc::new(resource::Pool::new(upstream(l), 1 << 20, 64 << 20)),
        64,
        4096,
        16
    )
    .unwrap()
));
contract!(statistics, ANY, |l| Arc::new(resource::Statistics::new(
    upstream(l)
)));
contract!(limiting, ANY, |l| Arc::new(resource::Limiting::new(
    upstream(l),
    256 << 20
)));
contract!(tracking, ANY, |l| Arc::new(resource::Tracking::new(
    upstream(l)
)));
contract!(failure_callback, ANY, |l| Arc::new(
    resource::FailureCallback::new(upstream(l), 2, |_| false)
));
contract!(logging, ANY, |l| Arc::new(
    resource::Logging::new(upstream(l), Box::new(std::io::sink())).unwrap()
));

/// Every resource built over another names it (`upstream()`, RMM's
/// `get_upstream_resource`): the very resource it was given, so that a caller can walk a
/// composition down to the location's raw allocation.
#[test]
fn every_resource_over_another_names_its_upstream() {
    use locus::resource::{
        Arena, Binning, FailureCallback, FixedSize, Limiting, Logging, Pool, Statistics, Tracking,
    };
    let raw = resource::upstream(Location::Host).unwrap();
    let same = |upstream: &Arc<dyn MemoryResource>, what: &str| {
        assert!(Arc::ptr_eq(upstream, &raw), "{what} names another upstream");
    };
    let up = || Arc::clone(&raw);
    same(Pool::new(up(), 1 << 20, 8 << 20).upstream(), "Pool");
    same(Arena::new(up(), 1 << 20).upstream(), "Arena");
    same(
        FixedSize::new(up(), 4096, 4).unwrap().upstream(),
        "FixedSize",
    );
    let binning = Binning::new(up(), up(), 256, 4096, 4).unwrap();
    same(binning.upstream(), "Binning");
    same(binning.fallback(), "Binning's fallback");
    same(Statistics::new(up()).upstream(), "Statistics");
    same(Limiting::new(up(), 1 << 20).upstream(), "Limiting");
    same(Tracking::new(up()).upstream(), "Tracking");
    same(
        FailureCallback::new(up(), 1, |_| false).upstream(),
        "FailureCallback",
    );
    let logging = Logging::new(up(), Box::new(std::io::sink())).unwrap();
    same(logging.upstream(), "Logging");
}
