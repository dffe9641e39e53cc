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
