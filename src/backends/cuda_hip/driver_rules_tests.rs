//! The driver rules a real GPU enforces, on the strict simulated driver: a current
//! context per thread, stream order, events tied to their context, launch sizes,
//! failures part-way, devices that refuse a context.

use super::simulated::Strict;
use super::tests::{devices, dynamic, empty_kernel, raw, Simulated, NONE};
use super::*;

/// A memset runs on locus's stream, after the work queued before it. On the old code
/// (`cuMemsetD8` / `hipMemset` on the NULL stream, which a non-blocking stream does not
/// wait for, and which the strict driver holds back) the buffer read back the bytes
/// from before the memset.
#[test]
fn memsets_are_ordered_on_the_stream() {
    let sim = devices(vec![], true);
    let d = dynamic(&sim[0]);
    let n = 4096;
    let a = Arc::new(Memory::on(&d, n).unwrap());
    let b = Arc::new(Memory::on(&d, n).unwrap());
    a.write(0, &[7u8; 4096]).unwrap();
    // A copy still queued, then a memset of its destination: the memset comes second.
    let copy = d
        .queued_copies()
        .unwrap()
        .copy_async(&a, &b, CopySpan::whole(n), &NONE)
        .unwrap()
        .unwrap();
    b.fill(0..n, &[0]).unwrap();
    let mut back = vec![1u8; n];
    b.read(0, &mut back).unwrap();
    assert!(back.iter().all(|&x| x == 0), "zeroed after the copy");
    drop(copy);
    assert!(sim[0].api.violations().is_empty());
}

/// `Device::synchronize` waits for its own device's stream, whichever device the thread
/// used last, and from a thread that never used one. On the old code it synchronised the
/// stream of the thread's current device (or failed with no context current).
#[test]
fn synchronize_makes_its_device_current_first() {
    let sim = devices(vec![], true);
    let (d0, d1) = (dynamic(&sim[0]), dynamic(&sim[1]));
    let n = 1024;
    let a = Arc::new(Memory::on(&d0, n).unwrap());
    let b = Arc::new(Memory::on(&d0, n).unwrap());
    a.write(0, &[3u8; 1024]).unwrap();
    let _copy = d0
        .queued_copies()
        .unwrap()
        .copy_async(&a, &b, CopySpan::whole(n), &NONE)
        .unwrap()
        .unwrap();
    assert!(raw(&b) != vec![3u8; n], "the copy is still queued");
    let _other = Memory::on(&d1, 16).unwrap(); // device 1 is current now
    d0.synchronize().unwrap();
    assert_eq!(raw(&b), vec![3u8; n], "device 0's stream ran");
    // From a fresh thread: no device current there.
    let c = Arc::new(Memory::on(&d0, n).unwrap());
    let _copy = d0
        .queued_copies()
        .unwrap()
        .copy_async(&a, &c, CopySpan::whole(n), &NONE)
        .unwrap()
        .unwrap();
    let d = Arc::clone(&d0);
    std::thread::spawn(move || {
        Strict::clear_current();
        d.synchronize()
    })
    .join()
    .unwrap()
    .unwrap();
    assert_eq!(raw(&c), vec![3u8; n]);
}

/// A stream event is polled, waited for and destroyed on threads that never made its
/// device current (the reaper, a user's thread). On the old code the strict driver
/// refused each call (no context): `wait` failed, and the destroy was a violation.
#[test]
fn events_are_used_with_their_device_current() {
    let sim = devices(vec![], true);
    let d = dynamic(&sim[0]);
    let n = 2048;
    let a = Arc::new(Memory::on(&d, n).unwrap());
    let b = Arc::new(Memory::on(&d, n).unwrap());
    a.write(0, &[5u8; 2048]).unwrap();
    let copy = d
        .queued_copies()
        .unwrap()
        .copy_async(&a, &b, CopySpan::whole(n), &NONE)
        .unwrap()
        .unwrap();
    let _other = Memory::on(&dynamic(&sim[1]), 16).unwrap(); // another device current here
    std::thread::spawn(move || {
        Strict::clear_current();
        // Polled (as the reaper does) until done, then waited for and destroyed.
        let mut polls = 0;
        while !copy.poll_complete() {
            polls += 1;
            assert!(polls < 10, "the event never completes");
        }
        copy.wait().unwrap();
    })
    .join()
    .unwrap();
    assert_eq!(raw(&b), vec![5u8; n]);
    assert!(
        sim[0].api.violations().is_empty(),
        "{:?}",
        sim[0].api.violations()
    );
}

/// A launch of zero work items launches nothing (drivers refuse a zero grid); on the old
/// code it reached `cuLaunchKernel` with a zero grid dimension and failed.
#[test]
fn a_zero_item_launch_launches_nothing() {
    let sim = devices(vec![], true);
    sim[0]
        .launch(&empty_kernel(0), &[])
        .unwrap()
        .wait()
        .unwrap();
    assert!(!sim[0].api.calls().contains(&"cuLaunchKernel"));
    sim[0]
        .launch(&empty_kernel(1000), &[])
        .unwrap()
        .wait()
        .unwrap();
    assert!(sim[0].api.calls().contains(&"cuLaunchKernel"));
}

/// A staged download that fails part-way (an event wait refused) leaves DMA queued into
/// the pinned chunks; they are not handed to the next transfer until that DMA is done.
/// On the old code the next staged upload refilled a chunk the failed download's DMA
/// then overwrote, and uploaded the wrong bytes.
#[test]
fn a_failed_staged_copy_does_not_lend_its_chunks_under_dma() {
    let sim = devices(vec![], true);
    let d = dynamic(&sim[0]);
    let n = 3 * STAGING;
    let a = Memory::on(&d, n).unwrap();
    let b = Memory::on(&d, n).unwrap();
    a.write(0, &vec![1u8; n]).unwrap();
    sim[0].api.fail_once("cuEventSynchronize");
    let mut out = vec![0u8; n];
    let refused = a.read(0, &mut out).unwrap_err().to_string();
    assert!(refused.contains("injected"), "{refused}");
    let data: Vec<u8> = (0..n).map(|i| (i % 253) as u8 + 2).collect();
    b.write(0, &data).unwrap();
    b.read(0, &mut out).unwrap();
    assert!(out == data, "the upload after a failed download is intact");
}

/// Any driver call failing once fails the operation with the call's name and leaves the
/// device usable: every call a write, a read, a fill and a device copy make.
#[test]
fn every_call_may_fail_once_and_the_device_stays_usable() {
    let calls = [
        "cuMemAlloc",
        "cuMemcpyHtoDAsync",
        "cuMemcpyDtoHAsync",
        "cuMemcpyDtoDAsync",
        "cuMemsetD8Async",
        "cuStreamSynchronize",
        "cuEventCreate",
        "cuEventRecord",
        "cuEventSynchronize",
    ];
    for call in calls {
        let sim = devices(vec![], true);
        let d = dynamic(&sim[0]);
        let n = 2 * STAGING + 100;
        let data: Vec<u8> = (0..n).map(|i| (i % 249) as u8).collect();
        let work = |d: &Arc<dyn Device>| -> Result<Vec<u8>> {
            let a = Arc::new(Memory::on(d, n)?);
            let b = Arc::new(Memory::on(d, n)?);
            a.fill(0..n, &[4])?;
            a.write(0, &data)?;
            if let Some(c) =
                d.queued_copies()
                    .unwrap()
                    .copy_async(&a, &b, CopySpan::whole(n), &NONE)?
            {
                c.wait()?;
            }
            let mut out = vec![0u8; n];
            b.read(0, &mut out)?;
            Ok(out)
        };
        sim[0].api.fail_once(call);
        match work(&d) {
            Err(e) => assert!(e.to_string().contains(call), "{call}: {e}"),
            Ok(out) => panic!(
                "{call}: the injected failure was not reported ({})",
                out.len()
            ),
        }
        assert!(work(&d).unwrap() == data, "{call}: usable afterwards");
        assert!(
            sim[0].api.violations().is_empty(),
            "{call}: {:?}",
            sim[0].api.violations()
        );
    }
}

/// What importers of foreign GPU memory use: the device that owns a pointer (asked of the
/// driver, not assumed to be device 0), locus's stream as DLPack's `stream=`, and a wait
/// for a producer's stream.
#[test]
fn importers_ask_the_pointer_s_device_and_wait_for_the_producer_s_stream() {
    let sim = devices(vec![], true);
    let (d0, d1) = (dynamic(&sim[0]), dynamic(&sim[1]));
    let on_1 = Memory::on(&d1, 64).unwrap();
    let (ptr, _) = Simulated::unpack(on_1.native()).unwrap();
    assert_eq!(sim[0].device_of_pointer(ptr + 8).unwrap(), 1);
    assert!(sim[0].device_of_pointer(1).is_err());
    assert_ne!(sim[0].consumer_stream(), sim[1].consumer_stream());
    // Work queued on device 0's stream is done once that stream is waited for as a
    // producer's stream (from a thread where device 1 is current).
    let a = Arc::new(Memory::on(&d0, 256).unwrap());
    let b = Arc::new(Memory::on(&d0, 256).unwrap());
    a.write(0, &[9u8; 256]).unwrap();
    let _copy = d0
        .queued_copies()
        .unwrap()
        .copy_async(&a, &b, CopySpan::whole(256), &NONE)
        .unwrap()
        .unwrap();
    let _current = Memory::on(&d1, 8).unwrap();
    let handle = sim[0].consumer_stream();
    // SAFETY: the simulated driver's handle of device 0's stream.
    unsafe { sim[0].synchronize_foreign_stream(handle) }.unwrap();
    assert_eq!(raw(&b), vec![9u8; 256]);
}

/// A device that refuses a context (exclusive-process mode, in use elsewhere) is skipped
/// with its reason and the others open under their own ordinals; on the old code one
/// such device made the whole backend unavailable.
#[test]
fn a_device_that_refuses_a_context_is_skipped_and_the_others_stay() {
    let api = Strict::new(3, vec![], 1 << 20, vec![1]);
    let (opened, skipped) = open_each("CUDA", 3, |i| {
        api.activate(i as u32).map_err(|e| e.to_string().into())
    })
    .unwrap();
    assert_eq!(opened.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 2]);
    assert_eq!(skipped.len(), 1);
    assert!(
        skipped[0].contains("CUDA device 1 skipped") && skipped[0].contains("exclusive-process"),
        "{skipped:?}"
    );
    let all_busy = Strict::new(2, vec![], 1 << 20, vec![0, 1]);
    let refused = open_each("CUDA", 2, |i| {
        all_busy
            .activate(i as u32)
            .map_err(|e| e.to_string().into())
    })
    .unwrap_err();
    assert!(
        refused.reason().contains("no CUDA device could be opened"),
        "{refused}"
    );
}
