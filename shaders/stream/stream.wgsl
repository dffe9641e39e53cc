// BabelStream's five kernels in WGSL (WebGPU), f32 only: WGSL has no f64.
// See stream.cl for what each kernel does. locus's conventions: buffer parameters bound
// at 0.. in order, scalars in one uniform struct after them; every storage binding is
// read_write (pooled allocations are ranges of one wgpu buffer); 1-D launches fold into
// a 2-D grid of workgroups, so an item's index is id.x + id.y * groups.x * 64.
// WGSL has one entry point per pipeline but any number per module: locus builds this
// module once per kernel and binds only that kernel's variables, so each kernel declares
// its own (the names say which kernel they belong to).

struct Length { n: u32 }
struct Scaled { scalar: f32, n: u32 }
struct Parts { n: u32, parts: u32 }

// copy: c = a
@group(0) @binding(0) var<storage, read_write> copy_a: array<f32>;
@group(0) @binding(1) var<storage, read_write> copy_c: array<f32>;
@group(0) @binding(2) var<uniform> copy_params: Length;

@compute @workgroup_size(64)
fn stream_copy(@builtin(global_invocation_id) id: vec3<u32>,
               @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 64u;
    if (i < copy_params.n) {
        copy_c[i] = copy_a[i];
    }
}

// mul: b = scalar * c
@group(0) @binding(0) var<storage, read_write> mul_c: array<f32>;
@group(0) @binding(1) var<storage, read_write> mul_b: array<f32>;
@group(0) @binding(2) var<uniform> mul_params: Scaled;

@compute @workgroup_size(64)
fn stream_mul(@builtin(global_invocation_id) id: vec3<u32>,
              @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 64u;
    if (i < mul_params.n) {
        mul_b[i] = mul_params.scalar * mul_c[i];
    }
}

// add: c = a + b
@group(0) @binding(0) var<storage, read_write> add_a: array<f32>;
@group(0) @binding(1) var<storage, read_write> add_b: array<f32>;
@group(0) @binding(2) var<storage, read_write> add_c: array<f32>;
@group(0) @binding(3) var<uniform> add_params: Length;

@compute @workgroup_size(64)
fn stream_add(@builtin(global_invocation_id) id: vec3<u32>,
              @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 64u;
    if (i < add_params.n) {
        add_c[i] = add_a[i] + add_b[i];
    }
}

// triad: a = b + scalar * c
@group(0) @binding(0) var<storage, read_write> triad_b: array<f32>;
@group(0) @binding(1) var<storage, read_write> triad_c: array<f32>;
@group(0) @binding(2) var<storage, read_write> triad_a: array<f32>;
@group(0) @binding(3) var<uniform> triad_params: Scaled;

@compute @workgroup_size(64)
fn stream_triad(@builtin(global_invocation_id) id: vec3<u32>,
                @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 64u;
    if (i < triad_params.n) {
        triad_a[i] = triad_b[i] + triad_params.scalar * triad_c[i];
    }
}

// dot: partial sums of a * b, one per item (a grid-stride loop), added on the host.
@group(0) @binding(0) var<storage, read_write> dot_a: array<f32>;
@group(0) @binding(1) var<storage, read_write> dot_b: array<f32>;
@group(0) @binding(2) var<storage, read_write> dot_partial: array<f32>;
@group(0) @binding(3) var<uniform> dot_params: Parts;

@compute @workgroup_size(64)
fn stream_dot(@builtin(global_invocation_id) id: vec3<u32>,
              @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 64u;
    if (i < dot_params.parts) {
        var sum = 0.0;
        for (var j = i; j < dot_params.n; j += dot_params.parts) {
            sum += dot_a[j] * dot_b[j];
        }
        dot_partial[i] = sum;
    }
}
