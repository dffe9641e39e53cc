/* HAMR's OpenMP allocator (hamr_openmp_allocator.h), over locus: arrays of OpenMP device
 * memory (locus's openmp:<active device>) in a std::shared_ptr that owns the locus
 * memory. See LICENSE-hamr. */
#ifndef hamr_openmp_allocator_h
#define hamr_openmp_allocator_h

#include "hamr_locus_allocator.h"

namespace hamr
{
template <typename T>
struct HAMR_EXPORT openmp_allocator : locus_allocator<T, buffer_allocator::openmp> {};
}
#endif
