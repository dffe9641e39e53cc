// sgemm for CUDA (NVRTC): C = alpha * A * B + beta * C (row-major; launched n x m).
extern "C" __global__ void sgemm(unsigned m, unsigned n, unsigned k, float alpha,
                                 const float *a, const float *b, float beta, float *c) {
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (unsigned l = 0; l < k; ++l) {
            sum += a[row * k + l] * b[l * n + col];
        }
        c[row * n + col] = alpha * sum + beta * c[row * n + col];
    }
}
