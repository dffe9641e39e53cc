/* HAMR's OpenMP print (hamr_openmp_print.h): prints an array of OpenMP device memory on
 * the host, through the OpenMP runtime (compile with -fopenmp). See LICENSE-hamr. */
#ifndef hamr_openmp_print_h
#define hamr_openmp_print_h

#include "hamr_config.h"
#include <cstddef>
#include <iostream>
#include <vector>
#if defined(HAMR_ENABLE_OPENMP)
#include <omp.h>
#endif

namespace hamr
{
/// prints n_elem values at vals, OpenMP device memory, to std::cerr; 0 when it worked
template <typename T>
int openmp_print(T *vals, size_t n_elem)
{
#if !defined(HAMR_ENABLE_OPENMP)
    (void)vals;
    (void)n_elem;
    std::cerr << "[" << __FILE__ << ":" << __LINE__ << "] ERROR:"
        " print_openmp failed because OpenMP is not enabled." << std::endl;
    return -1;
#else
    std::vector<T> tmp(n_elem);
    if (n_elem && omp_target_memcpy(tmp.data(), vals, n_elem * sizeof(T), 0, 0,
            omp_get_initial_device(), omp_get_default_device()))
    {
        std::cerr << "[" << __FILE__ << ":" << __LINE__ << "] ERROR:"
            " failed to move data to the host" << std::endl;
        return -1;
    }
    if (n_elem)
    {
        std::cerr << tmp[0];
        for (size_t i = 1; i < n_elem; ++i) std::cerr << ", " << tmp[i];
    }
    std::cerr << std::endl;
    return 0;
#endif
}
}
#endif
