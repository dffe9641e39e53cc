//! Hello, OpenMP: OpenMP's own calls around locus memory (libgomp, loaded at run time).
//!
//! OpenMP's device model: devices are **numbers**, `0 .. omp_get_num_devices()`, plus
//! the **initial device** (the host, `omp_get_initial_device()`). Device memory is a
//! plain pointer from `omp_target_alloc(n, device)`, valid on that device only (on the
//! initial device it is host memory). `omp_target_memcpy` copies between any two devices
//! by number. Kernels are C, C++ or Fortran loops in a **`target` region**, run on the
//! device named by `device(n)`, with `is_device_ptr` telling the compiler that a pointer
//! is already device memory:
//!
//! ```c
//! #pragma omp target teams distribute parallel for device(dev) is_device_ptr(a, b, c)
//! for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
//! ```
//!
//! locus builds that loop (`shaders/vec_add_openmp.c`) with `-fopenmp` into a small
//! library it embeds and loads at run time, so the binary never links libgomp. Without
//! an offloading compiler, `openmp:0` is the initial device itself: host memory.
//!
//! ```text
//! cargo run --release --example hello_openmp
//! ```

mod common;

use std::os::raw::{c_int, c_void};

use locus::backends::openmp::OpenMpDevice;
use locus::{Location, Memory, Native};

const N: usize = 1 << 16;
const BYTES: usize = N * std::mem::size_of::<f32>();

/// `int omp_target_memcpy(void *dst, const void *src, size_t length, size_t dst_offset,
/// size_t src_offset, int dst_device_num, int src_device_num)`
type TargetMemcpy =
    unsafe extern "C" fn(*mut c_void, *const c_void, usize, usize, usize, c_int, c_int) -> c_int;

fn main() -> Result<(), common::AnyError> {
    let at = common::location_or(Location::OpenMp(0))?;
    if !locus::registry().has(at) {
        common::unavailable(at);
    }

    // 1. The device numbers: locus's `openmp:N` is OpenMP device N, or the initial device
    //    when the runtime has no other.
    // SAFETY: libgomp's initialisers only; locus loaded the same library already.
    let gomp = unsafe { libloading::Library::new("libgomp.so.1")? };
    // SAFETY: the OpenMP API's C signatures.
    let (num_devices, target_memcpy) = unsafe {
        (
            *gomp.get::<unsafe extern "C" fn() -> c_int>(b"omp_get_num_devices\0")?,
            *gomp.get::<TargetMemcpy>(b"omp_target_memcpy\0")?,
        )
    };
    let dev = locus::device_as::<OpenMpDevice>(at)?;
    let (device, initial) = (dev.device_number(), dev.initial_device());
    // SAFETY: a query without arguments.
    let count = unsafe { num_devices() };
    println!(
        "{at}: OpenMP device {device} ({}); omp_get_num_devices() = {count}, initial device {initial}",
        if device == initial { "the initial device: host memory" } else { "an offload device" }
    );

    // 2. Memory: an allocation at an OpenMP location is a device pointer (from
    //    `omp_target_alloc`, or host memory on the initial device).
    let a = Memory::new(at, BYTES)?;
    let b = Memory::new(at, BYTES)?;
    let c = Memory::new(at, BYTES)?;
    let (pa, pb, pc) = (pointer(&a)?, pointer(&b)?, pointer(&c)?);
    println!("a is {:?}", a.native());

    // 3. One upload, OpenMP's way: `omp_target_memcpy` from the initial device.
    let ones = vec![1.0f32; N];
    // SAFETY: `pa` holds BYTES bytes on `device` (locus's `a` owns it until the end of
    // main); `ones` holds BYTES bytes on the initial device.
    let code = unsafe {
        target_memcpy(
            pa.cast(),
            ones.as_ptr().cast(),
            BYTES,
            0,
            0,
            device,
            initial,
        )
    };
    if code != 0 {
        return Err(format!("omp_target_memcpy returned {code}").into());
    }
    //    ... and locus's: host memory to `b`, one line.
    let host = Memory::new(Location::Host, BYTES)?;
    let counting: Vec<f32> = (0..N).map(|i| i as f32).collect();
    host.write(0, bytemuck::cast_slice(&counting))?;
    println!("route: {}", host.copy_to(0, &b, 0, BYTES)?);

    // 4. The kernel: the `target` region above, on device `device`, over the three
    //    device pointers in place. It returns when the region has ended.
    // SAFETY: three device pointers of N floats on this device; nothing else touches
    // `c` during the call.
    unsafe {
        locus::backends::openmp::vec_add_f32(&dev, pa.cast(), pb.cast(), pc.cast(), N)?;
    }

    // 5. The result, OpenMP's way (`omp_target_memcpy` to the initial device) ...
    let mut raw = vec![0.0f32; N];
    // SAFETY: `pc` holds BYTES bytes on `device`; `raw` has room on the initial device.
    let code = unsafe {
        target_memcpy(
            raw.as_mut_ptr().cast(),
            pc.cast(),
            BYTES,
            0,
            0,
            initial,
            device,
        )
    };
    if code != 0 {
        return Err(format!("omp_target_memcpy returned {code}").into());
    }
    //    ... and locus's.
    let through_locus = common::read_with_locus(&c, &host)?;
    common::check_both(&raw, &through_locus)
}

/// The device pointer behind locus memory at an OpenMP location.
fn pointer(memory: &Memory) -> Result<*mut f32, common::AnyError> {
    match memory.native() {
        Native::OpenMp { ptr, .. } | Native::Host { ptr } => Ok(ptr.cast()),
        other => Err(format!("not an OpenMP pointer: {other:?}").into()),
    }
}
