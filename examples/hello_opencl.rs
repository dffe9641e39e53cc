//! Hello, OpenCL: OpenCL's own objects around locus memory.
//!
//! OpenCL's model: a **platform** (one vendor's driver) lists **devices**; a **context**
//! holds memory objects for some devices; a **command queue** (in order here) runs
//! copies and kernels on one device; memory is a **`cl_mem`** buffer object, reached
//! through the queue (`clEnqueueWriteBuffer` / `clEnqueueReadBuffer`) or mapped into
//! the host's address space. Kernels are OpenCL C, compiled at run time.
//!
//! What this program does: one upload the raw way and the same upload through locus,
//! `c = a + b` by an OpenCL C kernel on the buffers locus allocated, the result read back
//! both ways, and the route locus chose for each move.
//!
//! ```text
//! cargo run --release --example hello_opencl            # opencl:0
//! cargo run --release --example hello_opencl -- opencl:1
//! ```

mod common;

use std::ptr;

use cl3::command_queue::{enqueue_read_buffer, enqueue_write_buffer};
use cl3::error_codes::ClError;
use cl3::event::release_event;
use cl3::types::{cl_mem, CL_BLOCKING};
use locus::backends::opencl::OpenClDevice;
use locus::{Location, Memory, Native};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::platform::Platform;
use opencl3::program::Program;

const N: usize = 1 << 16;
const BYTES: usize = N * std::mem::size_of::<f32>();

fn main() -> Result<(), common::AnyError> {
    let at = common::location_or(Location::OpenCl(0))?;
    if !locus::registry().has(at) {
        common::unavailable(at);
    }

    // 1. The objects. locus made one context and one in-order command queue for each
    //    OpenCL device it found; `device_as` hands them out.
    let dev = locus::device_as::<OpenClDevice>(at)?;
    let platform = Platform::new(dev.cl_device().platform()?);
    println!(
        "{at}: platform \"{}\", device \"{}\" ({})",
        platform.name()?,
        dev.cl_device().name()?,
        dev.cl_device().version()?
    );

    // 2. Memory. An allocation at an OpenCL location is a `cl_mem` buffer object (with
    //    an offset: a pool may hand out a range of a larger buffer).
    let a = Memory::new(at, BYTES)?;
    let b = Memory::new(at, BYTES)?;
    let c = Memory::new(at, BYTES)?;
    let (mem_a, offset_a) = cl_buffer(&a)?;
    println!("a is {:?} ({BYTES} bytes)", a.native());

    // 3. One upload, OpenCL's way: a blocking write through the queue.
    let ones = vec![1.0f32; N];
    // SAFETY: `mem_a` is a live buffer of this context with `BYTES` bytes from
    // `offset_a` (locus's `a` owns it until the end of main); the write is blocking,
    // so `ones` is read before the call returns. The returned event is released.
    unsafe {
        let event = enqueue_write_buffer(
            dev.queue().get(),
            mem_a,
            CL_BLOCKING,
            offset_a,
            BYTES,
            ones.as_ptr().cast(),
            0,
            ptr::null(),
        )
        .map_err(ClError)?;
        release_event(event).map_err(ClError)?;
    }
    //    ... and locus's: host memory to `b`, one line, on the route the planner picked.
    let host = Memory::new(Location::Host, BYTES)?;
    let counting: Vec<f32> = (0..N).map(|i| i as f32).collect();
    host.write(0, bytemuck::cast_slice(&counting))?;
    let route = host.copy_to(0, &b, 0, BYTES)?;
    println!("route: {route}");

    // 4. A kernel in OpenCL C, built for this device's context and run on locus's queue
    //    over the three buffers in place.
    let program = Program::create_and_build_from_source(
        dev.context(),
        include_str!("../shaders/vec_add.cl"),
        "",
    )
    .map_err(|log| format!("building vec_add.cl failed: {log}"))?;
    let kernel = Kernel::create(&program, "vec_add")?;
    let (mem_b, offset_b) = cl_buffer(&b)?;
    let (mem_c, offset_c) = cl_buffer(&c)?;
    if offset_a + offset_b + offset_c != 0 {
        return Err("a pooled OpenCL range: this example's kernel takes whole buffers".into());
    }
    let n = N as u32;
    // SAFETY: the arguments match `vec_add(global const float*, global const float*,
    // global float*, uint)`: three whole buffers of N floats (checked just above) and
    // N. They outlive the queue's work, which `finish` waits for below.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&mem_a)
            .set_arg(&mem_b)
            .set_arg(&mem_c)
            .set_arg(&n)
            .set_global_work_size(N)
            .enqueue_nd_range(dev.queue())?;
    }

    // 5. The result, OpenCL's way: a blocking read on the same in-order queue runs
    //    after the kernel.
    let mut raw = vec![0.0f32; N];
    // SAFETY: `mem_c` is a whole buffer of `BYTES` bytes; the read is blocking, and
    // `raw` has room for them.
    unsafe {
        let event = enqueue_read_buffer(
            dev.queue().get(),
            mem_c,
            CL_BLOCKING,
            0,
            BYTES,
            raw.as_mut_ptr().cast(),
            0,
            ptr::null(),
        )
        .map_err(ClError)?;
        release_event(event).map_err(ClError)?;
    }
    //    ... and locus's: `read` copies to host memory. The kernel is on locus's queue
    //    but outside locus's knowledge, so wait for it first (or adopt the queue and
    //    pass events: examples/17_foreign_queues.rs).
    dev.queue().finish()?;
    let through_locus = common::read_with_locus(&c, &host)?;
    common::check_both(&raw, &through_locus)
}

/// The `cl_mem` and offset behind locus memory at an OpenCL location.
fn cl_buffer(memory: &Memory) -> Result<(cl_mem, usize), common::AnyError> {
    match memory.native() {
        Native::OpenCl { mem, offset } => Ok((*mem, *offset)),
        other => Err(format!("not an OpenCL buffer: {other:?}").into()),
    }
}
