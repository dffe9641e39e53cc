//! Copies in a batch on a CUDA device (issue 45, item 5): uploads, downloads and copies
//! within the device go to the driver in one `cuMemcpyBatchAsync` on locus's stream,
//! waited for once, byte for byte as the copies one by one; copies that depend on each
//! other are the driver's error, naming the device and the call.

use super::simulated::one_device as device;
use super::*;

#[test]
fn a_batch_is_one_driver_call_and_equals_the_copies_one_by_one() {
    let (api, gpu) = device();
    let n = 64 << 10;
    let a = gpu.allocate_kind(n, GpuMemory::Device).unwrap();
    let b = gpu.allocate_kind(n, GpuMemory::Device).unwrap();
    let host: Vec<u8> = (0..n).map(|i| (i % 253) as u8).collect();
    let mut back = vec![0u8; 4096];
    let before = api.calls().len();
    let mut copies = vec![
        DeviceCopy::Write {
            dst: a.native(),
            offset: 0,
            src: &host[..n / 2],
        },
        DeviceCopy::Write {
            dst: b.native(),
            offset: 100,
            src: &host[n / 2..n / 2 + 4096],
        },
    ];
    gpu.copy_batches()
        .expect("the simulated driver batches")
        .copy_batch(&mut copies)
        .unwrap();
    let mut copies = vec![
        DeviceCopy::Within {
            src: a.native(),
            src_offset: 10,
            dst: b.native(),
            dst_offset: 8192,
            len: 1000,
        },
        DeviceCopy::Read {
            src: b.native(),
            offset: 100,
            dst: &mut back,
        },
    ];
    gpu.copy_batches()
        .expect("the simulated driver batches")
        .copy_batch(&mut copies)
        .unwrap();
    let calls: Vec<&str> = api.calls()[before..].to_vec();
    assert_eq!(back, host[n / 2..n / 2 + 4096], "the downloaded bytes");
    let mut within = vec![0u8; 1000];
    Device::read(gpu.as_ref(), b.native(), 8192, &mut within).unwrap();
    assert_eq!(within, host[10..1010], "the copy within the device");
    assert_eq!(
        calls.iter().filter(|c| **c == "cuMemcpyBatchAsync").count(),
        2,
        "one driver call per batch: {calls:?}"
    );
    assert!(
        !calls
            .iter()
            .any(|c| c.starts_with("cuMemcpyHtoD") || c.starts_with("cuMemcpyDtoH")),
        "a batch's copies went one by one: {calls:?}"
    );
    assert!(api.violations().is_empty(), "{:?}", api.violations());
}

#[test]
fn copies_that_depend_on_each_other_are_the_drivers_error_naming_the_device() {
    let (_api, gpu) = device();
    let a = gpu.allocate_kind(8192, GpuMemory::Device).unwrap();
    let host = vec![1u8; 4096];
    let mut copies = vec![
        DeviceCopy::Write {
            dst: a.native(),
            offset: 0,
            src: &host,
        },
        DeviceCopy::Within {
            src: a.native(),
            src_offset: 0,
            dst: a.native(),
            dst_offset: 4096,
            len: 4096,
        },
    ];
    let e = gpu
        .copy_batches()
        .expect("the simulated driver batches")
        .copy_batch(&mut copies)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cuda:0") && e.contains("cuMemcpyBatchAsync"),
        "{e}"
    );
}

/// A copy the driver fails names itself (issue 61, item 6): `cuMemcpyBatchAsync`
/// reports the failing copy's index (`failIdx`), and the error names that copy by its
/// place in the caller's batch (empty copies, never handed to the driver, still
/// counted), its size and addresses. On the code before, the index was dropped and the
/// error named only the batch.
#[test]
fn a_copy_the_driver_fails_is_named_by_its_place_in_the_callers_batch() {
    let (api, gpu) = device();
    let a = gpu.allocate_kind(8192, GpuMemory::Device).unwrap();
    let host = vec![1u8; 4096];
    let mut back = vec![0u8; 1000];
    let mut copies = vec![
        DeviceCopy::Write {
            dst: a.native(),
            offset: 0,
            src: &host[..0],
        },
        DeviceCopy::Write {
            dst: a.native(),
            offset: 0,
            src: &host,
        },
        DeviceCopy::Read {
            src: a.native(),
            offset: 4096,
            dst: &mut back,
        },
    ];
    // The driver's second copy: the caller's third (the first is empty).
    api.fail_batch_copy(1);
    let e = gpu
        .copy_batches()
        .expect("the simulated driver batches")
        .copy_batch(&mut copies)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cuda:0")
            && e.contains("CUDA_ERROR_ILLEGAL_ADDRESS")
            && e.contains("copy 2 of the batch: 1000 bytes"),
        "{e}"
    );
}
