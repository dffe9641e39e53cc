// sgemm for OpenCL (and SYCL through OpenCL-C kernel bundles), OpenHMPP's example:
// C = alpha * A * B + beta * C, A m x k, B k x n, C m x n, row-major; launched 2-D as
// n x m (x: the column of C).
__kernel void sgemm(const uint m, const uint n, const uint k, const float alpha,
                    __global const float *a, __global const float *b, const float beta,
                    __global float *c) {
    size_t col = get_global_id(0);
    size_t row = get_global_id(1);
    if (row < m && col < n) {
        float sum = 0.0f;
        for (uint l = 0; l < k; ++l) {
            sum += a[row * k + l] * b[l * n + col];
        }
        c[row * n + col] = alpha * sum + beta * c[row * n + col];
    }
}
