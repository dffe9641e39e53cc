// One Jacobi step for OpenCL (and SYCL) on an nx x ny row-major grid: interior points
// become the mean of their four neighbours, boundary points are copied.
__kernel void jacobi(__global const float *src, __global float *dst, const uint nx,
                     const uint ny) {
    size_t i = get_global_id(0);
    size_t j = get_global_id(1);
    if (i >= nx || j >= ny) {
        return;
    }
    size_t k = j * nx + i;
    if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
        dst[k] = src[k];
    } else {
        dst[k] = 0.25f * (src[k - 1] + src[k + 1] + src[k - nx] + src[k + nx]);
    }
}
