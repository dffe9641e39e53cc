//! CUDA rules that only a real driver enforces, checked on a real device (issue 48 items
//! 3, 7 and 8; issue 45 item 2): another library's context stays current across locus's
//! calls, memory a stream-ordered free gave back stays in the device's pool, locus's
//! copies never wait for another library's blocking stream, and host memory is used in
//! place exactly where the device reports pageable memory access.
//!
//! The other library is played by the driver API itself (through `cudarc`, the crate
//! locus's CUDA backend uses), as PyTorch or CuPy would call it. Without a CUDA device
//! each test prints SKIPPED (and fails where `LOCUS_REQUIRE` names `cuda`).

mod common;

use std::time::{Duration, Instant};

use cudarc::driver::{result, sys, CudaContext};
use locus::{Location, Memory, MemoryKind};

fn cuda() -> Option<(Location, i32)> {
    let at = common::location("cuda:0")?;
    let mut device = 0;
    // SAFETY: an out-pointer to a local; the driver is loaded (locus found the device).
    unsafe { sys::cuDeviceGet(&mut device, 0) }
        .result()
        .expect("cuDeviceGet");
    Some((at, device))
}

fn current() -> sys::CUcontext {
    result::ctx::get_current()
        .expect("cuCtxGetCurrent")
        .unwrap_or(std::ptr::null_mut())
}

/// Locus's everyday calls at `at`: an allocation, an upload, a copy, a download.
fn locus_work(at: Location) {
    let n = 1 << 20;
    let a = Memory::new(at, n).unwrap();
    let b = Memory::new(at, n).unwrap();
    a.write(0, &vec![7u8; n]).unwrap();
    a.copy_to(0, &b, 0, n).unwrap();
    let mut back = vec![0u8; n];
    b.read(0, &mut back).unwrap();
    assert!(back.iter().all(|&x| x == 7));
}

/// Discovery (locus's first call in this process) leaves the application's context
/// current: it makes each device's primary context current to create its stream, and
/// before the fix left the last one current, so the application's next allocation on
/// this thread landed on the last GPU (issue 61, item 1).
#[test]
fn discovery_leaves_the_applications_context_current() {
    // SAFETY: only checks whether the library can be opened (cudarc panics on a call
    // into a library that is missing).
    let present = unsafe { sys::is_culib_present() };
    let mut device = 0;
    // SAFETY: an out-pointer to a local, after cuInit.
    if !present
        || result::init().is_err()
        || unsafe { sys::cuDeviceGet(&mut device, 0) }
            .result()
            .is_err()
    {
        let _ = common::location("cuda:0"); // SKIPPED, or a failure where required
        return;
    }
    let mut theirs: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: an out-pointer to a local; a valid device. Current on this thread until
    // destroyed below.
    unsafe { sys::cuCtxCreate_v2(&mut theirs, 0, device) }
        .result()
        .expect("cuCtxCreate");
    let found = common::location("cuda:0");
    let after = current();
    // SAFETY: created above; nothing of ours is queued in it.
    unsafe { sys::cuCtxDestroy_v2(theirs) }
        .result()
        .expect("cuCtxDestroy");
    if found.is_none() {
        return;
    }
    assert_eq!(after, theirs, "discovery left a context of locus's current");
}

#[test]
fn another_librarys_context_stays_current_across_locus_calls() {
    let Some((at, device)) = cuda() else { return };
    // The other library's own context (not the primary one locus shares), current on
    // this thread as that library left it.
    let mut theirs: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: an out-pointer to a local; `device` is a valid device. The new context is
    // current on this thread until destroyed below.
    unsafe { sys::cuCtxCreate_v2(&mut theirs, 0, device) }
        .result()
        .expect("cuCtxCreate");
    locus_work(at);
    let after = current();
    // SAFETY: created above; no work of ours is queued in it.
    unsafe { sys::cuCtxDestroy_v2(theirs) }
        .result()
        .expect("cuCtxDestroy");
    assert_eq!(
        after, theirs,
        "locus left its own context current on a thread where another library had set its own"
    );

    // A thread with no context current is left with none.
    std::thread::spawn(move || {
        locus_work(at);
        assert!(
            current().is_null(),
            "locus left a context current on a thread that had none"
        );
    })
    .join()
    .unwrap();
}

#[test]
fn pool_memory_freed_in_stream_order_stays_in_the_pool() {
    let Some((at, device)) = cuda() else { return };
    let gpu = locus::registry().device(at).unwrap().clone();
    if !gpu.memory_kinds().contains(&MemoryKind::StreamOrdered) {
        eprintln!("SKIPPED: {at} offers no stream-ordered memory (no memory pools)");
        return;
    }
    let bytes = 64 << 20;
    let m = Memory::on_kind(&gpu, MemoryKind::StreamOrdered, bytes).unwrap();
    m.write(0, &vec![1u8; 4096]).unwrap();
    let context = CudaContext::new(0).unwrap();
    context.bind_to_thread().unwrap();
    // The pool the memory came from: locus's own (it leaves the device's default pool,
    // which CuPy's and PyTorch's async allocators share, alone).
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut default_pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: out-pointers to locals; the memory is live; MEMPOOL_HANDLE is a CUmemoryPool.
    unsafe {
        sys::cuPointerGetAttribute(
            (&mut pool as *mut sys::CUmemoryPool).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
            m.native().address(),
        )
        .result()
        .expect("cuPointerGetAttribute(MEMPOOL_HANDLE)");
        sys::cuDeviceGetDefaultMemPool(&mut default_pool, device)
            .result()
            .expect("cuDeviceGetDefaultMemPool");
    }
    assert!(
        !pool.is_null() && pool != default_pool,
        "stream-ordered memory from the default pool"
    );
    drop(m);
    gpu.synchronize().unwrap();
    let mut reserved: u64 = 0;
    // SAFETY: a live pool (locus's, kept for the process); the attribute is a u64.
    unsafe {
        sys::cuMemPoolGetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
            (&mut reserved as *mut u64).cast(),
        )
        .result()
        .expect("cuMemPoolGetAttribute");
    }
    println!("{at}: locus's pool keeps {reserved} bytes after the free and a sync");
    assert!(
        reserved >= bytes as u64,
        "the pool returned freed memory to the OS at the sync (release threshold 0): \
         {reserved} bytes reserved"
    );
}

/// Another library's kernel that spins, on a blocking stream of its own (as PyTorch's
/// default stream is).
struct Spin {
    function: cudarc::driver::CudaFunction,
    stream: sys::CUstream,
}

impl Spin {
    fn new(context: &std::sync::Arc<CudaContext>) -> Spin {
        let ptx = cudarc::nvrtc::compile_ptx(
            "extern \"C\" __global__ void spin(long long cycles) {\n\
             long long t = clock64(); while (clock64() - t < cycles) {} }",
        )
        .expect("NVRTC compiles the spin kernel");
        let function = context
            .load_module(ptx)
            .unwrap()
            .load_function("spin")
            .unwrap();
        // Flags 0: a blocking stream.
        let stream = result::stream::create(result::stream::StreamKind::Default).unwrap();
        Spin { function, stream }
    }

    /// Queues about `ms` milliseconds of spinning (at 2 GHz; longer on a slower clock).
    fn queue(&self, ms: u64) {
        let mut cycles: i64 = (ms * 2_000_000) as i64;
        let mut args = [(&mut cycles as *mut i64).cast::<std::ffi::c_void>()];
        // SAFETY: `spin(long long)` takes one argument, given by pointer; one thread.
        unsafe {
            sys::cuLaunchKernel(
                self.function.cu_function(),
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                self.stream,
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .expect("cuLaunchKernel");
    }

    fn running(&self) -> bool {
        // SAFETY: a stream created in `new`, not yet destroyed.
        let r = unsafe { sys::cuStreamQuery(self.stream) };
        r == sys::CUresult::CUDA_ERROR_NOT_READY
    }

    fn finish(&self) {
        // SAFETY: as above.
        unsafe { result::stream::synchronize(self.stream) }.unwrap();
    }
}

#[test]
fn locus_copies_do_not_wait_for_another_librarys_blocking_stream() {
    let Some((at, _)) = cuda() else { return };
    let context = CudaContext::new(0).unwrap();
    context.bind_to_thread().unwrap();
    let spin = Spin::new(&context);
    let n = 4 << 20; // above the 64 KiB of the small-copy path
    let dev = Memory::new(at, n).unwrap();
    let mut bytes = vec![3u8; n];

    // The control: the driver's synchronous copy (legacy NULL stream) waits for the
    // blocking stream's kernel, so this test can tell the two apart on this machine.
    spin.queue(1500);
    let locus::Native::Cuda { ptr, .. } = *dev.native() else {
        unreachable!()
    };
    context.bind_to_thread().unwrap();
    // SAFETY: `ptr` is a device allocation of `n` bytes; `bytes` holds `n`.
    unsafe { result::memcpy_htod_sync(ptr, &bytes) }.unwrap();
    let control_waited = !spin.running();
    spin.finish();

    for what in ["upload", "download"] {
        spin.queue(1500);
        let t = Instant::now();
        match what {
            "upload" => dev.write(0, &bytes).unwrap(),
            _ => dev.read(0, &mut bytes).unwrap(),
        }
        let still_running = spin.running();
        let took = t.elapsed();
        spin.finish();
        println!(
            "{at}: a {what} of {n} bytes took {took:?} beside another library's running kernel \
             (the kernel still running after it: {still_running}; the legacy call waited: \
             {control_waited})"
        );
        assert!(
            still_running || took < Duration::from_millis(500),
            "locus's {what} waited for another library's blocking stream (legacy NULL stream)"
        );
    }
    // SAFETY: created by Spin::new; its work is done.
    unsafe { result::stream::destroy(spin.stream) }.unwrap();
}

#[test]
fn host_memory_is_used_in_place_exactly_where_the_device_reads_pageable_memory() {
    let Some((at, device)) = cuda() else { return };
    let mut pageable = 0;
    // SAFETY: an out-pointer to a local; a valid device and attribute.
    unsafe {
        sys::cuDeviceGetAttribute(
            &mut pageable,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
            device,
        )
    }
    .result()
    .unwrap();
    let host = Memory::new(Location::Host, 4096).unwrap();
    let (in_place, why) = locus::access::memory_accessibility(&host, at);
    println!(
        "{at}: CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = {pageable}; host memory in place \
         from {at}: {in_place} ({why})"
    );
    assert_eq!(in_place, pageable == 1);
}

#[test]
fn sam_headroom_follows_the_devices_answer() {
    use locus::resource::{MemoryResource, SamHeadroom};
    let Some((at, _)) = cuda() else { return };
    let host = Memory::new(Location::Host, 64).unwrap();
    let (in_place, _) = locus::access::memory_accessibility(&host, at);
    match SamHeadroom::new(at, 1 << 30) {
        Ok(r) => {
            assert!(
                in_place,
                "{at}: sam_headroom made where host memory is not in place"
            );
            let block = r.allocate(64 << 20, 256).unwrap();
            println!("{at}: {} gave {block:?}", r.describe());
            r.deallocate(block);
        }
        Err(e) => {
            println!("{at}: sam_headroom refused: {e}");
            assert!(
                !in_place,
                "{at}: sam_headroom refused where host memory is in place: {e}"
            );
            assert!(e.to_string().contains(&at.to_string()), "{e}");
        }
    }
}

#[test]
fn registered_host_memory_is_page_locked_until_it_is_dropped() {
    let Some((at, _)) = cuda() else { return };
    let n = 64 << 20;
    let host = Memory::from_vec_registered(vec![9u8; n]).unwrap();
    let locus::Native::Host { ptr } = *host.native() else {
        unreachable!()
    };
    let context = CudaContext::new(0).unwrap();
    context.bind_to_thread().unwrap();
    let kind = |p: *mut u8| {
        let mut kind: u32 = 0;
        // SAFETY: the attribute is a u32 written to a local; any address may be asked.
        unsafe {
            sys::cuPointerGetAttribute(
                (&mut kind as *mut u32).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                p as u64,
            )
        }
        .result()
        .map(|()| kind)
    };
    assert_eq!(
        kind(ptr).expect("the driver knows registered memory"),
        sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32
    );
    let dev = Memory::new(at, n).unwrap();
    host.copy_to(0, &dev, 0, n).unwrap();
    let mut back = vec![0u8; n];
    dev.read(0, &mut back).unwrap();
    assert!(back.iter().all(|&b| b == 9));
    drop(host);
    let fresh = vec![1u8; n];
    println!(
        "{at}: registered memory is CU_MEMORYTYPE_HOST; pageable memory asks: {:?}",
        kind(fresh.as_ptr().cast_mut())
    );
}
