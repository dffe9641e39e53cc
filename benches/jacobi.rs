//! Jacobi on a 2048 x 2048 grid, 100 iterations, on every available target: through a
//! locus codelet, through an OpenHMPP group (the two grids resident at the target, mapped
//! crosswise over two codelet labels; one delegated store at the end, not timed), and
//! as the same loop written directly against that technology's own
//! API (opencl3, wgpu, dpctl's SYCL C API, the OpenMP kernel called directly, a Rust
//! loop), in one run. Data is resident on the target in both cases (the first upload
//! and the final download are not timed).
//!
//! `cargo bench --bench jacobi` (LOCUS_JACOBI_N and LOCUS_BENCH_REPS change the grid
//! side and the repetitions).

use std::ffi::c_void;
use std::hint::black_box;
use std::time::{Duration, Instant};

use locus::codelet::{kernels, Arg, Codelet, Group, Launch};
use locus::{Buffer, Location, Technology};

const STEPS: usize = 100;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn init(n: usize) -> Vec<f32> {
    (0..n * n)
        .map(|k| if k % n == 0 { 100.0 } else { 0.0 })
        .collect()
}

/// 100 steps through a codelet.
fn codelet_loop(target: Location, n: usize) -> Result<Duration, Box<dyn std::error::Error>> {
    let kernel = kernels::jacobi();
    let codelet = Codelet::new(&kernel, &[target])?;
    let mut a = Buffer::from_slice(target, &init(n))?;
    let mut b = Buffer::<f32>::zeroed(target, n * n)?;
    let step = |a: &Buffer<f32>, b: &mut Buffer<f32>| {
        codelet.call(
            &mut [
                Arg::buf(a),
                Arg::buf_mut(b),
                Arg::u32(n as u32),
                Arg::u32(n as u32),
            ],
            Launch::d2(n, n),
        )
    };
    step(&a, &mut b)?; // warm-up: builds the kernel
    let t = Instant::now();
    for _ in 0..STEPS - 1 {
        step(&a, &mut b)?;
        std::mem::swap(&mut a, &mut b);
    }
    // The last step waits: on an in-order queue, every earlier step is then done too.
    codelet
        .call_async(
            vec![
                Arg::buf(&a),
                Arg::buf_mut(&mut b),
                Arg::u32(n as u32),
                Arg::u32(n as u32),
            ],
            Launch::d2(n, n),
        )?
        .synchronize()?;
    let elapsed = t.elapsed();
    black_box(a.to_vec()?);
    Ok(elapsed)
}

/// 100 steps through a group: the grids are resident at the target, the calls pass
/// only the sizes.
fn group_loop(target: Location, n: usize) -> Result<Duration, Box<dyn std::error::Error>> {
    let kernel = kernels::jacobi();
    let mut group = Group::new("jacobi", &[target])?
        .codelet("even", &kernel)?
        .codelet("odd", &kernel)?
        .map::<f32>("grid", n * n, &[("even", "src"), ("odd", "dst")])?
        .map::<f32>("next", n * n, &[("even", "dst"), ("odd", "src")])?;
    group.allocate()?;
    group.var_mut::<f32>("grid")?.set(0, &init(n))?;
    let sizes = || [Arg::u32(n as u32), Arg::u32(n as u32)];
    group.call("even", &mut sizes(), Launch::d2(n, n))?; // warm-up: builds the kernel
    group.call("odd", &mut sizes(), Launch::d2(n, n))?;
    let t = Instant::now();
    for i in 0..STEPS - 1 {
        let label = if i % 2 == 0 { "even" } else { "odd" };
        group.call(label, &mut sizes(), Launch::d2(n, n))?;
    }
    // The last step waits: on an in-order queue, every earlier step is then done too.
    group
        .call_async("odd", sizes().into(), Launch::d2(n, n))?
        .synchronize()?;
    let elapsed = t.elapsed();
    group.delegated_store_var("grid", None, Location::Host)?;
    black_box(group.var::<f32>("grid")?.to_vec()?);
    group.release()?;
    Ok(elapsed)
}

fn host_raw(n: usize) -> Duration {
    let mut a = init(n);
    let mut b = vec![0.0f32; n * n];
    kernels::jacobi_reference(&a, &mut b, n, n);
    let t = Instant::now();
    for _ in 0..STEPS {
        kernels::jacobi_reference(&a, &mut b, n, n);
        std::mem::swap(&mut a, &mut b);
    }
    black_box(&a);
    t.elapsed()
}

fn openmp_raw(target: Location, n: usize) -> Result<Duration, Box<dyn std::error::Error>> {
    use locus::Device;
    let dev = locus::device_as::<locus::backends::openmp::OpenMpDevice>(target)?;
    if !dev.executes_on_host() {
        return Err("raw OpenMP baseline written for the initial device only".into());
    }
    let f = locus::backends::openmp::raw_kernel("jacobi")?;
    let mut a = init(n);
    let mut b = vec![0.0f32; n * n];
    let (mut nx, mut ny) = (n as u32, n as u32);
    let mut run = |src: &mut Vec<f32>, dst: &mut Vec<f32>| {
        let mut args: [*mut c_void; 4] = [
            src.as_mut_ptr().cast(),
            dst.as_mut_ptr().cast(),
            (&mut nx as *mut u32).cast(),
            (&mut ny as *mut u32).cast(),
        ];
        // SAFETY: the kernel convention: two n*n float grids in host memory (the initial
        // device) and pointers to the two u32 sizes, all alive for the call.
        unsafe { f(args.as_mut_ptr(), n, n, dev.device_number()) }
    };
    run(&mut a, &mut b);
    let t = Instant::now();
    for _ in 0..STEPS {
        run(&mut a, &mut b);
        std::mem::swap(&mut a, &mut b);
    }
    Ok(t.elapsed())
}

fn opencl_raw(target: Location, n: usize) -> Result<Duration, Box<dyn std::error::Error>> {
    use opencl3::kernel::{ExecuteKernel, Kernel};
    use opencl3::memory::{Buffer as ClBuffer, CL_MEM_READ_WRITE};
    use opencl3::program::Program;
    use opencl3::types::CL_BLOCKING;
    let dev = locus::device_as::<locus::backends::opencl::OpenClDevice>(target)?;
    let program = Program::create_and_build_from_source(
        dev.context(),
        include_str!("../shaders/jacobi.cl"),
        "",
    )?;
    let kernel = Kernel::create(&program, "jacobi")?;
    // SAFETY: plain buffers on the device's context, no host pointer.
    let (mut a, b) = unsafe {
        (
            ClBuffer::<f32>::create(
                dev.context(),
                CL_MEM_READ_WRITE,
                n * n,
                std::ptr::null_mut(),
            )?,
            ClBuffer::<f32>::create(
                dev.context(),
                CL_MEM_READ_WRITE,
                n * n,
                std::ptr::null_mut(),
            )?,
        )
    };
    // SAFETY: a blocking write of n*n floats into an n*n buffer.
    unsafe {
        dev.queue()
            .enqueue_write_buffer(&mut a, CL_BLOCKING, 0, &init(n), &[])?
    };
    let nn = n as u32;
    let step = |src: &ClBuffer<f32>, dst: &ClBuffer<f32>| {
        // SAFETY: arguments match jacobi(src, dst, nx, ny); buffers outlive the finish.
        unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(src)
                .set_arg(dst)
                .set_arg(&nn)
                .set_arg(&nn)
                .set_global_work_sizes(&[n, n])
                .enqueue_nd_range(dev.queue())
        }
    };
    step(&a, &b)?;
    dev.queue().finish()?;
    let t = Instant::now();
    for i in 0..STEPS {
        if i % 2 == 0 {
            step(&a, &b)?;
        } else {
            step(&b, &a)?;
        }
    }
    dev.queue().finish()?;
    Ok(t.elapsed())
}

fn sycl_raw(target: Location, n: usize) -> Result<Duration, Box<dyn std::error::Error>> {
    use locus::backends::sycl::sys::*;
    let dev = locus::device_as::<locus::backends::sycl::SyclDevice>(target)?;
    let api = dev.api();
    let bytes = (n * n * 4) as size_t;
    let source = std::ffi::CString::new(include_str!("../shaders/jacobi.cl"))?;
    // SAFETY: dpctl C API calls on the device's own context, device and queue; results
    // are checked; every object made here is deleted at the end.
    unsafe {
        let bundle = api.DPCTLKernelBundle_CreateFromOCLSource(
            dev.context(),
            dev.device_ref(),
            source.as_ptr(),
            c"".as_ptr(),
        );
        if bundle.is_null() {
            return Err("DPCTLKernelBundle_CreateFromOCLSource failed".into());
        }
        let kernel = api.DPCTLKernelBundle_GetKernel(bundle, c"jacobi".as_ptr());
        let a = api.DPCTLmalloc_device(bytes, dev.queue());
        let b = api.DPCTLmalloc_device(bytes, dev.queue());
        if kernel.is_null() || a.is_null() || b.is_null() {
            return Err("kernel or USM allocation failed".into());
        }
        let grid = init(n);
        let e = api.DPCTLQueue_Memcpy(dev.queue(), a.cast(), grid.as_ptr().cast(), bytes);
        api.DPCTLEvent_Wait(e);
        api.DPCTLEvent_Delete(e);
        let mut nn = n as u32;
        let mut mm = n as u32;
        let types = [
            DPCTLKernelArgType_DPCTL_VOID_PTR,
            DPCTLKernelArgType_DPCTL_VOID_PTR,
            DPCTLKernelArgType_DPCTL_UINT32_T,
            DPCTLKernelArgType_DPCTL_UINT32_T,
        ];
        let range: [size_t; 3] = [n as size_t, n as size_t, 1];
        let mut submit = |s: *mut c_void, d: *mut c_void| {
            let mut args: [*mut c_void; 4] = [
                s,
                d,
                (&mut nn as *mut u32).cast(),
                (&mut mm as *mut u32).cast(),
            ];
            api.DPCTLQueue_SubmitRange(
                kernel,
                dev.queue(),
                args.as_mut_ptr(),
                types.as_ptr(),
                4,
                range.as_ptr(),
                2,
                std::ptr::null(),
                0,
            )
        };
        let e = submit(a.cast(), b.cast());
        api.DPCTLEvent_Wait(e);
        api.DPCTLEvent_Delete(e);
        let t = Instant::now();
        let mut last: DPCTLSyclEventRef = std::ptr::null_mut();
        for i in 0..STEPS {
            if !last.is_null() {
                api.DPCTLEvent_Delete(last);
            }
            last = if i % 2 == 0 {
                submit(a.cast(), b.cast())
            } else {
                submit(b.cast(), a.cast())
            };
        }
        api.DPCTLQueue_Wait(dev.queue());
        let elapsed = t.elapsed();
        api.DPCTLEvent_Delete(last);
        api.DPCTLfree_with_queue(a, dev.queue());
        api.DPCTLfree_with_queue(b, dev.queue());
        api.DPCTLKernel_Delete(kernel);
        api.DPCTLKernelBundle_Delete(bundle);
        Ok(elapsed)
    }
}

fn webgpu_raw(target: Location, n: usize) -> Result<Duration, Box<dyn std::error::Error>> {
    let dev = locus::device_as::<locus::backends::webgpu::WebGpuDevice>(target)?;
    let gpu = dev.device();
    let module = gpu.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("jacobi"),
        source: wgpu::ShaderSource::Wgsl(include_str!("../shaders/jacobi.wgsl").into()),
    });
    let pipeline = gpu.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("jacobi"),
        layout: None,
        module: &module,
        entry_point: Some("jacobi"),
        compilation_options: Default::default(),
        cache: None,
    });
    let storage = |label| {
        gpu.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (n * n * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    };
    let (a, b) = (storage("a"), storage("b"));
    dev.queue()
        .write_buffer(&a, 0, bytemuck::cast_slice(&init(n)));
    let params = gpu.create_buffer(&wgpu::BufferDescriptor {
        label: Some("params"),
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    dev.queue().write_buffer(
        &params,
        0,
        bytemuck::cast_slice(&[n as u32, n as u32, 0, 0]),
    );
    let group = |s: &wgpu::Buffer, d: &wgpu::Buffer| {
        gpu.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: s.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: d.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: params.as_entire_binding(),
                },
            ],
        })
    };
    let (ab, ba) = (group(&a, &b), group(&b, &a));
    let groups = (n as u32).div_ceil(8);
    let step = |g: &wgpu::BindGroup| {
        let mut encoder = gpu.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, g, &[]);
            pass.dispatch_workgroups(groups, groups, 1);
        }
        dev.queue().submit([encoder.finish()])
    };
    let wait = |index| {
        gpu.poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })
    };
    wait(step(&ab))?;
    let t = Instant::now();
    let mut last = None;
    for i in 0..STEPS {
        last = Some(step(if i % 2 == 0 { &ab } else { &ba }));
    }
    if let Some(index) = last {
        wait(index)?;
    }
    Ok(t.elapsed())
}

fn raw_loop(
    target: Location,
    n: usize,
) -> Result<(Duration, &'static str), Box<dyn std::error::Error>> {
    Ok(match target.technology() {
        Technology::Host => (host_raw(n), "Rust loop"),
        Technology::OpenMp => (openmp_raw(target, n)?, "OpenMP kernel called directly"),
        Technology::OpenCl => (opencl_raw(target, n)?, "opencl3 enqueue loop"),
        Technology::Sycl => (sycl_raw(target, n)?, "DPCTLQueue_SubmitRange loop"),
        Technology::WebGpu => (webgpu_raw(target, n)?, "wgpu dispatch loop"),
        other => return Err(format!("no raw baseline for {other}").into()),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let n = env("LOCUS_JACOBI_N", 2048);
    let reps = locus_cli::bench::timing::reps(3);
    println!("Jacobi {n} x {n}, {STEPS} iterations per run, median of {reps} runs (codelet, group and raw alternate)");
    println!(
        "{:<10} {:>14} {:>14} {:>14} {:>10} {:>10}  raw baseline",
        "target", "codelet ms/it", "group ms/it", "raw ms/it", "codelet", "group"
    );
    for target in locus::available() {
        let (mut ours, mut grouped, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
        let mut name = "";
        for _ in 0..reps {
            ours.push(codelet_loop(target, n)?);
            grouped.push(group_loop(target, n)?);
            let (t, what) = raw_loop(target, n)?;
            theirs.push(t);
            name = what;
        }
        ours.sort();
        grouped.sort();
        theirs.sort();
        let per_it = |d: Duration| d.as_secs_f64() * 1e3 / STEPS as f64;
        let (o, g, r) = (
            per_it(ours[reps / 2]),
            per_it(grouped[reps / 2]),
            per_it(theirs[reps / 2]),
        );
        println!(
            "{:<10} {o:>14.3} {g:>14.3} {r:>14.3} {:>9.1}% {:>9.1}%  {name}",
            target.to_string(),
            (o / r - 1.0) * 100.0,
            (g / r - 1.0) * 100.0
        );
    }
    Ok(())
}
