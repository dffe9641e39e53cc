/* HAMR's OpenMP print (hamr_openmp_print.h), over locus: prints an array of OpenMP
 * device memory (of the active OpenMP device) on the host. See LICENSE-hamr. */
#ifndef hamr_openmp_print_h
#define hamr_openmp_print_h

#include "hamr_locus_print.h"

namespace hamr
{
/// prints n_elem values at vals, OpenMP device memory, to std::cerr; 0 when it worked
template <typename T>
int openmp_print(T *vals, size_t n_elem)
{
    return locus_detail::print_at(buffer_allocator::openmp, vals, n_elem);
}
}
#endif
