/* HAMR's HIP print (hamr_hip_print.h), over locus: prints an array of HIP device memory
 * (of the active HIP device) on the host. See LICENSE-hamr. */
#ifndef hamr_hip_print_h
#define hamr_hip_print_h

#include "hamr_locus_print.h"

namespace hamr
{
/// prints n_elem values at vals, HIP device memory, to std::cerr; 0 when it worked
template <typename T>
int hip_print(T *vals, size_t n_elem)
{
    return locus_detail::print_at(buffer_allocator::hip, vals, n_elem);
}
}
#endif
