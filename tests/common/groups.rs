//! What the OpenHMPP group suites share (`tests/groups.rs`, `tests/group_sections.rs`):
//! an element-wise kernel in every language, test data, and what a copy holds and moved.

use locus::codelet::{DType, Intent, Kernel};
use locus::{Buffer, Location};

/// `x[i] = x[i] <op> s` for `i < n`: `name(x: inout f32[], s: f32, n: u32)`, in every
/// language.
pub fn elementwise(name: &str, op: char) -> Kernel {
    let wgsl = format!(
        "struct Params {{ s: f32, n: u32 }}
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;
@compute @workgroup_size(64)
fn {name}(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{
    let i = id.x + id.y * groups.x * 64u;
    if (i < params.n) {{ x[i] = x[i] {op} params.s; }}
}}"
    );
    let opencl = format!(
        "__kernel void {name}(__global float *x, const float s, const uint n) {{
    size_t i = get_global_id(0);
    if (i < n) x[i] = x[i] {op} s;
}}"
    );
    let openmp = format!(
        "#include <stddef.h>
int locus_omp_k_{name}(void **args, size_t gx, size_t gy, int dev) {{
    (void)gy;
    float *x = (float *)args[0];
    float s = *(const float *)args[1];
    size_t n = *(const unsigned *)args[2];
    if (gx < n) n = gx;
    #pragma omp target teams distribute parallel for device(dev) is_device_ptr(x)
    for (size_t i = 0; i < n; ++i) x[i] = x[i] {op} s;
    return 0;
}}"
    );
    let cuda = format!(
        "extern \"C\" __global__ void {name}(float *x, float s, unsigned n) {{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] {op} s;
}}"
    );
    let host: fn(&mut [locus::codelet::HostArg<'_>], [usize; 2]) = match op {
        '*' => |args, global| {
            let (s, n) = (args[1].f32(), args[2].u32() as usize);
            for v in args[0].f32s_mut().iter_mut().take(n.min(global[0])) {
                *v *= s;
            }
        },
        _ => |args, global| {
            let (s, n) = (args[1].f32(), args[2].u32() as usize);
            for v in args[0].f32s_mut().iter_mut().take(n.min(global[0])) {
                *v += s;
            }
        },
    };
    Kernel::new(name)
        .buffer("x", DType::F32, Intent::InOut)
        .scalar("s", DType::F32)
        .scalar("n", DType::U32)
        .wgsl(&wgsl, name, [64, 1, 1])
        .opencl_c(&opencl, name)
        .openmp_c(&openmp, name)
        .cuda(&cuda, name)
        .hip(&cuda, name)
        .host(host)
}

pub fn data(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7 + seed as usize) % 23) as f32)
        .collect()
}

/// The copy at `at` exactly as it is (no coherence action): what a section move left.
pub fn copy_at(b: &Buffer<f32>, at: Location) -> Vec<f32> {
    let memory = b.memory_at(at).unwrap_or_else(|| panic!("a copy at {at}"));
    let mut out = vec![0f32; b.len()];
    memory.read(0, bytemuck::cast_slice_mut(&mut out)).unwrap();
    out
}

pub fn moved(b: &Buffer<f32>) -> u64 {
    b.stats().bytes_moved()
}
