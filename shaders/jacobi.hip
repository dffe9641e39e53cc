// One Jacobi step for HIP (hiprtc) on an nx x ny row-major grid.
extern "C" __global__ void jacobi(const float *src, float *dst, unsigned nx, unsigned ny) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) {
        return;
    }
    unsigned k = j * nx + i;
    if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
        dst[k] = src[k];
    } else {
        dst[k] = 0.25f * (src[k - 1] + src[k + 1] + src[k - nx] + src[k + nx]);
    }
}
