/* HAMR's cuda_malloc_uva_allocator (hamr_cuda_malloc_uva_allocator.h), over locus: arrays allocated as
 * hamr::buffer_allocator::cuda_uva allocates (locus's memory of that kind), in a
 * std::shared_ptr that owns the locus memory. See LICENSE-hamr. */
#ifndef hamr_cuda_malloc_uva_allocator_h
#define hamr_cuda_malloc_uva_allocator_h

#include "hamr_locus_allocator.h"

namespace hamr
{
template <typename T>
struct HAMR_EXPORT cuda_malloc_uva_allocator : locus_allocator<T, buffer_allocator::cuda_uva> {};
}
#endif
