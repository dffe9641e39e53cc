"""05 in Python: one codelet, every available target. The same kernel runs in each
technology's own language (locus's shipped ``vec_add``), then a kernel of your own,
given as source strings (and a Python function for the host), scales the result in
place at the target.

    python python/examples/codelet.py [LOCATION]     # default: every available location
"""

import sys

import numpy as np

import locus

SCALE = {
    "opencl_c": """
__kernel void scale(__global float *x, const float s, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) x[i] = x[i] * s;
}""",
    "wgsl": """
struct Params { s: f32, n: u32 }
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;
@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let i = id.x + id.y * g.x * 64u;
    if (i < params.n) { x[i] = x[i] * params.s; }
}""",
    "cuda": """
extern "C" __global__ void scale(float *x, float s, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s;
}""",
    "hip": """
#include <hip/hip_runtime.h>
extern "C" __global__ void scale(float *x, float s, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s;
}""",
    "openmp_c": """
#include <stddef.h>
int locus_omp_k_scale(void **args, size_t gx, size_t gy, int dev) {
    float *x = (float *)args[0];
    float s = *(const float *)args[1];
    size_t n = *(const unsigned *)args[2];
    (void)gy;
    if (gx < n) n = gx;
    #pragma omp target teams distribute parallel for device(dev) is_device_ptr(x)
    for (size_t i = 0; i < n; ++i) x[i] = x[i] * s;
    return 0;
}""",
}


def scale_on_host(args, launch):
    """The host implementation, in Python: numpy copies of the buffers, written back."""
    x, s, n = args
    x[:n] *= s


def main():
    targets = sys.argv[1:] or locus.available()
    n = 1 << 16
    vec_add = locus.kernels.vec_add()
    scale = (
        locus.Kernel("scale")
        .buffer("x", "float32", "inout")
        .scalar("s", "float32")
        .scalar("n", "uint32")
        .opencl_c(SCALE["opencl_c"], "scale")
        .wgsl(SCALE["wgsl"], "scale")
        .openmp_c(SCALE["openmp_c"], "scale")
        .cuda(SCALE["cuda"], "scale")
        .hip(SCALE["hip"], "scale")
        .host(scale_on_host)
    )
    for target in targets:
        a = locus.Buffer("host", n, dtype="float32", fill=1.0)
        b = locus.Buffer.from_array(np.arange(n, dtype=np.float32))
        c = locus.Buffer(target, n, dtype="float32")
        report = locus.Codelet(vec_add, [target]).call([a, b, c, n], launch=n)
        line = f"{report['target']:<9} vec_add moved {report['bytes_moved']:>7} bytes"
        report = locus.Codelet(scale, [target]).call([c, 0.5, n], launch=n)
        line += f"; scale moved {report['bytes_moved']} bytes"
        want = (np.arange(n, dtype=np.float32) + 1.0) * 0.5
        correct = np.array_equal(c.to_numpy(), want)
        print(f"{line}; c[:4] = {c.to_numpy()[:4]}, correct: {correct}")
        if not correct:
            sys.exit(1)


if __name__ == "__main__":
    main()
