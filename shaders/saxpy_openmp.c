/* saxpy for OpenMP: y = a * x + y (locus codelet convention, see vec_add_openmp.c). */
#include <stddef.h>

int locus_omp_k_saxpy(void **args, size_t gx, size_t gy, int dev) {
    (void)gy;
    float a = *(const float *)args[0];
    const float *x = (const float *)args[1];
    float *y = (float *)args[2];
    size_t n = *(const unsigned *)args[3];
    if (gx < n) {
        n = gx;
    }
#pragma omp target teams distribute parallel for device(dev) is_device_ptr(x, y)
    for (size_t i = 0; i < n; ++i) {
        y[i] = a * x[i] + y[i];
    }
    return 0;
}
