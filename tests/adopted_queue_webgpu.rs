//! locus's wgpu queue adopted (issue 41, item 2): WebGPU has one queue per device, so a
//! user's submissions (here `Queue::write_buffer` into a locus buffer, not waited for)
//! come before locus's copy on the adopted queue; a queue of another wgpu device is
//! refused with both named.
#![cfg(feature = "webgpu")]

mod common;

use std::sync::Arc;

use locus::backends::webgpu::WebGpuDevice;
use locus::{Location, Memory, Native, NativeQueue, Queue};

fn both_ways(at: Location) {
    let Some(NativeQueue::WebGpu(queue)) = Queue::new().native_at(at) else {
        panic!("{at}: a WebGPU location hands out its wgpu queue");
    };
    // SAFETY: a live wgpu queue (a safe handle).
    let adopted = unsafe { Queue::from_native(at, NativeQueue::WebGpu(queue.clone())) }.unwrap();
    let n = 1 << 20;
    let data = common::pattern_u8(n, 3);
    let memory = Arc::new(Memory::new(at, n).unwrap());
    let Native::WebGpu { buffer, offset, .. } = memory.native() else {
        panic!("{at}: WebGPU memory");
    };
    // The user's write, submitted with their next submission; no wait.
    queue.write_buffer(buffer, *offset, &data);
    queue.submit([]);
    let host = Arc::new(Memory::new(Location::Host, n).unwrap());
    memory
        .copy_to_async_on(adopted.queue(), 0, &host, 0, n, &[])
        .unwrap()
        .wait()
        .unwrap();
    let mut got = vec![0u8; n];
    host.read(0, &mut got).unwrap();
    assert!(
        got == data,
        "{at}: locus's read came before the user's write"
    );
    adopted.synchronize().unwrap();

    // A queue of another wgpu device (the user's own, on the same adapter).
    let device = locus::device_as::<WebGpuDevice>(at).unwrap();
    let (_theirs, their_queue) = pollster::block_on(
        device
            .adapter()
            .request_device(&wgpu::DeviceDescriptor::default()),
    )
    .unwrap();
    // SAFETY: a live wgpu queue.
    let err = unsafe { Queue::from_native(at, NativeQueue::WebGpu(their_queue)) }
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("{at}: cannot adopt a wgpu queue")) && err.contains("not the queue"),
        "{err}"
    );
}

#[test]
fn an_adopted_wgpu_queue_orders_the_user_s_writes_first() {
    let webgpu = common::required_of(locus::Technology::WebGpu);
    for at in webgpu {
        both_ways(at);
    }
}
