/* BabelStream's five kernels for OpenMP, in f32 and f64 (locus's codelet convention,
 * see ../vec_add_openmp.c: args[i] is the device pointer of buffer parameter i, or a
 * pointer to scalar parameter i, in the kernel's parameter order; gx is the launch).
 * See stream.cl for what each kernel does. OpenMP's form: one `target teams distribute
 * parallel for` loop per kernel over device pointers; dot is OpenMP's own reduction
 * (in double), its sum written to partial[0] and the other partial sums zeroed, so the
 * host adds them the same way as for the other languages. Built by build.rs into the OpenMP
 * kernel library that locus loads at run time. */
#include <stddef.h>

static size_t bounded(const void *n, size_t gx) {
    size_t v = *(const unsigned *)n;
    return v < gx ? v : gx;
}

#define STREAM_KERNELS(T, SUFFIX)                                                        \
    int locus_omp_k_stream_copy_##SUFFIX(void **args, size_t gx, size_t gy, int dev) {   \
        (void)gy;                                                                        \
        const T *a = (const T *)args[0];                                                 \
        T *c = (T *)args[1];                                                             \
        size_t n = bounded(args[2], gx);                                                 \
        _Pragma("omp target teams distribute parallel for device(dev) is_device_ptr(a, c)") \
        for (size_t i = 0; i < n; ++i) {                                                 \
            c[i] = a[i];                                                                 \
        }                                                                                \
        return 0;                                                                        \
    }                                                                                    \
    int locus_omp_k_stream_mul_##SUFFIX(void **args, size_t gx, size_t gy, int dev) {    \
        (void)gy;                                                                        \
        T scalar = *(const T *)args[0];                                                  \
        const T *c = (const T *)args[1];                                                 \
        T *b = (T *)args[2];                                                             \
        size_t n = bounded(args[3], gx);                                                 \
        _Pragma("omp target teams distribute parallel for device(dev) is_device_ptr(b, c)") \
        for (size_t i = 0; i < n; ++i) {                                                 \
            b[i] = scalar * c[i];                                                        \
        }                                                                                \
        return 0;                                                                        \
    }                                                                                    \
    int locus_omp_k_stream_add_##SUFFIX(void **args, size_t gx, size_t gy, int dev) {    \
        (void)gy;                                                                        \
        const T *a = (const T *)args[0];                                                 \
        const T *b = (const T *)args[1];                                                 \
        T *c = (T *)args[2];                                                             \
        size_t n = bounded(args[3], gx);                                                 \
        _Pragma("omp target teams distribute parallel for device(dev) is_device_ptr(a, b, c)") \
        for (size_t i = 0; i < n; ++i) {                                                 \
            c[i] = a[i] + b[i];                                                          \
        }                                                                                \
        return 0;                                                                        \
    }                                                                                    \
    int locus_omp_k_stream_triad_##SUFFIX(void **args, size_t gx, size_t gy, int dev) {  \
        (void)gy;                                                                        \
        T scalar = *(const T *)args[0];                                                  \
        const T *b = (const T *)args[1];                                                 \
        const T *c = (const T *)args[2];                                                 \
        T *a = (T *)args[3];                                                             \
        size_t n = bounded(args[4], gx);                                                 \
        _Pragma("omp target teams distribute parallel for device(dev) is_device_ptr(a, b, c)") \
        for (size_t i = 0; i < n; ++i) {                                                 \
            a[i] = b[i] + scalar * c[i];                                                 \
        }                                                                                \
        return 0;                                                                        \
    }                                                                                    \
    int locus_omp_k_stream_dot_##SUFFIX(void **args, size_t gx, size_t gy, int dev) {    \
        (void)gy;                                                                        \
        const T *a = (const T *)args[0];                                                 \
        const T *b = (const T *)args[1];                                                 \
        T *partial = (T *)args[2];                                                       \
        size_t n = *(const unsigned *)args[3];                                           \
        size_t parts = bounded(args[4], gx);                                             \
        double sum = 0; /* a float total of millions of terms would lose its low digits */ \
        if (parts == 0) {                                                                \
            return 0;                                                                    \
        }                                                                                \
        _Pragma("omp target teams distribute parallel for device(dev) is_device_ptr(a, b) map(tofrom: sum) reduction(+: sum)") \
        for (size_t i = 0; i < n; ++i) {                                                 \
            sum += (double)(a[i] * b[i]);                                                \
        }                                                                                \
        _Pragma("omp target teams distribute parallel for device(dev) is_device_ptr(partial)") \
        for (size_t i = 0; i < parts; ++i) {                                             \
            partial[i] = i == 0 ? (T)sum : 0;                                            \
        }                                                                                \
        return 0;                                                                        \
    }

STREAM_KERNELS(float, f32)
STREAM_KERNELS(double, f64)
