//! Memory resources on every available location: pool reuse, coalescing, growth,
//! release and maximum; the limiting budget; statistics against a model; tracking of
//! an injected leak; buffers allocating through a replaced default; threads.

mod common;

use std::sync::Arc;

use locus::resource::{self, Limiting, MemoryResource, Pool, Statistics, Tracking};
use locus::{Buffer, Location, Memory, Native};

const MIB: usize = 1 << 20;

fn address(native: &Native) -> Option<u64> {
    match native {
        Native::Host { ptr } | Native::OpenMp { ptr, .. } | Native::Sycl { ptr, .. } => {
            Some(*ptr as u64)
        }
        _ => None,
    }
}

/// Locations whose backend can sub-allocate (all here but WebGPU).
fn poolable() -> Vec<Location> {
    locus::available()
        .into_iter()
        .filter(|l| *l != Location::WebGpu(0) && l.technology() != locus::Technology::WebGpu)
        .collect()
}

#[test]
fn pool_reuses_coalesces_grows_releases_and_stops_at_its_maximum() {
    let _serial = common::serial();
    for l in poolable() {
        eprintln!("pool at {l}");
        let pool = Pool::new(resource::upstream(l).unwrap(), 4 * MIB, 16 * MIB);
        // Alignment and reuse.
        let a = pool.allocate(1000, 64).unwrap();
        let first = address(a.native());
        if let Some(p) = first {
            assert_eq!(p % 64, 0, "{l}: aligned");
        }
        let held = pool.held_bytes();
        assert_eq!(held, 4 * MIB, "{l}: grew by the initial size once");
        pool.deallocate(a);
        let again = pool.allocate(1000, 64).unwrap();
        assert_eq!(
            address(again.native()),
            first,
            "{l}: the freed block is reused"
        );
        pool.deallocate(again);
        // Coalescing: three neighbours freed make one range that fits their sum.
        let blocks: Vec<_> = (0..3).map(|_| pool.allocate(MIB, 64).unwrap()).collect();
        for b in blocks {
            pool.deallocate(b);
        }
        let big = pool.allocate(3 * MIB, 64).unwrap();
        assert_eq!(pool.held_bytes(), held, "{l}: coalesced, no growth");
        // Growth beyond the first chunk.
        let more = pool.allocate(3 * MIB, 64).unwrap();
        assert_eq!(pool.held_bytes(), 8 * MIB, "{l}: grew");
        // The maximum: an error, not a crash, and nothing changes.
        let err = pool.allocate(12 * MIB, 64).unwrap_err().to_string();
        assert!(
            err.contains("maximum") && err.contains(&l.to_string()),
            "{err}"
        );
        assert_eq!(pool.held_bytes(), 8 * MIB);
        // Release gives wholly free chunks back.
        pool.deallocate(big);
        pool.deallocate(more);
        assert_eq!(pool.release(), 8 * MIB);
        assert_eq!(pool.held_bytes(), 0);
    }
}

#[test]
fn pooled_memory_holds_data_and_buffers_use_the_default_resource() {
    let _serial = common::serial();
    for l in poolable() {
        let pool: Arc<dyn MemoryResource> =
            Arc::new(Pool::new(resource::upstream(l).unwrap(), 2 * MIB, 64 * MIB));
        let stats = Arc::new(Statistics::new(pool));
        let previous = resource::set_default(l, stats.clone());
        {
            // Neighbouring blocks of one chunk keep their own data.
            let a = Buffer::from_slice(l, &common::pattern_f32(5000, 1.0)).unwrap();
            let b = Buffer::from_slice(l, &common::pattern_f32(7000, 2.0)).unwrap();
            assert_eq!(a.to_vec().unwrap(), common::pattern_f32(5000, 1.0), "{l}");
            assert_eq!(b.to_vec().unwrap(), common::pattern_f32(7000, 2.0), "{l}");
            assert_eq!(
                stats.totals().current_count,
                2,
                "{l}: both buffers came from the pool"
            );
            let c = b.to_location(Location::Host).unwrap();
            assert_eq!(c.to_vec().unwrap(), common::pattern_f32(7000, 2.0));
            // Memory from the resource, written and read at an offset.
            let m =
                Memory::from_resource(&(stats.clone() as Arc<dyn MemoryResource>), 4096).unwrap();
            m.write(100, &[7u8; 50]).unwrap();
            let mut back = [0u8; 50];
            m.read(100, &mut back).unwrap();
            assert_eq!(back, [7u8; 50]);
        }
        assert_eq!(stats.totals().current_bytes, 0, "{l}: everything came back");
        resource::set_default(l, previous);
    }
}

#[test]
fn webgpu_pools_say_they_are_not_supported_yet() {
    let _serial = common::serial();
    let Some(gpu) = locus::available()
        .into_iter()
        .find(|l| l.technology() == locus::Technology::WebGpu)
    else {
        return;
    };
    let pool = Pool::new(resource::upstream(gpu).unwrap(), MIB, 4 * MIB);
    let err = pool.allocate(100, 64).unwrap_err().to_string();
    assert!(err.contains("sub-allocation is not supported"), "{err}");
    assert_eq!(
        pool.release(),
        MIB,
        "the chunk taken for the attempt is given back"
    );
}

#[test]
fn limiting_statistics_and_tracking() {
    let _serial = common::serial();
    for l in locus::available() {
        let up = resource::upstream(l).unwrap();
        let limited = Limiting::new(up.clone(), 10_000);
        let a = limited.allocate(6000, 64).unwrap();
        let err = limited.allocate(6000, 64).unwrap_err().to_string();
        assert!(err.contains("budget") && err.contains("10000"), "{err}");
        assert_eq!(limited.used(), 6000);
        limited.deallocate(a);
        assert_eq!(limited.used(), 0);
        // Statistics against a model over a sequence of operations.
        let stats = Statistics::new(up.clone());
        let mut live = Vec::new();
        let (mut cur, mut peak, mut total) = (0usize, 0usize, 0usize);
        for i in 0..40usize {
            if i % 3 == 2 {
                if let Some(b) = live.pop() {
                    let b: locus::resource::Block = b;
                    cur -= b.bytes();
                    stats.deallocate(b);
                }
            } else {
                let n = 128 * (i + 1);
                live.push(stats.allocate(n, 64).unwrap());
                cur += n;
                total += n;
                peak = peak.max(cur);
            }
            let t = stats.totals();
            assert_eq!(
                (t.current_bytes, t.peak_bytes, t.total_bytes),
                (cur, peak, total),
                "{l} step {i}"
            );
        }
        for b in live {
            stats.deallocate(b);
        }
        assert_eq!(stats.totals().current_bytes, 0);
        // Tracking: an injected leak is reported.
        let tracking = Arc::new(Tracking::new(up));
        let dynamic: Arc<dyn MemoryResource> = tracking.clone();
        let kept = Memory::from_resource(&dynamic, 256).unwrap();
        let leaked = Memory::from_resource(&dynamic, 512).unwrap();
        drop(kept);
        std::mem::forget(leaked);
        let leaks = tracking.leaks();
        assert_eq!(leaks.len(), 1, "{l}");
        assert_eq!(leaks[0].0, 512);
    }
}

#[test]
fn threads_share_one_pool_and_balance_to_zero() {
    let _serial = common::serial();
    let pool: Arc<dyn MemoryResource> = Arc::new(Pool::new(
        resource::upstream(Location::Host).unwrap(),
        MIB,
        256 * MIB,
    ));
    let stats = Arc::new(Statistics::new(pool));
    std::thread::scope(|s| {
        for t in 0..4usize {
            let stats = stats.clone();
            s.spawn(move || {
                let mut held = Vec::new();
                for i in 0..500usize {
                    if i % 4 == 3 || held.len() > 20 {
                        if let Some(b) = held.pop() {
                            stats.deallocate(b);
                        }
                    } else {
                        held.push(stats.allocate(64 * (1 + (i * 7 + t) % 50), 64).unwrap());
                    }
                }
                for b in held {
                    stats.deallocate(b);
                }
            });
        }
    });
    let t = stats.totals();
    assert_eq!((t.current_bytes, t.current_count), (0, 0));
    assert!(t.total_count > 1000);
}
