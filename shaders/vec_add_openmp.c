/* vec_add for OpenMP: c[i] = a[i] + b[i] on OpenMP device `dev`.
 * The pointers are device pointers (omp_target_alloc, or host addresses when `dev` is
 * the initial device). Built by build.rs into the OpenMP kernel library that locus
 * loads at run time. */
#include <stddef.h>

int locus_omp_vec_add_f32(const float *a, const float *b, float *c, size_t n, int dev) {
#pragma omp target teams distribute parallel for device(dev) is_device_ptr(a, b, c)
    for (size_t i = 0; i < n; ++i) {
        c[i] = a[i] + b[i];
    }
    return 0;
}
