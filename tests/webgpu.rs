//! WebGPU under concurrency and after failures: the staging engine's mapping waits are
//! never abandoned half-way, and one failed transfer does not poison the ones after it.
#![cfg(feature = "webgpu")]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use locus::backends::webgpu::WebGpuDevice;
use locus::{Buffer, LaunchArg, LaunchSpec, Location, Memory, Native};

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

const DOUBLE: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(64)
fn double(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&data)) { data[id.x] = data[id.x] * 2.0; }
}";

/// On unified memory (lavapipe, llvmpipe, integrated GPUs) a WebGPU buffer is the host's
/// memory: the host maps it in place (two views of one buffer share one mapping and one
/// address), a buffer's host access is served from the WebGPU memory itself (no replica,
/// nothing copied), what the host writes there a kernel reads, and a kernel on a buffer
/// whose host view is alive on another thread waits for the view to end (WebGPU runs no
/// GPU work on a mapped buffer) instead of failing: the view, read last thing before it
/// ends, still holds the values from before the kernel. Before, the host access was a
/// copy through a staging buffer and `Memory::map` failed with "not host-accessible".
#[test]
fn unified_memory_is_host_accessible_in_place() {
    let Some(at) = common::location("webgpu:0") else {
        return;
    };
    let n = 4099;
    let memory = Arc::new(Memory::new(at, n * 4).unwrap());
    if memory.host_access() == locus::HostAccess::None {
        eprintln!("{at}: not unified memory here (a discrete GPU); nothing to check");
        return;
    }
    let values: Vec<f32> = (0..n).map(|i| i as f32).collect();
    {
        let mut view = memory.map(0..n * 4, true).unwrap();
        view.as_mut_slice()
            .unwrap()
            .copy_from_slice(bytemuck::cast_slice(&values));
        let second = memory.map(8..16, false).unwrap();
        assert_eq!(
            second.as_ptr(),
            view.as_ptr().wrapping_add(8),
            "one mapping"
        );
        assert_eq!(
            second.as_slice(),
            bytemuck::cast_slice::<f32, u8>(&values[2..4])
        );
    }
    let device = locus::registry().device(at).unwrap();
    let spec = LaunchSpec {
        source: DOUBLE,
        entry: "double",
        workgroup: [64, 1, 1],
        global: [n, 1],
        dims: 1,
    };
    let held = memory.map(0..n * 4, false).unwrap();
    let seen = std::thread::scope(|s| {
        let holder = s.spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            let seen: Vec<f32> = bytemuck::cast_slice(held.as_slice()).to_vec();
            drop(held);
            seen
        });
        device
            .kernels()
            .expect("WebGPU launches kernels")
            .launch(&spec, &[LaunchArg::Memory(&memory)])
            .and_then(|done| done.wait())
            .expect("the kernel runs once the host view ends");
        holder.join().unwrap()
    });
    assert!(
        seen == values,
        "the kernel ran while the host view was alive"
    );
    let mut doubled = vec![0f32; n];
    memory
        .read(0, bytemuck::cast_slice_mut(&mut doubled))
        .unwrap();
    for (i, v) in doubled.iter().enumerate() {
        assert_eq!(*v, 2.0 * i as f32, "element {i}");
    }

    let buffer = Buffer::from_slice(at, &values).unwrap();
    let copies = buffer.stats().copies();
    let host = buffer.access(Location::Host).unwrap();
    assert!(host.is_in_place(), "{:?}", host.route());
    assert_eq!(host.memory_location(), at, "served from the WebGPU memory");
    assert_eq!(host.as_slice().unwrap(), values.as_slice());
    assert_eq!(buffer.stats().copies(), copies, "nothing copied");
}

/// A mapping WebGPU refuses (a destroyed buffer, adopted from the user's own wgpu code)
/// is that operation's error, every time, and leaves nothing behind: the buffer is not
/// left with a mapping pending, no stray validation error reaches the next operation,
/// and transfers to other buffers work. Unified memory only (elsewhere such a buffer is
/// not mappable at all). Before the mapping ran in a validation scope, wgpu's "has been
/// destroyed" stayed recorded and the next `synchronize` failed with it.
#[test]
fn a_refused_mapping_is_reported_and_leaves_nothing_behind() {
    let Some(at) = common::location("webgpu:0") else {
        return;
    };
    let device = locus::device_as::<WebGpuDevice>(at).unwrap();
    if Memory::new(at, 4).unwrap().host_access() == locus::HostAccess::None {
        return;
    }
    let foreign = device.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("foreign, mappable, destroyed"),
        size: 4096,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::MAP_READ
            | wgpu::BufferUsages::MAP_WRITE,
        mapped_at_creation: false,
    });
    foreign.destroy();
    let native = Native::WebGpu {
        buffer: Arc::new(foreign),
        offset: 0,
    };
    // SAFETY: the handle keeps the (destroyed) buffer object alive as long as the
    // memory; nothing is freed by locus.
    let memory = unsafe { Memory::adopt(at, native, 4096, |_| {}) }.unwrap();
    assert_eq!(memory.host_access(), locus::HostAccess::Mapped);
    for _ in 0..3 {
        let refused = memory.write(0, &[1u8; 4096]).unwrap_err().to_string();
        assert!(
            refused.contains("webgpu:0") && refused.contains("map"),
            "names the location and the mapping: {refused}"
        );
        locus::registry()
            .device(at)
            .unwrap()
            .synchronize()
            .expect("no error left behind for the next operation to report");
        for n in [4, 1000, (4 << 20) + 12] {
            round_trip(at, n, 5).expect("transfers after a refused mapping");
        }
    }
}

/// A device that transfers through staging buffers lends them in place
/// (`StagingViews::stage`): bytes copied out by the device are read where the buffer is mapped,
/// bytes written there reach the storage buffer once the view is finished, and other
/// data of the buffer is untouched. On unified memory (the host maps storage buffers
/// itself) and for ranges `copy_buffer_to_buffer` cannot take, nothing is lent.
#[test]
fn staging_buffers_are_lent_in_place_off_unified_memory() {
    use locus::core::device::StageWay;
    let Some(at) = common::location("webgpu:0") else {
        return;
    };
    let n = 1 << 16;
    let data: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
    let memory = Memory::new(at, n).unwrap();
    memory.write(0, &data).unwrap();
    let device = memory.device();
    let stage = |offset, len, way| {
        device
            .staging_views()
            .and_then(|views| views.stage(memory.native(), offset, len, way))
    };
    if device.host_access_default() != locus::HostAccess::None {
        assert!(stage(0, 64, StageWay::Out).is_none());
        return;
    }
    for (offset, len) in [(2, 64), (0, 6), (0, 0)] {
        assert!(
            stage(offset, len, StageWay::Out).is_none(),
            "lent for {len} bytes at {offset}"
        );
    }
    for round in 0..3 {
        let (offset, len) = (4096 * round + 8, 40_000);
        let view = stage(offset, len, StageWay::Out)
            .expect("a staging view")
            .unwrap();
        // SAFETY: the view's mapping holds `len` readable bytes until it is finished.
        let seen = unsafe { std::slice::from_raw_parts(view.host(), len) };
        assert_eq!(seen, &data[offset..offset + len], "round {round}");
        view.finish().unwrap();
    }
    let mut want = data.clone();
    for round in 0..3u8 {
        let (offset, len) = (1000 * round as usize + 12, 20_000);
        let view = stage(offset, len, StageWay::In)
            .expect("a staging view")
            .unwrap();
        // SAFETY: the view's mapping holds `len` writable bytes until it is finished.
        let put = unsafe { std::slice::from_raw_parts_mut(view.host(), len) };
        put.fill(0xA0 + round);
        want[offset..offset + len].fill(0xA0 + round);
        view.finish().unwrap();
    }
    // A view dropped unfinished copies nothing.
    let view = stage(0, 16, StageWay::In).expect("a staging view").unwrap();
    // SAFETY: as above.
    unsafe { std::slice::from_raw_parts_mut(view.host(), 16) }.fill(0xFF);
    drop(view);
    device.synchronize().unwrap();
    let mut back = vec![0u8; n];
    memory.read(0, &mut back).unwrap();
    assert!(back == want, "the storage buffer after three lent writes");
}

/// A 4096-byte storage buffer of `device` with both copy usages, as a native handle.
fn storage_of(device: &wgpu::Device, label: &str) -> Native {
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: 4096,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    Native::WebGpu {
        buffer: Arc::new(buffer),
        offset: 0,
    }
}

/// A wgpu buffer of the application's own device (another `wgpu::Device` on the same
/// adapter) is refused at adoption, naming the location; the code before took it, read
/// zeros from it, and the next write panicked inside wgpu-core.
#[test]
fn a_buffer_of_another_wgpu_device_is_refused_at_adoption() {
    let Some(at) = common::location("webgpu:0") else {
        println!("SKIPPED: no webgpu:0 here");
        return;
    };
    let device = locus::device_as::<WebGpuDevice>(at).unwrap();
    let (theirs, _their_queue) = pollster::block_on(
        device
            .adapter()
            .request_device(&wgpu::DeviceDescriptor::default()),
    )
    .unwrap();
    // SAFETY: a live buffer of 4096 bytes (of another device: refused before any use).
    let e = unsafe {
        Memory::adopt(
            at,
            storage_of(&theirs, "the application's own"),
            4096,
            |_| {},
        )
    }
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("webgpu:0") && e.contains("another wgpu device"),
        "{e}"
    );
    // locus's own device's buffers are still taken.
    let native = storage_of(device.device(), "on locus's device");
    // SAFETY: a live buffer of 4096 bytes of this location's device.
    let m = unsafe { Memory::adopt(at, native, 4096, |_| {}) }.unwrap();
    m.write(0, &[9u8; 4096]).unwrap();
    let mut got = vec![0u8; 4096];
    m.read(0, &mut got).unwrap();
    assert!(got.iter().all(|&b| b == 9));
}

/// The application's own wgpu error on locus's device (a copy into a buffer without
/// COPY_DST, submitted outside any error scope) is a warning naming the location, and
/// locus's next copies succeed, staged or mapped. The code before charged it to locus's
/// next staged copy (which failed with the application's error) and swallowed it when
/// the memory was mapped.
#[test]
fn an_application_s_wgpu_error_is_not_charged_to_locus() {
    let Some(at) = common::location("webgpu:0") else {
        println!("SKIPPED: no webgpu:0 here");
        return;
    };
    if std::env::var("LOCUS_WGPU_APP_ERROR_CHILD").is_ok() {
        let device = locus::device_as::<WebGpuDevice>(at).unwrap();
        let wgpu = device.device();
        let from = wgpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("the application's source"),
            size: 256,
            usage: wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let to = wgpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("the application's target, no COPY_DST"),
            size: 256,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let mut encoder = wgpu.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_buffer_to_buffer(&from, 0, &to, 0, 256);
        device.queue().submit([encoder.finish()]);
        for n in [4, 1000, 1 << 20] {
            round_trip(at, n, 3).expect("locus's copies after the application's error");
        }
        println!("locus copied after the application's error");
        return;
    }
    for mappable in ["0", "1"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "an_application_s_wgpu_error_is_not_charged_to_locus",
                "--nocapture",
            ])
            .env("LOCUS_WGPU_APP_ERROR_CHILD", "1")
            .env("LOCUS_WEBGPU_MAPPABLE", mappable)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && stdout.contains("locus copied after the application's error"),
            "LOCUS_WEBGPU_MAPPABLE={mappable}: {stdout}\n{stderr}"
        );
        assert!(
            stderr.contains("webgpu:0: a wgpu error outside any locus call"),
            "LOCUS_WEBGPU_MAPPABLE={mappable}: no warning: {stderr}"
        );
    }
}
