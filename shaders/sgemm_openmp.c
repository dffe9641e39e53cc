/* sgemm for OpenMP: C = alpha * A * B + beta * C, row-major (locus codelet convention,
 * see vec_add_openmp.c; launched n x m). */
#include <stddef.h>

int locus_omp_k_sgemm(void **args, size_t gx, size_t gy, int dev) {
    size_t m = *(const unsigned *)args[0];
    size_t n = *(const unsigned *)args[1];
    size_t k = *(const unsigned *)args[2];
    float alpha = *(const float *)args[3];
    const float *a = (const float *)args[4];
    const float *b = (const float *)args[5];
    float beta = *(const float *)args[6];
    float *c = (float *)args[7];
    size_t rows = gy < m ? gy : m;
    size_t cols = gx < n ? gx : n;
#pragma omp target teams distribute parallel for collapse(2) device(dev) is_device_ptr(a, b, c)
    for (size_t row = 0; row < rows; ++row) {
        for (size_t col = 0; col < cols; ++col) {
            float sum = 0.0f;
            for (size_t l = 0; l < k; ++l) {
                sum += a[row * k + l] * b[l * n + col];
            }
            c[row * n + col] = alpha * sum + beta * c[row * n + col];
        }
    }
    return 0;
}
