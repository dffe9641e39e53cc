/* The allocators HAMR names per technology (hamr_openmp_allocator.h,
 * hamr_cuda_malloc_allocator.h, ...), over locus: arrays of the memory a
 * hamr::buffer_allocator allocates, in a std::shared_ptr that owns the locus memory.
 * See LICENSE-hamr. */
#ifndef hamr_locus_allocator_h
#define hamr_locus_allocator_h

#include "hamr_config.h"
#include "hamr_buffer_locus.h"
#include <memory>
#include <string>
#include <vector>

namespace hamr
{
template <typename T, buffer_allocator A>
struct HAMR_EXPORT locus_allocator
{
    /// n elements (uninitialized); nullptr after printing the error
    static std::shared_ptr<T> allocate(size_t n)
    {
        std::string at; int kind = 0;
        locus_detail::where(A, at, kind);
        bool ok = true;
        auto mem = locus_detail::allocate(at, kind, (n ? n : 1) * sizeof(T), ok);
        if (!ok) return nullptr;
        return std::shared_ptr<T>(mem, (T *)locus_detail::pointer(mem));
    }
    /// n elements set to val
    static std::shared_ptr<T> allocate(size_t n, const T &val)
    {
        std::vector<T> vals(n, val);
        return allocate(n, vals.data());
    }
    /// a copy of n values at vals (host memory)
    template <typename U>
    static std::shared_ptr<T> allocate(size_t n, const U *vals)
    {
        std::string at; int kind = 0;
        locus_detail::where(A, at, kind);
        bool ok = true;
        auto mem = locus_detail::allocate(at, kind, (n ? n : 1) * sizeof(T), ok);
        if (!ok) return nullptr;
        std::vector<T> tmp(vals, vals + n);
        if (n && locus_memory_write(mem.get(), 0, tmp.data(), n * sizeof(T)) != LOCUS_OK)
        {
            HAMR_LOCUS_ERROR(std::string("failed to initialize an array at ") + at);
            return nullptr;
        }
        return std::shared_ptr<T>(mem, (T *)locus_detail::pointer(mem));
    }
};
}
#endif
