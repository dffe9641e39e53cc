//! GpuDevice over CudaApi's real call layer on the simulated driver, for the calls
//! beyond plain copies (issue 61, item 2): batches (and registered memory in them, item
//! 7), registration, IPC between two simulated processes, pointer attributes, managed
//! memory and advice, modules and launches, the driver's device-wide synchronisation.
//! The driver's rules are the simulator's (`simulated/`, `cuda_hip/sim_model/`).

use std::sync::Arc;

use super::simulated::SimCuda;
use super::*;
use crate::backends::cuda_hip::{sim_model, GpuDevice, GpuMemory};
use crate::core::batch_copy::DeviceCopy;
use crate::core::device::Device;
use crate::core::launch::LaunchSpec;

type Sim = (SimCuda, Arc<CudaApi>, Arc<GpuDevice<CudaApi>>);

/// A CUDA device of 64 MiB over `driver`, opened by discovery's own path.
fn device_on(driver: SimCuda) -> Sim {
    let api = Arc::new(CudaApi::simulated(Box::new(driver.clone())));
    let facts = sim_model::facts("simulated CUDA device", 64 << 20);
    let gpu = Arc::new(GpuDevice::new(Arc::clone(&api), 0, facts));
    (driver, api, gpu)
}

fn device() -> Sim {
    device_on(SimCuda::new(64 << 20))
}

fn no_violations(driver: &SimCuda) {
    let v = driver.0.violations();
    assert!(v.is_empty(), "the driver's rules broken: {v:?}");
}

fn count(driver: &SimCuda, call: &str) -> usize {
    driver.0.calls().iter().filter(|(c, _)| *c == call).count()
}

#[test]
fn a_batch_is_one_driver_call_on_locus_s_stream() {
    let (driver, _, gpu) = device();
    let n = 64 << 10;
    let a = gpu.allocate_kind(n, GpuMemory::Device).unwrap();
    let host: Vec<u8> = (0..n).map(|i| (i % 253) as u8).collect();
    let batches = gpu.copy_batches().expect("a CUDA 12.8 driver batches");
    let (first, second) = host.split_at(n / 2);
    let mut writes = [
        DeviceCopy::Write {
            dst: a.native(),
            offset: 0,
            src: first,
        },
        DeviceCopy::Write {
            dst: a.native(),
            offset: n / 2,
            src: second,
        },
    ];
    batches.copy_batch(&mut writes).unwrap();
    let mut back = vec![0u8; 4096];
    let mut reads = [DeviceCopy::Read {
        src: a.native(),
        offset: 100,
        dst: &mut back,
    }];
    batches.copy_batch(&mut reads).unwrap();
    assert_eq!(back, host[100..4196]);
    assert_eq!(count(&driver, "cuMemcpyBatchAsync"), 2);
    let stream = driver
        .0
        .calls()
        .into_iter()
        .find(|(c, _)| *c == "cuMemcpyBatchAsync");
    assert_eq!(
        stream,
        Some(("cuMemcpyBatchAsync", 0x7100)),
        "on locus's stream"
    );
    no_violations(&driver);
}

/// Issue 61, item 7: host memory registered in place is registered device-mapped, and
/// enters a batch by its host address only where the device says it reads it there
/// (`CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`); elsewhere its copy runs on its own. On
/// the code before, the registration was `PORTABLE` only (a violation) and the batch
/// named the host address where the device cannot (a sticky illegal address).
#[test]
fn registered_memory_enters_a_batch_only_where_the_device_reads_it_at_its_host_address() {
    for usable in [true, false] {
        let driver = SimCuda::new(64 << 20);
        driver.0.set_host_pointer_for_registered(usable);
        let (driver, _, gpu) = device_on(driver);
        let n = 8192;
        let dev = gpu.allocate_kind(2 * n, GpuMemory::Device).unwrap();
        let mut registered: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        let pageable = vec![3u8; n];
        let at = registered.as_mut_ptr();
        // SAFETY: `registered` outlives the registration, dropped below before it.
        let registration = unsafe {
            gpu.host_registration()
                .expect("a GPU registers host memory")
                .register_host(at, n)
        }
        .unwrap();
        assert_eq!(
            driver.0.registered(),
            vec![(at as usize, n, true)],
            "device-mapped"
        );
        let mut copies = [
            DeviceCopy::Write {
                dst: dev.native(),
                offset: 0,
                src: &registered,
            },
            DeviceCopy::Write {
                dst: dev.native(),
                offset: n,
                src: &pageable,
            },
        ];
        gpu.copy_batches()
            .unwrap()
            .copy_batch(&mut copies)
            .unwrap_or_else(|e| panic!("host pointer usable: {usable}: {e}"));
        let mut back = vec![0u8; 2 * n];
        Device::read(gpu.as_ref(), dev.native(), 0, &mut back).unwrap();
        assert!(back[..n] == registered[..] && back[n..] == pageable[..]);
        let alone = count(&driver, "cuMemcpyHtoDAsync") > 0;
        assert_eq!(
            alone, !usable,
            "the registered copy ran on its own: {alone}"
        );
        no_violations(&driver);
        drop(registration);
        assert!(driver.0.registered().is_empty(), "unregistered on drop");
    }
}

#[test]
fn a_failed_batch_names_the_copy_and_the_lost_context_fails_every_later_call() {
    let (driver, _, gpu) = device();
    let a = gpu.allocate_kind(8192, GpuMemory::Device).unwrap();
    let host = vec![1u8; 8192];
    driver.0.fail_batch_copy(1);
    let mut copies = [
        DeviceCopy::Write {
            dst: a.native(),
            offset: 0,
            src: &host[..4096],
        },
        DeviceCopy::Write {
            dst: a.native(),
            offset: 4096,
            src: &host[4096..],
        },
    ];
    let e = gpu
        .copy_batches()
        .unwrap()
        .copy_batch(&mut copies)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cuda:0") && e.contains("copy 1 of the batch") && e.contains("ILLEGAL_ADDRESS"),
        "{e}"
    );
    let mut back = [0u8; 16];
    let e = Device::read(gpu.as_ref(), a.native(), 0, &mut back)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ILLEGAL_ADDRESS"), "sticky: {e}");
}

#[test]
fn a_second_registration_of_a_range_is_the_drivers_error_and_leaves_one() {
    let (driver, _, gpu) = device();
    let mut host = vec![0u8; 4096];
    let registration = gpu.host_registration().unwrap();
    // SAFETY: `host` outlives both registrations, dropped below before it.
    let first = unsafe { registration.register_host(host.as_mut_ptr(), 4096) }.unwrap();
    // SAFETY: as above (refused).
    let second = unsafe { registration.register_host(host.as_mut_ptr().wrapping_add(100), 16) };
    let Err(e) = second else {
        panic!("already registered")
    };
    let e = e.to_string();
    assert!(
        e.contains("cuda:0") && e.contains("cuMemHostRegister") && e.contains("ALREADY_REGISTERED"),
        "{e}"
    );
    assert_eq!(driver.0.registered().len(), 1);
    drop(first);
    assert!(driver.0.registered().is_empty());
}

/// Two simulated drivers are two processes: the maker's memory is the other's in place;
/// a handle opened twice is one mapping, closed twice; memory the maker frees while the
/// other has it open stays readable there until the last close.
#[test]
fn device_memory_is_shared_between_processes_through_ipc_handles() {
    let (maker_driver, _, maker) = device();
    let (other_driver, _, other) = device();
    let n = 2 << 20;
    let mine = maker.allocate_kind(n, GpuMemory::Device).unwrap();
    Device::write(maker.as_ref(), mine.native(), 0, &[7u8; 64]).unwrap();
    let ipc = maker.ipc_handles().expect("CUDA has IPC handles");
    let handle = ipc.ipc_export(mine.native()).unwrap();
    let other_ipc = other.ipc_handles().unwrap();
    // SAFETY: the maker's memory stays mapped until the closes below.
    let (a, b) = unsafe {
        (
            other_ipc.ipc_open(&handle).unwrap(),
            other_ipc.ipc_open(&handle).unwrap(),
        )
    };
    assert_eq!(a.address(), b.address(), "one mapping");
    assert_eq!(other_driver.0.ipc_opened(), vec![(a.address() as usize, 2)]);
    drop(mine); // freed by the maker while the other has it open
    let mut got = [0u8; 64];
    Device::read(other.as_ref(), &a, 0, &mut got).unwrap();
    assert_eq!(got, [7u8; 64], "the maker's bytes, in place");
    // SAFETY: opened above, used by nothing now.
    unsafe {
        other_ipc.ipc_close(&a);
        other_ipc.ipc_close(&b);
    }
    assert!(other_driver.0.ipc_opened().is_empty());
    // SAFETY: opened by nobody: the driver refuses it (nothing happens).
    unsafe { other_ipc.ipc_close(&a) };
    assert_eq!(count(&other_driver, "cuIpcCloseMemHandle"), 3);
    no_violations(&maker_driver);
}

#[test]
fn pointer_attributes_find_an_allocation_from_any_address_in_it() {
    let (_, api, gpu) = device();
    let memory = gpu.allocate_kind(4096, GpuMemory::Device).unwrap();
    let _current = api.enter(0).unwrap();
    assert_eq!(
        api.pointer_device(memory.native().address() + 100).unwrap(),
        0
    );
    let e = api.pointer_device(0x10).unwrap_err().to_string();
    assert!(
        e.contains("cuPointerGetAttribute") && e.contains("INVALID_VALUE"),
        "{e}"
    );
}

#[test]
fn advice_is_for_managed_memory_and_the_driver_refuses_it_elsewhere() {
    let (driver, api, gpu) = device();
    let managed = gpu.allocate_kind(4096, GpuMemory::Managed).unwrap();
    let device = gpu.allocate_kind(4096, GpuMemory::Device).unwrap();
    let _current = api.enter(0).unwrap();
    api.prefer_location(managed.native().address(), 4096, Some(0))
        .unwrap();
    let e = api
        .prefer_location(device.native().address(), 4096, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cuMemAdvise") && e.contains("INVALID_VALUE"),
        "{e}"
    );
    assert_eq!(count(&driver, "cuMemAdvise"), 2);
}

#[test]
fn freeing_device_memory_waits_for_the_whole_device() {
    let (driver, _, gpu) = device();
    drop(gpu.allocate_kind(4096, GpuMemory::Device).unwrap());
    drop(gpu.allocate_kind(4096, GpuMemory::Pinned).unwrap());
    assert_eq!(
        driver.0.device_wide_syncs(),
        vec!["cuMemFree", "cuMemFreeHost"]
    );
    no_violations(&driver);
}

/// A kernel compiled by the real NVRTC (a cubin for the device's sm_90) loads into the
/// simulated driver, its function is found, and a launch goes to locus's stream with
/// the sizes asked; PTX newer than the driver's ISA does not load.
#[test]
fn a_compiled_kernel_loads_and_launches_on_locus_s_stream() {
    // SAFETY: only tries to open the library.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        println!("SKIPPED: NVRTC (libnvrtc) not found");
        return;
    }
    let (driver, _, gpu) = device();
    let spec = LaunchSpec {
        source: "extern \"C\" __global__ void k() {}",
        entry: "k",
        workgroup: [256, 1, 1],
        global: [1000, 1],
        dims: 1,
    };
    crate::core::capability::Kernels::launch(gpu.as_ref(), &spec, &[]).unwrap();
    let launches = driver.0.launches();
    assert_eq!(launches.len(), 1);
    assert_eq!(
        (launches[0].name.as_str(), launches[0].stream),
        ("k", 0x7100)
    );
    assert_eq!(launches[0].block, [256, 1, 1]);
    no_violations(&driver);
}

#[test]
fn ptx_of_a_newer_isa_than_the_drivers_does_not_load() {
    let driver = SimCuda::new(1 << 20);
    SimCuda::set_current_context(0x7000);
    let load = |ptx: &str| {
        let text = std::ffi::CString::new(ptx).unwrap();
        let mut module = std::ptr::null_mut();
        // SAFETY: NUL-terminated text and an out-pointer to a local.
        unsafe { driver.cuModuleLoadData(&mut module, text.as_ptr().cast()) }
    };
    let ok = load(".version 8.7\n.target sm_90\n.visible .entry k()\n{ ret; }");
    assert_eq!(ok, sys::CUresult::CUDA_SUCCESS);
    let newer = load(".version 9.0\n.target sm_90\n.visible .entry k()\n{ ret; }");
    assert_eq!(newer, sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    SimCuda::set_current_context(0);
}

/// At the process's end (issue 61, item 11, over the real call layer): the driver has
/// shut down, and freeing memory, ending a registration and dropping a stream event call
/// nothing (a call would be the simulator's violation).
#[test]
fn at_the_process_s_end_nothing_calls_the_driver_that_shut_down() {
    let (driver, api, gpu) = device();
    let memory = Device::allocate(gpu.as_ref(), 4096).unwrap();
    let mut host = vec![0u8; 1 << 16];
    // SAFETY: `host` outlives the registration (dropped below, before it).
    let registration = unsafe {
        gpu.host_registration()
            .unwrap()
            .register_host(host.as_mut_ptr(), host.len())
    }
    .unwrap();
    let work = {
        let _current = api.enter(0).unwrap();
        crate::backends::cuda_hip::work::StreamEvent::create(&api, 0, true).unwrap()
    };
    crate::core::shutdown::pretend_ending_on_this_thread(true);
    driver.0.deinitialise();
    drop(work);
    drop(registration);
    // SAFETY: allocated above, unused.
    unsafe { gpu.free(&memory, 4096) };
    crate::core::shutdown::pretend_ending_on_this_thread(false);
    no_violations(&driver);
    drop(host);
}

/// A cubin for another architecture than the device's does not load: the simulated 9.0
/// device refuses an sm_80 cubin, as the driver does (`CUDA_ERROR_NO_BINARY_FOR_GPU`).
#[test]
fn a_cubin_for_another_architecture_does_not_load() {
    let driver = SimCuda::new(1 << 20);
    SimCuda::set_current_context(0x7000);
    let load = |flags: u32| {
        let mut image = sim_model::elf_image(0x33, &["k"]);
        image[0x30..0x34].copy_from_slice(&flags.to_le_bytes());
        let mut module = std::ptr::null_mut();
        // SAFETY: a whole ELF object and an out-pointer to a local.
        unsafe { driver.cuModuleLoadData(&mut module, image.as_ptr().cast()) }
    };
    // e_flags as ptxas writes them: sm_90 is 0x5a055a, sm_80 0x500550.
    assert_eq!(load(0x5a_055a), sys::CUresult::CUDA_SUCCESS);
    assert_eq!(load(0x50_0550), sys::CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU);
    SimCuda::set_current_context(0);
}

/// The driver answers for memory whoever allocated it (`locus::lookup` past its index).
#[test]
fn the_driver_answers_for_every_kind_of_its_memory() {
    let (driver, _, gpu) = device();
    crate::backends::cuda_hip::pointer_query_checks::the_driver_names_every_kind_of_its_memory(
        &gpu,
    );
    no_violations(&driver);
}

/// A batch of small reads into pageable memory goes through pinned staging (issue 63):
/// one batch into the staging chunk per 8 MiB of reads, every read's bytes right. On
/// the code before, the driver's batch wrote each pageable destination itself (one
/// call here, one synchronous staged copy per read on a GPU).
#[test]
fn a_batch_of_small_reads_into_pageable_memory_goes_through_staging() {
    let (driver, _, gpu) = device();
    let (n, reads) = (4096, 2100); // 8.2 MiB: two chunks
    let a = gpu.allocate_kind(n * reads, GpuMemory::Device).unwrap();
    let pattern: Vec<u8> = (0..n * reads).map(|i| (i % 251) as u8).collect();
    gpu.write(a.native(), 0, &pattern).unwrap();
    let mut outs = vec![vec![0u8; n]; reads];
    let mut copies: Vec<DeviceCopy<'_>> = outs
        .iter_mut()
        .enumerate()
        .map(|(i, dst)| DeviceCopy::Read {
            src: a.native(),
            offset: i * n,
            dst,
        })
        .collect();
    let before = count(&driver, "cuMemcpyBatchAsync");
    gpu.copy_batches().unwrap().copy_batch(&mut copies).unwrap();
    drop(copies);
    assert_eq!(
        count(&driver, "cuMemcpyBatchAsync") - before,
        2,
        "one call per chunk of reads"
    );
    for (i, out) in outs.iter().enumerate() {
        assert_eq!(&out[..], &pattern[i * n..(i + 1) * n], "read {i}");
    }
    no_violations(&driver);
}
