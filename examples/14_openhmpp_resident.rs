//! 14: OpenHMPP's `resident`: one variable global to a group, used by two codelets
//! without being passed, allocated at the accelerator once and kept there.
//!
//! ```c
//! #pragma hmpp <affine> group, target=...
//! #pragma hmpp <affine> resident, args[::x].io=inout, args[::x].size={N}
//! float x[N];
//! #pragma hmpp <affine> scale codelet
//! void scale(float s, unsigned n) { for (i = 0; i < n; i++) x[i] *= s; }
//! #pragma hmpp <affine> shift codelet
//! void shift(float d, unsigned n) { for (i = 0; i < n; i++) x[i] += d; }
//! ```
//!
//! `cargo run --release --example 14_openhmpp_resident -- webgpu:0`

mod common;

use locus::codelet::{Arg, DType, Group, HostArg, Intent, Kernel, Launch};
use locus::Location;

/// `x[i] = x[i] <op> s`: `name(x: inout f32[], s: f32, n: u32)` in WGSL, OpenCL C,
/// OpenMP C and Rust.
fn elementwise(name: &str, op: char, host: fn(&mut [HostArg<'_>], [usize; 2])) -> Kernel {
    Kernel::new(name)
        .buffer("x", DType::F32, Intent::InOut)
        .scalar("s", DType::F32)
        .scalar("n", DType::U32)
        .wgsl(
            &format!(
                "struct Params {{ s: f32, n: u32 }}
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;
@compute @workgroup_size(64)
fn {name}(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {{
    let i = id.x + id.y * g.x * 64u;
    if (i < params.n) {{ x[i] = x[i] {op} params.s; }}
}}"
            ),
            name,
            [64, 1, 1],
        )
        .opencl_c(
            &format!(
                "__kernel void {name}(__global float *x, const float s, const uint n) {{
    size_t i = get_global_id(0);
    if (i < n) x[i] = x[i] {op} s;
}}"
            ),
            name,
        )
        .openmp_c(
            &format!(
                "#include <stddef.h>
int locus_omp_k_{name}(void **args, size_t gx, size_t gy, int dev) {{
    float *x = (float *)args[0];
    float s = *(const float *)args[1];
    size_t n = *(const unsigned *)args[2];
    (void)gy;
    if (gx < n) n = gx;
    #pragma omp target teams distribute parallel for device(dev) is_device_ptr(x)
    for (size_t i = 0; i < n; ++i) x[i] = x[i] {op} s;
    return 0;
}}"
            ),
            name,
        )
        .host(host)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = common::location_from_args()?;
    let n = 100_000;
    let scale = elementwise("scale", '*', |args, _| {
        let s = args[1].f32();
        args[0].f32s_mut().iter_mut().for_each(|v| *v *= s);
    });
    let shift = elementwise("shift", '+', |args, _| {
        let s = args[1].f32();
        args[0].f32s_mut().iter_mut().for_each(|v| *v += s);
    });
    let mut group = Group::new("affine", &[target, Location::Host])?
        .codelet("scale", &scale)?
        .codelet("shift", &shift)?
        .resident::<f32>("x", n)?;
    let at = group.allocate()?;
    group.var_mut::<f32>("x")?.set(0, &vec![1.0; n])?;
    let loaded = group.var::<f32>("x")?.stats().bytes_moved();
    println!("resident x: {n} floats at {at} (set: {loaded} bytes)");
    let mut expect = 1.0f32;
    for round in 1..=5 {
        let s = round as f32;
        // scale(s, n); shift(-s, n);  x is nobody's argument: it is the group's.
        group.call(
            "scale",
            &mut [Arg::f32(s), Arg::u32(n as u32)],
            Launch::d1(n),
        )?;
        group.call(
            "shift",
            &mut [Arg::f32(-s), Arg::u32(n as u32)],
            Launch::d1(n),
        )?;
        expect = expect * s - s;
    }
    let moved = group.var::<f32>("x")?.stats().bytes_moved() - loaded;
    println!("10 calls at {at}: x moved {moved} bytes between them");
    let x = group.var::<f32>("x")?.to_vec()?;
    println!(
        "x[0] = {} (expected {expect}), all equal: {}",
        x[0],
        x.iter().all(|&v| v == expect)
    );
    if moved != 0 || x.iter().any(|&v| v != expect) {
        eprintln!("FAIL");
        std::process::exit(1);
    }
    group.release()?;
    Ok(())
}
