// vec_add for WebGPU: c = a + b over one binding window of each buffer.
// Workgroups are laid out in 2-D so that more than 65535 * 64 elements fit one dispatch.
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(64)
fn vec_add(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x + id.y * 65535u * 64u;
    if (i < arrayLength(&c)) {
        c[i] = a[i] + b[i];
    }
}
