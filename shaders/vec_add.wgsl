// vec_add for WebGPU: c = a + b.
// locus convention: buffer parameters at bindings 0.. in order, scalars in one uniform
// struct at the next binding. Every storage binding is read_write, even for inputs:
// pooled allocations are ranges of one wgpu buffer, and wgpu refuses one buffer bound
// both read-only and read-write in the same dispatch. 1-D launches fold into 2-D workgroup grids, so the index
// is id.x + id.y * (workgroups in x) * 64.
struct Params { n: u32 }

@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(64)
fn vec_add(@builtin(global_invocation_id) id: vec3<u32>,
           @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 64u;
    if (i < params.n) {
        c[i] = a[i] + b[i];
    }
}
