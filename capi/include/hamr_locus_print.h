/* The print functions HAMR names per technology (openmp_print, cuda_print, hip_print),
 * over locus: the device array is adopted as locus memory of that location (nothing
 * copied, nothing freed), read to the host, and printed to std::cerr as HAMR prints it.
 * See LICENSE-hamr. */
#ifndef hamr_locus_print_h
#define hamr_locus_print_h

#include "hamr_config.h"
#include "hamr_buffer_locus.h"
#include <iostream>
#include <string>
#include <vector>

namespace hamr
{
namespace locus_detail
{
/// prints n_elem values at vals, memory of allocator A's location, to std::cerr
template <typename T>
int print_at(buffer_allocator alloc, const T *vals, size_t n_elem)
{
    std::string at; int kind = 0;
    where(alloc, at, kind);
    std::vector<T> tmp(n_elem);
    if (n_elem)
    {
        LocusMemory *m = nullptr;
        if (locus_memory_adopt(at.c_str(), kind, (void *)vals, n_elem * sizeof(T), &m) != LOCUS_OK)
            return HAMR_LOCUS_ERROR("failed to move data to the host from " + at);
        LocusStatus s = locus_memory_read(m, 0, tmp.data(), n_elem * sizeof(T));
        locus_memory_free(m);
        if (s != LOCUS_OK)
            return HAMR_LOCUS_ERROR("failed to move data to the host from " + at);
        std::cerr << tmp[0];
        for (size_t i = 1; i < n_elem; ++i) std::cerr << ", " << tmp[i];
    }
    std::cerr << std::endl;
    return 0;
}
}
}
#endif
