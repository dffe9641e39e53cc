//! 17: locus between your own GPU code and itself: your queue adopted
//! (`Queue::from_native`), locus's upload on it, *your* kernel on it with no host wait,
//! locus's download on it. Each technology's own code around locus: an OpenCL kernel
//! (opencl3), a SYCL kernel (dpctl's C API), a WebGPU compute pass (wgpu), a CUDA kernel
//! (cudarc and NVRTC, on a GPU).
//!
//! `cargo run --release --example 17_foreign_queues -- opencl:0`

mod common;

use std::sync::Arc;

use locus::{AdoptedQueue, Location, Memory, Native, NativeQueue, Queue};

/// Elements of the array: the kernel computes `a[i] = 2 * a[i] + 1`.
const N: usize = 1 << 16;

fn main() -> Result<(), common::AnyError> {
    let at = common::location_from_args()?;
    if !locus::registry().has(at) {
        common::unavailable(at);
    }
    let input: Vec<u32> = (0..N as u32).collect();
    let host = Arc::new(Memory::new(Location::Host, 4 * N)?);
    host.write(0, bytemuck::cast_slice(&input))?;
    let data = Arc::new(Memory::new(at, 4 * N)?);
    let back = Arc::new(Memory::new(Location::Host, 4 * N)?);

    // Your queue, adopted; locus's upload on it (no wait), then your kernel there.
    let (adopted, kernel) = your_queue_and_kernel(at, &data)?;
    let queue = adopted.queue();
    let up = host.copy_to_async_on(queue, 0, &data, 0, 4 * N, &[])?;
    kernel()?; // queued on your queue: after locus's upload, on the device
               // locus's download on your queue: after your kernel. The one wait is on it.
    data.copy_to_async_on(queue, 0, &back, 0, 4 * N, &[])?
        .wait()?;
    let mut out = vec![0u32; N];
    back.read(0, bytemuck::cast_slice_mut(&mut out))?;
    assert!(out.iter().enumerate().all(|(i, &v)| v == 2 * i as u32 + 1));
    println!(
        "{at}: upload (native: {}), your kernel, download, all on {}: a[{}] = {}",
        up.is_native(),
        adopted.native().describe(),
        N - 1,
        out[N - 1]
    );
    adopted.synchronize()?;
    Ok(())
}

type Launch = Box<dyn FnOnce() -> Result<(), common::AnyError>>;

/// Your own queue at `at`, adopted, and your kernel on it over `data` (not yet queued).
fn your_queue_and_kernel(
    at: Location,
    data: &Memory,
) -> Result<(AdoptedQueue, Launch), common::AnyError> {
    match (at, data.native()) {
        (Location::OpenCl(_), Native::OpenCl { mem, offset }) => opencl(at, *mem, *offset),
        (Location::Sycl(_), Native::Sycl { ptr, .. }) => sycl(at, *ptr),
        (Location::WebGpu(_), Native::WebGpu { buffer, offset, .. }) => {
            webgpu(at, buffer.clone(), *offset)
        }
        (Location::Cuda(d), Native::Cuda { ptr, .. }) => cuda(d, *ptr),
        _ => Err(format!(
            "{at}: this example needs OpenCL, SYCL, WebGPU or CUDA (a queue to adopt)"
        )
        .into()),
    }
}

const OPENCL_C: &str = "__kernel void twice_plus_one(__global uint *a, uint first) {
    size_t i = get_global_id(0); a[first + i] = 2u * a[first + i] + 1u; }";

fn opencl(
    at: Location,
    mem: opencl3::types::cl_mem,
    offset: usize,
) -> Result<(AdoptedQueue, Launch), common::AnyError> {
    use opencl3::{
        command_queue::CommandQueue,
        kernel::{ExecuteKernel, Kernel},
        program::Program,
    };
    let device = locus::device_as::<locus::backends::opencl::OpenClDevice>(at)?;
    // Your queue, in locus's context (opencl3).
    let yours = CommandQueue::create_default_with_properties(device.context(), 0, 0)?;
    // SAFETY: a live queue; locus retains it while adopted.
    let adopted = unsafe { Queue::from_native(at, NativeQueue::OpenCl(yours.get().cast())) }?;
    let program = Program::create_and_build_from_source(device.context(), OPENCL_C, "")?;
    let kernel = Kernel::create(&program, "twice_plus_one")?;
    let first = (offset / 4) as u32;
    Ok((
        adopted,
        Box::new(move || {
            // SAFETY: the arguments match the kernel; the buffer outlives the queue's work.
            unsafe {
                ExecuteKernel::new(&kernel)
                    .set_arg(&mem)
                    .set_arg(&first)
                    .set_global_work_size(N)
                    .enqueue_nd_range(&yours)?
            };
            Ok(())
        }),
    ))
}

fn sycl(at: Location, usm: *mut u8) -> Result<(AdoptedQueue, Launch), common::AnyError> {
    use locus::backends::sycl::sys::*;
    let device = locus::device_as::<locus::backends::sycl::SyclDevice>(at)?;
    let api = device.api();
    let source = format!(
        "{}\0",
        OPENCL_C
            .replace("first + i", "i")
            .replace(", uint first", "")
    );
    // SAFETY: locus's live device and context; the queue, bundle and kernel are yours
    // (deleted by the process's end here); the source is NUL-terminated.
    let (queue, kernel) = unsafe {
        let queue = api.DPCTLQueue_CreateForDevice(
            device.device_ref(),
            None,
            DPCTLQueuePropertyType_DPCTL_IN_ORDER as i32,
        );
        let bundle = api.DPCTLKernelBundle_CreateFromOCLSource(
            device.context(),
            device.device_ref(),
            source.as_ptr().cast(),
            c"".as_ptr(),
        );
        (
            queue,
            api.DPCTLKernelBundle_GetKernel(bundle, c"twice_plus_one".as_ptr()),
        )
    };
    if queue.is_null() || kernel.is_null() {
        return Err(format!("{at}: dpctl made no queue or kernel").into());
    }
    // SAFETY: a live queue of locus's context.
    let adopted = unsafe { Queue::from_native(at, NativeQueue::Sycl(queue.cast())) }?;
    Ok((
        adopted,
        Box::new(move || {
            let mut args = [usm.cast::<std::ffi::c_void>()];
            let (types, range) = ([DPCTLKernelArgType_DPCTL_VOID_PTR], [N as u64, 1, 1]);
            // SAFETY: the USM argument is the pointer itself; it outlives the queue's work.
            let event = unsafe {
                api.DPCTLQueue_SubmitRange(
                    kernel,
                    queue,
                    args.as_mut_ptr(),
                    types.as_ptr(),
                    1,
                    range.as_ptr(),
                    1,
                    std::ptr::null(),
                    0,
                )
            };
            if event.is_null() {
                return Err("DPCTLQueue_SubmitRange failed".into());
            }
            // SAFETY: your event, not waited for: its reference is deleted.
            unsafe { api.DPCTLEvent_Delete(event) };
            Ok(())
        }),
    ))
}

const WGSL: &str = "@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&a)) { a[id.x] = 2u * a[id.x] + 1u; } }";

fn webgpu(
    at: Location,
    buffer: Arc<wgpu::Buffer>,
    offset: u64,
) -> Result<(AdoptedQueue, Launch), common::AnyError> {
    let device = locus::device_as::<locus::backends::webgpu::WebGpuDevice>(at)?;
    let (gpu, queue) = (device.device().clone(), device.queue().clone());
    // WebGPU has one queue per device: the one you submit to is locus's.
    // SAFETY: a live wgpu queue (a safe handle).
    let adopted = unsafe { Queue::from_native(at, NativeQueue::WebGpu(queue.clone())) }?;
    let module = gpu.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(WGSL.into()),
    });
    let pipeline = gpu.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    Ok((
        adopted,
        Box::new(move || {
            let binding = wgpu::BufferBinding {
                buffer: &buffer,
                offset,
                size: wgpu::BufferSize::new(4 * N as u64),
            };
            let group = gpu.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(binding),
                }],
            });
            let mut encoder = gpu.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups((N as u32).div_ceil(64), 1, 1);
            }
            queue.submit([encoder.finish()]); // no wait
            Ok(())
        }),
    ))
}

const CUDA_C: &str = "extern \"C\" __global__ void twice_plus_one(unsigned *a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 2u * a[i] + 1u; }";

fn cuda(ordinal: u32, ptr: u64) -> Result<(AdoptedQueue, Launch), common::AnyError> {
    use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
    let context = CudaContext::new(ordinal as usize)?; // the primary context, as locus's
    let stream = context.new_stream()?;
    let function = context
        .load_module(cudarc::nvrtc::compile_ptx(CUDA_C)?)?
        .load_function("twice_plus_one")?;
    let at = Location::Cuda(ordinal);
    // SAFETY: your live stream of the device's primary context, kept alive by the launch.
    let adopted = unsafe {
        Queue::from_native(
            at,
            NativeQueue::Cuda {
                stream: stream.cu_stream() as u64,
                ordinal,
            },
        )
    }?;
    Ok((
        adopted,
        Box::new(move || {
            let n = N as u32;
            let mut launch = stream.launch_builder(&function);
            launch.arg(&ptr).arg(&n);
            // SAFETY: the arguments match the kernel; the memory outlives the stream's work.
            unsafe { launch.launch(LaunchConfig::for_num_elems(n))? };
            std::mem::forget(stream); // lives to the process's end, beyond the adoption
            Ok(())
        }),
    ))
}
