/* The OpenMP runtime calls locus needs, as plain C symbols in one shared object that is
 * loaded at run time (so a binary without libgomp still starts). */
#include <omp.h>
#include <stddef.h>

int locus_omp_num_devices(void) { return omp_get_num_devices(); }
int locus_omp_initial_device(void) { return omp_get_initial_device(); }
int locus_omp_default_device(void) { return omp_get_default_device(); }

/* 1 when target regions on `dev` run on the host (the initial device, or fallback). */
int locus_omp_runs_on_host(int dev) {
    int on_host = 1;
#pragma omp target device(dev) map(from : on_host)
    { on_host = omp_is_initial_device(); }
    return on_host;
}

void *locus_omp_alloc(size_t bytes, int dev) { return omp_target_alloc(bytes, dev); }
void locus_omp_free(void *ptr, int dev) { omp_target_free(ptr, dev); }

int locus_omp_memcpy(void *dst, const void *src, size_t len, size_t dst_offset,
                     size_t src_offset, int dst_dev, int src_dev) {
    return omp_target_memcpy(dst, (void *)src, len, dst_offset, src_offset, dst_dev, src_dev);
}

/* omp_target_memcpy_rect of bytes (element size 1): `volume`, `dst_dims` and `src_dims`
 * hold `num_dims` extents, outermost first; both pointers address the rectangles' first
 * bytes (offsets 0). */
int locus_omp_memcpy_rect(void *dst, const void *src, int num_dims, const size_t *volume,
                          const size_t *dst_dims, const size_t *src_dims, int dst_dev,
                          int src_dev) {
    size_t zeros[3] = {0, 0, 0};
    if (num_dims < 1 || num_dims > 3) return -1;
    return omp_target_memcpy_rect(dst, (void *)src, 1, num_dims, volume, zeros, zeros, dst_dims,
                                  src_dims, dst_dev, src_dev);
}

int locus_omp_fill(void *ptr, size_t offset, size_t len, const unsigned char *pattern,
                   size_t pattern_len, int dev) {
    unsigned char *base = (unsigned char *)ptr + offset;
#pragma omp target teams distribute parallel for device(dev) is_device_ptr(base) \
    map(to : pattern[0:pattern_len])
    for (size_t i = 0; i < len; ++i) {
        base[i] = pattern[i % pattern_len];
    }
    return 0;
}
