//! Hello, HIP: HIP's own calls around locus memory (the HIP runtime, loaded at run time
//! through the bindings locus ships).
//!
//! HIP's model is CUDA's under other names: a **device** is selected per thread
//! (`hipSetDevice`); work is queued on **streams** (the NULL stream when none is named);
//! memory is a **device pointer** from `hipMalloc` (or pinned host memory from
//! `hipHostMalloc`, managed memory, a stream-ordered pool); `hipMemcpy(Async)` copies
//! with a direction. Kernels are HIP C++ compiled at run time by **hiprtc** for the
//! GPU's architecture (`--offload-arch=gfx...`), loaded as a module and launched over a
//! grid of blocks. Here the kernel goes through locus's codelet, which does that.
//!
//! Where the runtime or the GPU is missing it prints "hip unavailable: <reason>" and
//! exits with status 1.
//!
//! ```text
//! cargo run --release --example hello_hip
//! ```

mod common;

use std::ffi::CStr;
use std::ptr;

use locus::backends::hip::sys::{
    hipMemcpyKind_hipMemcpyDeviceToHost, hipMemcpyKind_hipMemcpyHostToDevice, HipApiRaw,
};
use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::{Buffer, Location, Memory, Native};

const N: usize = 1 << 16;
const BYTES: usize = N * std::mem::size_of::<f32>();

fn main() -> Result<(), common::AnyError> {
    let at = common::location_or(Location::Hip(0))?;
    if !locus::registry().has(at) {
        common::unavailable(at);
    }
    let Location::Hip(ordinal) = at else {
        return Err(format!("{at} is not a HIP location").into());
    };

    // 1. The runtime, loaded as locus loads it, and the device selected on this thread.
    let hip = load_runtime()?;
    let check = |call: &str, code: u32| match code {
        0 => Ok(()),
        code => Err(format!("{call} failed with hipError_t {code}")),
    };
    let mut name = [0 as std::os::raw::c_char; 256];
    // SAFETY: `ordinal` is a device locus found; the name buffer has the stated length.
    unsafe {
        check("hipSetDevice", (hip.hipSetDevice)(ordinal as i32))?;
        check(
            "hipDeviceGetName",
            (hip.hipDeviceGetName)(name.as_mut_ptr(), name.len() as i32, ordinal as i32),
        )?;
    }
    // SAFETY: hipDeviceGetName wrote a NUL-terminated name into the buffer.
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy();
    println!("{at}: \"{name}\"");

    // 2. Memory. An allocation at a HIP location is a device pointer.
    let a = Memory::new(at, BYTES)?;
    let b = Memory::new(at, BYTES)?;
    let c = Memory::new(at, BYTES)?;
    println!("a is {:?}", a.native());

    // 3. One upload, HIP's way: a copy on the NULL stream, then wait for it.
    let ones = vec![1.0f32; N];
    let pa = device_pointer(a.native())?;
    // SAFETY: `pa` is a device allocation of BYTES bytes on the current device, owned by
    // locus's `a` until the end of main; `ones` holds BYTES bytes and lives past the wait.
    unsafe {
        check(
            "hipMemcpyAsync",
            (hip.hipMemcpyAsync)(
                pa as *mut _,
                ones.as_ptr().cast(),
                BYTES,
                hipMemcpyKind_hipMemcpyHostToDevice,
                ptr::null_mut(),
            ),
        )?;
        check(
            "hipStreamSynchronize",
            (hip.hipStreamSynchronize)(ptr::null_mut()),
        )?;
    }
    //    ... and locus's: host memory to `b`, one line.
    let host = Memory::new(Location::Host, BYTES)?;
    let counting: Vec<f32> = (0..N).map(|i| i as f32).collect();
    host.write(0, bytemuck::cast_slice(&counting))?;
    println!("route: {}", host.copy_to(0, &b, 0, BYTES)?);

    // 4. The kernel, in HIP C++ (shaders/vec_add.hip), compiled by hiprtc through
    //    locus's codelet and launched over the three device pointers in place.
    let (a, b) = (
        Buffer::<f32>::from_memory(a)?,
        Buffer::<f32>::from_memory(b)?,
    );
    let mut c = Buffer::<f32>::from_memory(c)?;
    let kernel = kernels::vec_add();
    let codelet = Codelet::new(&kernel, &[at])?;
    codelet.call(
        &mut [
            Arg::buf(&a),
            Arg::buf(&b),
            Arg::buf_mut(&mut c),
            Arg::u32(N as u32),
        ],
        Launch::d1(N),
    )?;

    // 5. The result, HIP's way: a device-to-host copy after the kernel (the access
    //    waits for locus's queue first) ...
    let mut raw = vec![0.0f32; N];
    {
        let src = c.access(at)?;
        src.wait()?;
        let pc = device_pointer(src.native())?;
        // SAFETY: `pc` holds BYTES bytes and the read access keeps it; `raw` has room.
        unsafe {
            check(
                "hipMemcpyAsync",
                (hip.hipMemcpyAsync)(
                    raw.as_mut_ptr().cast(),
                    pc as *const _,
                    BYTES,
                    hipMemcpyKind_hipMemcpyDeviceToHost,
                    ptr::null_mut(),
                ),
            )?;
            check(
                "hipStreamSynchronize",
                (hip.hipStreamSynchronize)(ptr::null_mut()),
            )?;
        }
    }
    //    ... and locus's: a read access on the host.
    let on_host = c.access(Location::Host)?;
    println!("route: {}", on_host.route());

    common::check_both(&raw, on_host.as_slice()?)
}

/// The HIP runtime, by the names locus tries.
fn load_runtime() -> Result<HipApiRaw, common::AnyError> {
    for library in locus::backends::hip::RUNTIME_LIBRARIES {
        // SAFETY: loading the HIP runtime runs its initialisers only; locus loaded the
        // same library already (it found this device through it).
        if let Ok(api) = unsafe { HipApiRaw::new(library) } {
            return Ok(api);
        }
    }
    Err("the HIP runtime could not be loaded".into())
}

/// The device pointer behind locus memory at a HIP location.
fn device_pointer(native: &Native) -> Result<u64, common::AnyError> {
    match native {
        Native::Hip { ptr, .. } => Ok(*ptr),
        other => Err(format!("not HIP memory: {other:?}").into()),
    }
}
