/* HAMR's hip_malloc_allocator (hamr_hip_malloc_allocator.h), over locus: arrays allocated as
 * hamr::buffer_allocator::hip allocates (locus's memory of that kind), in a
 * std::shared_ptr that owns the locus memory. See LICENSE-hamr. */
#ifndef hamr_hip_malloc_allocator_h
#define hamr_hip_malloc_allocator_h

#include "hamr_locus_allocator.h"

namespace hamr
{
template <typename T>
struct HAMR_EXPORT hip_malloc_allocator : locus_allocator<T, buffer_allocator::hip> {};
}
#endif
