/* HAMR's CUDA print (hamr_cuda_print.h), over locus: prints an array of CUDA device
 * memory (of the active CUDA device) on the host. See LICENSE-hamr. */
#ifndef hamr_cuda_print_h
#define hamr_cuda_print_h

#include "hamr_locus_print.h"
#include "hamr_stream.h"

namespace hamr
{
/// prints n_elem values at vals, CUDA device memory, to std::cerr; 0 when it worked (the
/// copy completes before this returns, so `strm` needs no wait)
template <typename T>
int cuda_print(const hamr::stream &strm, T *vals, size_t n_elem)
{
    (void)strm;
    return locus_detail::print_at(buffer_allocator::cuda, vals, n_elem);
}
}
#endif
