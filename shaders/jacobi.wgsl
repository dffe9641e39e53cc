// One Jacobi step for WebGPU on an nx x ny grid (row-major): interior points become the
// mean of their four neighbours, boundary points are copied.
struct Params { nx: u32, ny: u32 }

@group(0) @binding(0) var<storage, read_write> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(8, 8)
fn jacobi(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let nx = params.nx;
    let ny = params.ny;
    if (i >= nx || j >= ny) {
        return;
    }
    let k = j * nx + i;
    if (i == 0u || j == 0u || i == nx - 1u || j == ny - 1u) {
        dst[k] = src[k];
    } else {
        dst[k] = 0.25 * (src[k - 1u] + src[k + 1u] + src[k - nx] + src[k + nx]);
    }
}
