//! Hello, SYCL: SYCL's own objects around locus memory.
//!
//! SYCL's model: a **device** (of a platform and backend: OpenCL, Level Zero, CUDA...)
//! runs work submitted to a **queue** (in order here) within a **context**. Memory is
//! **USM**, a plain pointer of one of three kinds: *device* (only the device reads it),
//! *shared* (migrates between host and device on use) and *host* (host memory the
//! device reads over the bus). `queue.memcpy(dst, src, n)` copies between any of them
//! and returns an **event**. Kernels are C++ lambdas, or (as here) OpenCL C compiled
//! through a kernel bundle. locus reaches SYCL through dpctl's C API (the library
//! behind dpctl and dpnp), loaded at run time.
//!
//! ```text
//! . scripts/sycl-env.sh   # makes Intel's CPU runtime visible
//! cargo run --release --example hello_sycl
//! ```

mod common;

use std::ffi::CStr;

use locus::backends::sycl::{KernelArg, SyclDevice};
use locus::{Location, Memory, Native, UsmKind};

const N: usize = 1 << 16;
const BYTES: usize = N * std::mem::size_of::<f32>();

fn main() -> Result<(), common::AnyError> {
    let at = common::location_or(Location::Sycl(0))?;
    if !locus::registry().has(at) {
        common::unavailable(at);
    }

    // 1. The objects. locus holds one in-order queue per SYCL device (with its context
    //    and device); dpctl's C API asks them questions.
    let dev = locus::device_as::<SyclDevice>(at)?;
    let api = dev.api();
    // SAFETY: the device reference is live while `dev` is; dpctl returns new C strings
    // that the caller frees with DPCTLCString_Delete.
    let (name, driver) = unsafe {
        let take = |s: *const std::os::raw::c_char| {
            let text = CStr::from_ptr(s).to_string_lossy().into_owned();
            (api.DPCTLCString_Delete)(s);
            text
        };
        (
            take((api.DPCTLDevice_GetName)(dev.device_ref())),
            take((api.DPCTLDevice_GetDriverVersion)(dev.device_ref())),
        )
    };
    println!("{at}: \"{name}\", driver {driver}");

    // 2. USM. locus allocates device USM at a SYCL location (`sycl::malloc_device`);
    //    the other kinds where the device has them. The runtime tells them apart.
    let a = Memory::new(at, BYTES)?;
    let b = Memory::new(at, BYTES)?;
    let c = Memory::new(at, BYTES)?;
    for kind in [UsmKind::Shared, UsmKind::Host] {
        if dev.supports(kind) {
            let m = dev.allocate_kind(BYTES, kind)?;
            println!("  {kind:?} USM: {:?}", m.native());
        }
    }
    let (pa, pb, pc) = (usm(&a)?, usm(&b)?, usm(&c)?);
    println!(
        "a is {:?}, the runtime says {:?}",
        a.native(),
        dev.pointer_kind(pa)
    );

    // 3. One upload, SYCL's way: `queue.memcpy` returns an event; wait for it.
    let ones = vec![1.0f32; N];
    // SAFETY: `pa` is device USM of this queue's context with BYTES bytes (locus's `a`
    // owns it until the end of main); `ones` lives until the event is waited for.
    unsafe {
        let event =
            (api.DPCTLQueue_Memcpy)(dev.queue(), pa.cast(), ones.as_ptr().cast(), BYTES as u64);
        if event.is_null() {
            return Err("DPCTLQueue_Memcpy failed".into());
        }
        (api.DPCTLEvent_Wait)(event);
        (api.DPCTLEvent_Delete)(event);
    }
    //    ... and locus's: host memory to `b`, one line.
    let host = Memory::new(Location::Host, BYTES)?;
    let counting: Vec<f32> = (0..N).map(|i| i as f32).collect();
    host.write(0, bytemuck::cast_slice(&counting))?;
    let route = host.copy_to(0, &b, 0, BYTES)?;
    println!("route: {route}");

    // 4. A kernel: OpenCL C through the runtime's kernel bundle, over the three USM
    //    pointers in place. `launch_1d` submits it to locus's queue and waits.
    let kernel = dev.build_opencl_kernel(include_str!("../shaders/vec_add.cl"), "vec_add")?;
    let args = [
        KernelArg::Pointer(pa.cast()),
        KernelArg::Pointer(pb.cast()),
        KernelArg::Pointer(pc.cast()),
        KernelArg::U32(N as u32),
    ];
    // SAFETY: three USM pointers of this context with N floats each and a uint, as
    // `vec_add(global float*, global float*, global float*, uint)` takes; the memory
    // outlives the launch, which has finished when `launch_1d` returns.
    unsafe { kernel.launch_1d(&dev, &args, N)? };

    // 5. The result, SYCL's way (`queue.memcpy` to the host, waited) ...
    let mut raw = vec![0.0f32; N];
    // SAFETY: `pc` holds BYTES bytes; `raw` has room and lives past the wait.
    unsafe {
        let event = (api.DPCTLQueue_Memcpy)(
            dev.queue(),
            raw.as_mut_ptr().cast(),
            pc.cast(),
            BYTES as u64,
        );
        if event.is_null() {
            return Err("DPCTLQueue_Memcpy failed".into());
        }
        (api.DPCTLEvent_Wait)(event);
        (api.DPCTLEvent_Delete)(event);
    }
    //    ... and locus's.
    let through_locus = common::read_with_locus(&c, &host)?;
    common::check_both(&raw, &through_locus)
}

/// The USM pointer behind locus memory at a SYCL location.
fn usm(memory: &Memory) -> Result<*mut u8, common::AnyError> {
    match memory.native() {
        Native::Sycl { ptr, .. } => Ok(*ptr),
        other => Err(format!("not SYCL USM: {other:?}").into()),
    }
}
