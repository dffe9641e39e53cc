//! A user's own SYCL queue adopted by locus (issue 41, item 2), written the way a user of
//! dpctl's C API writes it: their kernel writes a locus allocation on their queue, not
//! waited for; locus's copy on the adopted queue reads what it wrote. Then locus writes on that
//! queue and the user's own copy out, which they wait for, sees it.
#![cfg(feature = "sycl")]

mod common;

use std::sync::Arc;

use locus::backends::sycl::sys::{
    DPCTLKernelArgType_DPCTL_UINT32_T, DPCTLKernelArgType_DPCTL_VOID_PTR,
    DPCTLQueuePropertyType_DPCTL_IN_ORDER,
};
use locus::backends::sycl::SyclDevice;
use locus::{Location, Memory, Native, NativeQueue, Queue};

/// One work item that spins before filling `p`: the write lands long after the submit.
const SLOW_FILL: &str = "__kernel void slow_fill(__global uint *p, uint n, uint spins, \
    __global uint *sink) { uint acc = 1u; \
    for (uint i = 0; i < spins; i++) acc = acc * 1664525u + 1013904223u; \
    sink[0] = acc; for (uint i = 0; i < n; i++) p[i] = i * 3u + 1u; }\0";

fn usm_of(memory: &Memory) -> *mut u8 {
    let Native::Sycl { ptr, .. } = memory.native() else {
        panic!("{}: SYCL memory", memory.location());
    };
    *ptr
}

fn both_ways(at: Location) {
    let device = locus::device_as::<SyclDevice>(at).unwrap();
    let api = device.api();
    // The user's own in-order queue of the device (dpctl's default context: locus's).
    // SAFETY: locus's live device reference; the queue is deleted below.
    let queue = unsafe {
        api.DPCTLQueue_CreateForDevice(
            device.device_ref(),
            None,
            DPCTLQueuePropertyType_DPCTL_IN_ORDER as i32,
        )
    };
    assert!(!queue.is_null());
    // SAFETY: the user's live queue.
    let adopted = unsafe { Queue::from_native(at, NativeQueue::Sycl(queue.cast())) }.unwrap();

    let n = 1usize << 20;
    let usm = Arc::new(Memory::new(at, n).unwrap());
    usm.fill(0..n, &[0]).unwrap();
    let sink = Memory::new(at, 4).unwrap();
    // The user's kernel, not waited for.
    // SAFETY: locus's live context and device; NUL-terminated source and name; the
    // arguments match the kernel's parameters and the USM outlives it (the queue is
    // waited for below); the bundle, kernel and event are deleted by the user.
    unsafe {
        let bundle = api.DPCTLKernelBundle_CreateFromOCLSource(
            device.context(),
            device.device_ref(),
            SLOW_FILL.as_ptr().cast(),
            c"".as_ptr(),
        );
        assert!(!bundle.is_null());
        let kernel = api.DPCTLKernelBundle_GetKernel(bundle, c"slow_fill".as_ptr());
        assert!(!kernel.is_null());
        // dpctl takes a USM argument as the pointer itself, a scalar by address.
        let (mut count, mut spins) = ((n / 4) as u32, 20_000_000u32);
        let mut args: [*mut std::ffi::c_void; 4] = [
            usm_of(&usm).cast(),
            (&mut count as *mut u32).cast(),
            (&mut spins as *mut u32).cast(),
            usm_of(&sink).cast(),
        ];
        let types = [
            DPCTLKernelArgType_DPCTL_VOID_PTR,
            DPCTLKernelArgType_DPCTL_UINT32_T,
            DPCTLKernelArgType_DPCTL_UINT32_T,
            DPCTLKernelArgType_DPCTL_VOID_PTR,
        ];
        let range = [1u64, 1, 1];
        let event = api.DPCTLQueue_SubmitRange(
            kernel,
            queue,
            args.as_mut_ptr(),
            types.as_ptr(),
            4,
            range.as_ptr(),
            1,
            std::ptr::null(),
            0,
        );
        assert!(!event.is_null());
        api.DPCTLEvent_Delete(event);
        api.DPCTLKernel_Delete(kernel);
        api.DPCTLKernelBundle_Delete(bundle);
    }
    let data: Vec<u8> = (0..(n / 4) as u32)
        .flat_map(|i| (i * 3 + 1).to_ne_bytes())
        .collect();
    let host = Arc::new(Memory::new(Location::Host, n).unwrap());
    usm.copy_to_async_on(adopted.queue(), 0, &host, 0, n, &[])
        .unwrap()
        .wait()
        .unwrap();
    let mut got = vec![0u8; n];
    host.read(0, &mut got).unwrap();
    assert!(
        got == data,
        "{at}: locus's read came before the user's kernel on their queue"
    );

    // locus writes on the adopted queue, not waited for; the user copies out and waits.
    let fresh = common::pattern_u8(n, 11);
    let upload = Arc::new(Memory::new(Location::Host, n).unwrap());
    upload.write(0, &fresh).unwrap();
    let _ = upload
        .copy_to_async_on(adopted.queue(), 0, &usm, 0, n, &[])
        .unwrap();
    let mut back = vec![0u8; n];
    // SAFETY: `back` and the USM outlive the copy, which is waited for.
    unsafe {
        let event = api.DPCTLQueue_Memcpy(
            queue,
            back.as_mut_ptr().cast(),
            usm_of(&usm).cast(),
            n as u64,
        );
        api.DPCTLEvent_Wait(event);
        api.DPCTLEvent_Delete(event);
    }
    assert!(
        back == fresh,
        "{at}: the user's copy came before locus's write on their queue"
    );
    adopted.synchronize().unwrap();
    // SAFETY: the user's queue, deleted once; locus holds its own reference.
    unsafe { api.DPCTLQueue_Delete(queue) };
    drop(adopted);

    // Bad input: locus's own queue of this device at another technology's location.
    let ours = Queue::new()
        .native_at(at)
        .expect("a SYCL location hands out its queue");
    // SAFETY: locus's live queue.
    let err = unsafe { Queue::from_native(Location::Host, ours) }
        .unwrap_err()
        .to_string();
    assert!(err.contains("host: cannot adopt SYCL queue"), "{err}");
}

#[test]
fn an_adopted_sycl_queue_orders_both_ways() {
    let sycl = common::required_of(locus::Technology::Sycl);
    for at in sycl {
        both_ways(at);
    }
}
