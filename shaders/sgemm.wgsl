// sgemm for WebGPU: C = alpha * A * B + beta * C (row-major; launched n x m).
struct Params { m: u32, n: u32, k: u32, alpha: f32, beta: f32 }

@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(8, 8)
fn sgemm(@builtin(global_invocation_id) id: vec3<u32>) {
    let col = id.x;
    let row = id.y;
    if (row < params.m && col < params.n) {
        var sum = 0.0;
        for (var l = 0u; l < params.k; l = l + 1u) {
            sum = sum + a[row * params.k + l] * b[l * params.n + col];
        }
        c[row * params.n + col] = params.alpha * sum + params.beta * c[row * params.n + col];
    }
}
