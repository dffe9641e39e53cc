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

/* The codelet entry point. locus convention for OpenMP kernels:
 *   int locus_omp_k_<name>(void **args, size_t gx, size_t gy, int dev)
 * args[i] is the device pointer of buffer parameter i, or a pointer to the value of
 * scalar parameter i, in the kernel's parameter order. */
int locus_omp_k_vec_add(void **args, size_t gx, size_t gy, int dev) {
    (void)gy;
    unsigned n = *(const unsigned *)args[3];
    return locus_omp_vec_add_f32((const float *)args[0], (const float *)args[1],
                                 (float *)args[2], n < gx ? n : gx, dev);
}
