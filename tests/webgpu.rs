//! WebGPU under concurrency and after failures: the staging engine's mapping waits are
//! never abandoned half-way, and one failed transfer does not poison the ones after it.
#![cfg(feature = "webgpu")]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use locus::backends::webgpu::WebGpuDevice;
use locus::{Location, Memory, Native};

fn round_trip(at: Location, n: usize, seed: u32) -> locus::Result<()> {
    let data: Vec<u8> = (0..n).map(|i| (i as u32 ^ seed) as u8).collect();
    let memory = Memory::new(at, n)?;
    memory.write(0, &data)?;
    let mut out = vec![0u8; n];
    memory.read(0, &mut out)?;
    if out != data {
        return Err(locus::Error::Invalid(format!(
            "{n} bytes at {at} read back differently"
        )));
    }
    Ok(())
}

/// 16 threads writing and reading buffers of varied sizes at once, while four others
/// poll the device (as an application doing its own wgpu work does), so that a mapping's
/// callback often runs on a thread other than the one waiting for it. Before the staging
/// engine waited for its mappings properly, this failed with "the mapping never
/// completed", and every WebGPU operation after it failed too.
#[test]
fn sixteen_threads_write_and_read_at_once() {
    let Some(at) = common::location("webgpu:0") else {
        return;
    };
    let device = locus::device_as::<WebGpuDevice>(at).unwrap();
    let failures = AtomicUsize::new(0);
    let running = AtomicUsize::new(16);
    std::thread::scope(|s| {
        let (device, running) = (&device, &running);
        for _ in 0..4 {
            s.spawn(move || {
                while running.load(Ordering::Relaxed) > 0 {
                    let _ = device.device().poll(wgpu::PollType::Poll);
                }
            });
        }
        for t in 0..16u32 {
            let failures = &failures;
            s.spawn(move || {
                for k in 0..50u32 {
                    let n = ((k * 7919 + t * 104_729) % 70_000) as usize + 1;
                    if let Err(e) = round_trip(at, n, t) {
                        if failures.fetch_add(1, Ordering::Relaxed) < 3 {
                            eprintln!("thread {t}, transfer {k} ({n} bytes): {e}");
                        }
                    }
                }
                running.fetch_sub(1, Ordering::Relaxed);
            });
        }
    });
    assert_eq!(failures.into_inner(), 0, "transfers failed (see above)");
    round_trip(at, 1000, 7).expect("a single-threaded transfer afterwards");
}

/// A transfer the device refuses (into a foreign buffer without COPY_DST) fails with the
/// wgpu message, and the transfers after it work. Before, the failed submission stayed
/// recorded as the staging buffer's last use and every later upload failed waiting for
/// it ("Tried to wait using a submission index ... that has not been returned by a
/// successful submission").
#[test]
fn a_refused_transfer_does_not_poison_the_next_ones() {
    let Some(at) = common::location("webgpu:0") else {
        return;
    };
    let device = locus::device_as::<WebGpuDevice>(at).unwrap();
    let foreign = device.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("foreign, no COPY_DST"),
        size: 4096,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let native = Native::WebGpu {
        buffer: Arc::new(foreign),
        offset: 0,
    };
    // SAFETY: the buffer is a live allocation of 4096 bytes of this location's wgpu
    // device, kept alive by the handle until the memory is dropped.
    let memory = unsafe { Memory::adopt(at, native, 4096, |_| {}) }.unwrap();
    for _ in 0..3 {
        let refused = memory.write(0, &[1u8; 4096]).unwrap_err().to_string();
        assert!(
            refused.contains("webgpu:0") && refused.contains("COPY_DST"),
            "names the location and the missing usage: {refused}"
        );
        for n in [4, 1000, (4 << 20) + 12] {
            round_trip(at, n, 3).expect("transfers after a refused one");
        }
    }
}
