//! A user's own stream adopted (issue 41, item 2), on the strict simulated driver: the
//! user's kernel on their stream, not waited for, comes before locus's copy on the
//! adopted queue, and locus's copy comes before the user's next kernel there, both
//! through events on the device (the simulator runs a stream only when something waits
//! for it, and another stream's work only through `cuStreamWaitEvent`).

use super::simulated::Strict;
use super::*;
use crate::core::native_queue::NativeQueue;
use crate::runtime::queue::Queue;

fn device(api: &Arc<Strict>, ordinal: u32) -> Arc<dyn Device> {
    Arc::new(GpuDevice::new(
        Arc::clone(api),
        ordinal,
        GpuFacts {
            name: format!("sim {ordinal}"),
            memory_bytes: 1 << 30,
            concurrent_managed_access: true,
            stream_ordered_pools: true,
            pageable_memory_access: false,
            version: "sim".into(),
            pci: None,
            notes: vec![],
        },
    ))
}

fn pointer(memory: &Memory) -> u64 {
    Strict::unpack(memory.native())
        .expect("simulated CUDA memory")
        .0
}

#[test]
fn an_adopted_stream_orders_both_ways() {
    let api = Arc::new(Strict::new(2, vec![], 256 << 20, vec![]));
    let d = device(&api, 0);
    api.activate(0).unwrap();
    let stream = api.create_stream().unwrap();
    let foreign = d
        .adopt_queue(&NativeQueue::Cuda { stream, ordinal: 0 })
        .unwrap();
    let adopted = Queue::adopting(d.location(), foreign);
    let n = 4096;
    let a = Arc::new(Memory::on(&d, n).unwrap());
    let b = Arc::new(Memory::on(&d, n).unwrap());
    a.fill(0..n, &[0]).unwrap();

    // The user's kernel writes `a` on their stream; nobody waits for it.
    let pa = pointer(&a);
    api.enqueue_user(
        stream,
        Box::new(move || {
            // SAFETY: simulated device memory of `n` bytes, alive until the stream ran.
            unsafe { std::ptr::write_bytes(pa as *mut u8, 7, n) }
        }),
    )
    .unwrap();
    a.copy_to_async_on(adopted.queue(), 0, &b, 0, n, &[])
        .unwrap()
        .wait()
        .unwrap();
    let mut got = vec![0u8; n];
    b.read(0, &mut got).unwrap();
    assert!(
        got.iter().all(|&x| x == 7),
        "locus's copy ran before the user's kernel on the adopted stream"
    );

    // locus writes `a` on the adopted queue (not waited for); the user's next kernel on
    // their stream reads it, and the user synchronises their stream.
    b.fill(0..n, &[9]).unwrap();
    let _ = b
        .copy_to_async_on(adopted.queue(), 0, &a, 0, n, &[])
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let theirs = Arc::clone(&seen);
    api.enqueue_user(
        stream,
        Box::new(move || {
            // SAFETY: as above.
            let bytes = unsafe { std::slice::from_raw_parts(pa as *const u8, n) };
            *theirs.lock().unwrap() = bytes.to_vec();
        }),
    )
    .unwrap();
    api.activate(0).unwrap();
    // SAFETY: the user's live stream of the current device.
    unsafe { api.synchronize_stream(stream) }.unwrap();
    assert!(
        seen.lock().unwrap().iter().all(|&x| x == 9),
        "the user's kernel ran before locus's copy on their stream"
    );
    adopted.synchronize().unwrap();
    assert!(api.violations().is_empty(), "{:?}", api.violations());
}

#[test]
fn streams_of_other_devices_and_dead_handles_are_refused() {
    let api = Arc::new(Strict::new(2, vec![], 256 << 20, vec![]));
    let (d0, d1) = (device(&api, 0), device(&api, 1));
    api.activate(1).unwrap();
    let theirs = api.create_stream().unwrap();
    let err = d0
        .adopt_queue(&NativeQueue::Cuda {
            stream: theirs,
            ordinal: 1,
        })
        .err()
        .expect("a stream of device 1 at device 0")
        .to_string();
    assert!(
        err.contains("another device") && err.contains("cuda:1"),
        "{err}"
    );
    // Claimed to be device 0's, but it is device 1's: the driver refuses the event.
    let err = d0
        .adopt_queue(&NativeQueue::Cuda {
            stream: theirs,
            ordinal: 0,
        })
        .err()
        .expect("device 1's stream named as device 0's")
        .to_string();
    assert!(
        err.contains("cannot adopt") && err.contains("INVALID_HANDLE"),
        "{err}"
    );
    let err = d1
        .adopt_queue(&NativeQueue::OpenCl(std::ptr::null_mut()))
        .err()
        .expect("an OpenCL queue at a CUDA location")
        .to_string();
    assert!(err.contains("cannot adopt OpenCL command queue"), "{err}");
    assert!(d1
        .adopt_queue(&NativeQueue::Cuda {
            stream: theirs,
            ordinal: 1
        })
        .is_ok());
}
