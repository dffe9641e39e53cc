//! Hello, WebGPU: WebGPU's own objects around locus memory.
//!
//! WebGPU's model (here through `wgpu`, over Vulkan or GL): an **instance** finds
//! **adapters** (a GPU and its driver); an adapter opens a **device** (the connection,
//! with its limits) and its **queue**. Memory is a **buffer** with declared usages; the
//! host reaches a device buffer only through the queue (`write_buffer`) or by copying it
//! into a mappable buffer and **mapping** that. Kernels are WGSL compute shaders in a
//! **pipeline**; a **bind group** attaches buffers to a shader's bindings; work is
//! recorded by a command **encoder** and **submitted** to the queue.
//!
//! ```text
//! cargo run --release --example hello_webgpu
//! ```

mod common;

use locus::backends::webgpu::WebGpuDevice;
use locus::{Location, Memory, Native};

const N: usize = 1 << 16;
const BYTES: usize = N * std::mem::size_of::<f32>();

fn main() -> Result<(), common::AnyError> {
    let at = common::location_or(Location::WebGpu(0))?;
    if !locus::registry().has(at) {
        common::unavailable(at);
    }

    // 1. The objects. locus made the instance, took one adapter per GPU, and opened a
    //    device and queue on it; `device_as` hands them out.
    let dev = locus::device_as::<WebGpuDevice>(at)?;
    let info = dev.adapter().get_info();
    println!(
        "{at}: adapter \"{}\" through {:?}, driver {} {}",
        info.name, info.backend, info.driver, info.driver_info
    );
    let (gpu, queue) = (dev.device(), dev.queue());

    // 2. Memory. An allocation at a WebGPU location is a range of a `wgpu::Buffer`
    //    (storage, copy source and destination).
    let a = Memory::new(at, BYTES)?;
    let b = Memory::new(at, BYTES)?;
    let c = Memory::new(at, BYTES)?;
    let ((ba, oa), (bb, ob), (bc, oc)) = (buffer(&a)?, buffer(&b)?, buffer(&c)?);
    println!("a is {:?}", a.native());

    // 3. One upload, WebGPU's way: the queue copies host bytes into the buffer when the
    //    next submission runs.
    let ones = vec![1.0f32; N];
    queue.write_buffer(&ba, oa, bytemuck::cast_slice(&ones));
    queue.submit([]);
    //    ... and locus's: host memory to `b`, one line.
    let host = Memory::new(Location::Host, BYTES)?;
    let counting: Vec<f32> = (0..N).map(|i| i as f32).collect();
    host.write(0, bytemuck::cast_slice(&counting))?;
    println!("route: {}", host.copy_to(0, &b, 0, BYTES)?);

    // 4. A kernel: the WGSL shader in a compute pipeline; a bind group attaches the three
    //    ranges and a uniform holding `n`; one dispatch of N / 64 workgroups.
    let module = gpu.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("vec_add"),
        source: wgpu::ShaderSource::Wgsl(include_str!("../shaders/vec_add.wgsl").into()),
    });
    let pipeline = gpu.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("vec_add"),
        layout: None,
        module: &module,
        entry_point: Some("vec_add"),
        compilation_options: Default::default(),
        cache: None,
    });
    let params = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("vec_add params"),
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut n = [0u8; 16];
    n[..4].copy_from_slice(&(N as u32).to_ne_bytes());
    queue.write_buffer(&params, 0, &n);
    fn entry(
        binding: u32,
        buffer: &wgpu::Buffer,
        offset: u64,
        size: u64,
    ) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset,
                size: wgpu::BufferSize::new(size),
            }),
        }
    }
    let group = gpu.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("vec_add"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            entry(0, &ba, oa, BYTES as u64),
            entry(1, &bb, ob, BYTES as u64),
            entry(2, &bc, oc, BYTES as u64),
            entry(3, &params, 0, 16),
        ],
    });
    let mut encoder = gpu.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((N / 64) as u32, 1, 1);
    }

    // 5. The result, WebGPU's way: copy into a mappable buffer (same submission, after
    //    the kernel), map it, read the mapping.
    let staging = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: BYTES as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(&bc, oc, &staging, 0, BYTES as u64);
    let index = queue.submit([encoder.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |mapped| {
        if let Err(e) = mapped {
            eprintln!("mapping failed: {e}");
        }
    });
    gpu.poll(wgpu::PollType::Wait {
        submission_index: Some(index),
        timeout: None,
    })?;
    let view = staging
        .slice(..)
        .get_mapped_range()
        .map_err(|e| format!("reading the mapping: {e:?}"))?;
    let raw: Vec<f32> = bytemuck::pod_collect_to_vec(&view);
    drop(view);
    staging.unmap();
    //    ... and locus's. The kernel's submission has completed (the poll above); one
    //    that had not would be waited for, or passed as an event to locus's queue
    //    (examples/17_foreign_queues.rs).
    let through_locus = common::read_with_locus(&c, &host)?;
    common::check_both(&raw, &through_locus)
}

/// The `wgpu::Buffer` and offset behind locus memory at a WebGPU location.
fn buffer(memory: &Memory) -> Result<(std::sync::Arc<wgpu::Buffer>, u64), common::AnyError> {
    match memory.native() {
        Native::WebGpu { buffer, offset, .. } => Ok((buffer.clone(), *offset)),
        other => Err(format!("not a wgpu buffer: {other:?}").into()),
    }
}
