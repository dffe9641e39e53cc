/* The f64 kernels for OpenMP (locus codelet convention, see vec_add_openmp.c):
 * vec_add_f64: c = a + b; daxpy: y = a * x + y. */
#include <stddef.h>

int locus_omp_k_vec_add_f64(void **args, size_t gx, size_t gy, int dev) {
    (void)gy;
    const double *a = (const double *)args[0];
    const double *b = (const double *)args[1];
    double *c = (double *)args[2];
    size_t n = *(const unsigned *)args[3];
    if (gx < n) {
        n = gx;
    }
#pragma omp target teams distribute parallel for device(dev) is_device_ptr(a, b, c)
    for (size_t i = 0; i < n; ++i) {
        c[i] = a[i] + b[i];
    }
    return 0;
}

int locus_omp_k_daxpy(void **args, size_t gx, size_t gy, int dev) {
    (void)gy;
    double a = *(const double *)args[0];
    const double *x = (const double *)args[1];
    double *y = (double *)args[2];
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
