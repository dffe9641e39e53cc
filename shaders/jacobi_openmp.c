/* One Jacobi step for OpenMP on an nx x ny row-major grid (locus codelet convention,
 * see vec_add_openmp.c): interior points become the mean of their four neighbours,
 * boundary points are copied. */
#include <stddef.h>

int locus_omp_k_jacobi(void **args, size_t gx, size_t gy, int dev) {
    const float *src = (const float *)args[0];
    float *dst = (float *)args[1];
    size_t nx = *(const unsigned *)args[2];
    size_t ny = *(const unsigned *)args[3];
    if (gx < nx) {
        nx = gx;
    }
    if (gy < ny) {
        ny = gy;
    }
#pragma omp target teams distribute parallel for collapse(2) device(dev) is_device_ptr(src, dst)
    for (size_t j = 0; j < ny; ++j) {
        for (size_t i = 0; i < nx; ++i) {
            size_t k = j * nx + i;
            if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
                dst[k] = src[k];
            } else {
                dst[k] = 0.25f * (src[k - 1] + src[k + 1] + src[k - nx] + src[k + nx]);
            }
        }
    }
    return 0;
}
