//! Helpers shared by the examples: the HAMR hello world `choose_backend` runs at any
//! location (`a` made on the device, `b` on the host, the technology's own kernel from
//! `shaders/`), the location from the command line, and the checks.
#![allow(dead_code)]

use locus::{Buffer, Location, Native, Technology};

pub type AnyError = Box<dyn std::error::Error>;

/// Makes `a` at `device` (all ones) and `b` on the host (0, 1, 2, ...), adds them at
/// `device` with that technology's kernel, and returns `c`, still at `device`.
pub fn hello(device: Location, n: usize) -> Result<Buffer<f32>, AnyError> {
    let a = Buffer::filled(device, n, 1.0f32)?;
    let b = Buffer::from_vec((0..n).map(|i| i as f32).collect());
    let mut c = Buffer::<f32>::zeroed(device, n)?;
    println!("a: {n} x 1.0 made at {device}; b: 0..{n} made on the host");
    vec_add(device, &a, &b, &mut c)?;
    Ok(c)
}

/// `c = a + b` at `device` through the shipped `vec_add` codelet: locus moves the
/// operands there (or uses them in place) and orders the launch after the moves.
pub fn vec_add_codelet(
    device: Location,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &mut Buffer<f32>,
) -> Result<(), AnyError> {
    use locus::codelet::{kernels, Arg, Codelet, Launch};
    let n = c.len();
    let kernel = kernels::vec_add();
    let codelet = Codelet::new(&kernel, &[device])?;
    codelet.call(
        &mut [
            Arg::buf(a),
            Arg::buf(b),
            Arg::buf_mut(c),
            Arg::u32(n as u32),
        ],
        Launch::d1(n),
    )?;
    Ok(())
}

/// Prints the first elements of `c` on the host and checks every one.
pub fn print_and_check(c: &Buffer<f32>) -> Result<(), AnyError> {
    let host = c.access(Location::Host)?;
    let values = host.as_slice()?;
    println!(
        "c = a + b read on the host ({}, route: {}): {:?} ...",
        if host.is_in_place() {
            "in place"
        } else {
            "copied"
        },
        host.route().kind,
        &values[..values.len().min(8)]
    );
    for (i, &v) in values.iter().enumerate() {
        if v != i as f32 + 1.0 {
            return Err(format!("wrong sum at {i}: {v}, expected {}", i as f32 + 1.0).into());
        }
    }
    println!("all {} sums are correct", values.len());
    Ok(())
}

/// Runs vec_add at `device` with the kernel of its technology.
pub fn vec_add(
    device: Location,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &mut Buffer<f32>,
) -> Result<(), AnyError> {
    if matches!(device.technology(), Technology::Cuda | Technology::Hip) {
        // Compiled at run time by locus (NVRTC, hiprtc): the codelet does it all.
        return vec_add_codelet(device, a, b, c);
    }
    let (ga, gb) = (a.access(device)?, b.access(device)?);
    for (name, g) in [("a", &ga), ("b", &gb)] {
        println!(
            "  {name} at {device}: {} ({})",
            if g.is_in_place() {
                "in place"
            } else {
                "replica"
            },
            g.route().reason
        );
    }
    let mut gc = c.access_mut(device)?;
    // The buffers are asynchronous (HAMR's default): an upload may still be running.
    // Our kernel is not on locus's queue, so it waits for the moves first (a kernel on
    // a queue that takes events would pass `ga.events()` as its dependencies instead).
    for g in [&ga, &gb] {
        g.wait()?;
    }
    gc.wait()?;
    match device.technology() {
        Technology::Host => {
            let (x, y) = (ga.as_slice()?, gb.as_slice()?);
            for ((out, p), q) in gc.as_mut_slice()?.iter_mut().zip(x).zip(y) {
                *out = p + q;
            }
        }
        Technology::OpenMp => openmp(device, &ga, &gb, &mut gc)?,
        Technology::OpenCl => opencl(device, &ga, &gb, &gc)?,
        Technology::WebGpu => webgpu(device, &ga, &gb, &gc)?,
        Technology::Sycl => sycl(device, &ga, &gb, &gc)?,
        other => return Err(format!("no vec_add kernel for {other} in this example").into()),
    }
    Ok(())
}

fn openmp(
    device: Location,
    a: &locus::ReadGuard<f32>,
    b: &locus::ReadGuard<f32>,
    c: &mut locus::WriteGuard<f32>,
) -> Result<(), AnyError> {
    let dev = locus::device_as::<locus::backends::openmp::OpenMpDevice>(device)?;
    let pointer = |native: &Native| match native {
        Native::OpenMp { ptr, .. } | Native::Host { ptr } => Ok(*ptr as *mut f32),
        other => Err(format!("not an OpenMP pointer: {other:?}")),
    };
    let (pa, pb, pc) = (
        pointer(a.native())?,
        pointer(b.native())?,
        pointer(c.native())?,
    );
    // SAFETY: the three guards keep their allocations alive and hold `len` f32 each on
    // this OpenMP device (the accessibility check placed or replicated them there);
    // the write guard is the only access to `c`.
    unsafe { locus::backends::openmp::vec_add_f32(&dev, pa, pb, pc, c.len())? };
    Ok(())
}

fn opencl(
    device: Location,
    a: &locus::ReadGuard<f32>,
    b: &locus::ReadGuard<f32>,
    c: &locus::WriteGuard<f32>,
) -> Result<(), AnyError> {
    use opencl3::kernel::{ExecuteKernel, Kernel};
    use opencl3::program::Program;
    let dev = locus::device_as::<locus::backends::opencl::OpenClDevice>(device)?;
    let source = include_str!("../../shaders/vec_add.cl");
    let program = Program::create_and_build_from_source(dev.context(), source, "")
        .map_err(|log| format!("building vec_add.cl failed: {log}"))?;
    let kernel = Kernel::create(&program, "vec_add")?;
    let mem = |native: &Native| match native {
        Native::OpenCl { mem, offset: 0 } => Ok(*mem),
        Native::OpenCl { offset, .. } => Err(format!(
            "a pooled OpenCL range (offset {offset}): this example passes whole buffers"
        )),
        other => Err(format!("not an OpenCL buffer: {other:?}")),
    };
    let (ma, mb, mc) = (mem(a.native())?, mem(b.native())?, mem(c.native())?);
    let n = c.len() as u32;
    if n > 0 {
        // SAFETY: the arguments match the kernel's signature (three cl_mem of `n` floats
        // and a uint) and the guards keep the buffers alive until `finish`.
        unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(&ma)
                .set_arg(&mb)
                .set_arg(&mc)
                .set_arg(&n)
                .set_global_work_size(n as usize)
                .enqueue_nd_range(dev.queue())?;
        }
    }
    dev.queue().finish()?;
    Ok(())
}

fn sycl(
    device: Location,
    a: &locus::ReadGuard<f32>,
    b: &locus::ReadGuard<f32>,
    c: &locus::WriteGuard<f32>,
) -> Result<(), AnyError> {
    use locus::backends::sycl::KernelArg;
    let dev = locus::device_as::<locus::backends::sycl::SyclDevice>(device)?;
    // The OpenCL C kernel, compiled through the SYCL runtime's kernel-bundle API.
    let kernel = dev.build_opencl_kernel(include_str!("../../shaders/vec_add.cl"), "vec_add")?;
    // USM, or plain host memory where the device has system USM (locus served it in
    // place only then).
    let usm = |native: &Native| match native {
        Native::Sycl { ptr, .. } | Native::Host { ptr } | Native::OpenMp { ptr, .. } => {
            Ok(KernelArg::Pointer(ptr.cast()))
        }
        other => Err(format!("not a pointer SYCL can use: {other:?}")),
    };
    let args = [
        usm(a.native())?,
        usm(b.native())?,
        usm(c.native())?,
        KernelArg::U32(c.len() as u32),
    ];
    if !c.is_empty() {
        // SAFETY: three USM pointers of `len` floats on this device's context and a
        // uint, matching `vec_add(global float*, global float*, global float*, uint)`;
        // the guards keep the memory alive until the launch has finished.
        unsafe { kernel.launch_1d(&dev, &args, c.len())? };
    }
    Ok(())
}

fn webgpu(
    device: Location,
    a: &locus::ReadGuard<f32>,
    b: &locus::ReadGuard<f32>,
    c: &locus::WriteGuard<f32>,
) -> Result<(), AnyError> {
    let dev = locus::device_as::<locus::backends::webgpu::WebGpuDevice>(device)?;
    let gpu = dev.device();
    let module = gpu.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("vec_add"),
        source: wgpu::ShaderSource::Wgsl(include_str!("../../shaders/vec_add.wgsl").into()),
    });
    let pipeline = gpu.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("vec_add"),
        layout: None,
        module: &module,
        entry_point: Some("vec_add"),
        compilation_options: Default::default(),
        cache: None,
    });
    let buffer = |native: &Native| match native {
        Native::WebGpu { buffer, offset } => Ok((buffer.clone(), *offset)),
        other => Err(format!("not a wgpu buffer: {other:?}")),
    };
    let ((ba, oa), (bb, ob), (bc, oc)) = (
        buffer(a.native())?,
        buffer(b.native())?,
        buffer(c.native())?,
    );
    let bytes = (c.len() * 4) as u64;
    let mut encoder = gpu.create_command_encoder(&Default::default());
    // Buffers may exceed one storage binding: bind and dispatch window by window.
    for (offset, size) in locus::backends::webgpu::binding_windows(dev.limits(), bytes, 4) {
        // The kernel's scalar parameter `n` (the window's element count) in a uniform.
        let params = gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some("vec_add params"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut n = [0u8; 16];
        n[..4].copy_from_slice(&((size / 4) as u32).to_ne_bytes());
        dev.queue().write_buffer(&params, 0, &n);
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
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                entry(0, &ba, oa + offset, size),
                entry(1, &bb, ob + offset, size),
                entry(2, &bc, oc + offset, size),
                entry(3, &params, 0, 16),
            ],
        });
        let groups = (size / 4).div_ceil(64) as u32;
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(groups.min(65535), groups.div_ceil(65535), 1);
    }
    let index = dev.queue().submit([encoder.finish()]);
    gpu.poll(wgpu::PollType::Wait {
        submission_index: Some(index),
        timeout: None,
    })?;
    Ok(())
}

/// Prints why `location` cannot run here and exits with status 1.
pub fn unavailable(location: Location) -> ! {
    let why = locus::registry().why_missing(location);
    eprintln!("{} unavailable: {why}", location.technology());
    std::process::exit(1)
}

/// The location named by the first argument, else by `LOCUS_LOCATION`, else the last
/// one this machine has (a device when there is one).
pub fn location_from_args() -> Result<Location, AnyError> {
    match std::env::args()
        .nth(1)
        .or_else(|| std::env::var("LOCUS_LOCATION").ok())
    {
        Some(text) => Ok(text.parse()?),
        None => Ok(*locus::available().last().unwrap_or(&Location::Host)),
    }
}

/// The location named by the first argument, else `default` (the `hello_<technology>`
/// examples: `-- opencl:1` picks another device of the same technology).
pub fn location_or(default: Location) -> Result<Location, AnyError> {
    match std::env::args().nth(1) {
        Some(text) => Ok(text.parse()?),
        None => Ok(default),
    }
}

/// Checks the hello world's sums: `c[i] = 1 + i` (a: ones, b: 0, 1, 2, ...).
pub fn check_sums(c: &[f32]) -> Result<(), AnyError> {
    for (i, &v) in c.iter().enumerate() {
        if v != i as f32 + 1.0 {
            return Err(format!("wrong sum at {i}: {v}, expected {}", i as f32 + 1.0).into());
        }
    }
    Ok(())
}

/// Reads `c` (f32 elements) to the host with locus's one call, `Memory::read`, and
/// prints the route a copy from `c` to host memory like `host` takes.
pub fn read_with_locus(c: &locus::Memory, host: &locus::Memory) -> Result<Vec<f32>, AnyError> {
    let mut values = vec![0.0f32; c.len() / std::mem::size_of::<f32>()];
    c.read(0, bytemuck::cast_slice_mut(&mut values))?;
    println!(
        "route: {}",
        locus::transfer::route_between(c, host, c.len())
    );
    Ok(values)
}

/// Checks the sums read the vendor's way (`raw`) and through locus, and prints them.
pub fn check_both(raw: &[f32], through_locus: &[f32]) -> Result<(), AnyError> {
    check_sums(raw)?;
    check_sums(through_locus)?;
    println!(
        "c = a + b: {:?} ... (both reads agree)",
        &raw[..4.min(raw.len())]
    );
    Ok(())
}
