//! Hello, CUDA: CUDA's own objects around locus memory (through `cudarc`, the driver
//! API loaded at run time).
//!
//! CUDA's model: a **device** (an ordinal) is used through a **context**; each device has
//! one *primary* context that every library in the process shares (locus, cudarc, the
//! runtime API, PyTorch). Work is queued on **streams** and runs in order within one;
//! memory is a **device pointer** (`CUdeviceptr`) from `cuMemAlloc` (or pinned host
//! memory, managed memory, a stream-ordered pool). `cuMemcpyHtoD` / `cuMemcpyDtoH` copy
//! between host and device. Kernels are CUDA C++ compiled at run time by **NVRTC** into
//! PTX, loaded as a **module**, launched as a **function** over a grid of blocks.
//!
//! Where the driver or the GPU is missing it prints "cuda unavailable: <reason>" and
//! exits with status 1.
//!
//! ```text
//! cargo run --release --example hello_cuda
//! ```

mod common;

use cudarc::driver::{result, CudaContext, LaunchConfig, PushKernelArg};
use locus::{Location, Memory, Native};

const N: usize = 1 << 16;
const BYTES: usize = N * std::mem::size_of::<f32>();

fn main() -> Result<(), common::AnyError> {
    let at = common::location_or(Location::Cuda(0))?;
    if !locus::registry().has(at) {
        common::unavailable(at);
    }
    let Location::Cuda(ordinal) = at else {
        return Err(format!("{at} is not a CUDA location").into());
    };

    // 1. The objects. The device's primary context (the one locus uses too), its name,
    //    and a stream of our own.
    let context = CudaContext::new(ordinal as usize)?;
    let (major, minor) = context.compute_capability()?;
    println!(
        "{at}: \"{}\", compute capability {major}.{minor}",
        context.name()?
    );
    let stream = context.new_stream()?;

    // 2. Memory. An allocation at a CUDA location is a device pointer.
    let a = Memory::new(at, BYTES)?;
    let b = Memory::new(at, BYTES)?;
    let c = Memory::new(at, BYTES)?;
    let (pa, pb, pc) = (
        device_pointer(&a)?,
        device_pointer(&b)?,
        device_pointer(&c)?,
    );
    println!("a is {:?}", a.native());

    // 3. One upload, CUDA's way: `cuMemcpyHtoD` with the context current on this thread.
    let ones = vec![1.0f32; N];
    context.bind_to_thread()?;
    // SAFETY: `pa` is a device allocation of BYTES bytes in this (primary) context,
    // owned by locus's `a` until the end of main; `ones` holds BYTES bytes.
    unsafe { result::memcpy_htod_sync(pa, &ones)? };
    //    ... and locus's: host memory to `b`, one line.
    let host = Memory::new(Location::Host, BYTES)?;
    let counting: Vec<f32> = (0..N).map(|i| i as f32).collect();
    host.write(0, bytemuck::cast_slice(&counting))?;
    println!("route: {}", host.copy_to(0, &b, 0, BYTES)?);

    // 4. A kernel: CUDA C++ compiled by NVRTC, loaded as a module, launched on our
    //    stream with 256 threads per block over the three device pointers in place.
    let ptx = cudarc::nvrtc::compile_ptx(include_str!("../shaders/vec_add.cu"))?;
    let function = context.load_module(ptx)?.load_function("vec_add")?;
    let n = N as u32;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&pa).arg(&pb).arg(&pc).arg(&n);
    // SAFETY: the arguments match `vec_add(const float*, const float*, float*, unsigned)`
    // (three device pointers of N floats and N); the memory outlives the stream's work,
    // which `synchronize` waits for.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n))? };
    stream.synchronize()?;

    // 5. The result, CUDA's way (`cuMemcpyDtoH`) ...
    let mut raw = vec![0.0f32; N];
    // SAFETY: `pc` holds BYTES bytes; `raw` has room for them.
    unsafe { result::memcpy_dtoh_sync(&mut raw, pc)? };
    //    ... and locus's. Our stream is synchronized; work still queued on it would be
    //    waited for first, or the stream adopted (examples/17_foreign_queues.rs).
    let through_locus = common::read_with_locus(&c, &host)?;
    common::check_both(&raw, &through_locus)
}

/// The device pointer behind locus memory at a CUDA location.
fn device_pointer(memory: &Memory) -> Result<u64, common::AnyError> {
    match memory.native() {
        Native::Cuda { ptr, .. } => Ok(*ptr),
        other => Err(format!("not CUDA memory: {other:?}").into()),
    }
}
