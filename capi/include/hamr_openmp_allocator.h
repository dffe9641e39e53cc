/* HAMR's OpenMP allocator (hamr_openmp_allocator.h), over locus: arrays of OpenMP device
 * memory (locus's openmp:<active device>) in a std::shared_ptr that owns the locus
 * memory. See LICENSE-hamr. */
#ifndef hamr_openmp_allocator_h
#define hamr_openmp_allocator_h

#include "hamr_config.h"
#include "hamr_buffer_locus.h"
#include <memory>
#include <string>
#include <vector>

namespace hamr
{
template <typename T>
struct HAMR_EXPORT openmp_allocator
{
    static std::shared_ptr<T> allocate(size_t n)
    {
        bool ok = true;
        std::string at = "openmp:" + std::to_string(locus_detail::active_device(buffer_allocator::openmp));
        auto mem = locus_detail::allocate(at, LOCUS_KIND_DEFAULT, (n ? n : 1) * sizeof(T), ok);
        if (!ok) return nullptr;
        return std::shared_ptr<T>(mem, (T *)locus_detail::pointer(mem));
    }
    static std::shared_ptr<T> allocate(size_t n, const T &val)
    {
        std::vector<T> vals(n, val);
        return allocate(n, vals.data());
    }
    /// a copy of n values at vals (host memory)
    template <typename U>
    static std::shared_ptr<T> allocate(size_t n, const U *vals)
    {
        bool ok = true;
        std::string at = "openmp:" + std::to_string(locus_detail::active_device(buffer_allocator::openmp));
        auto mem = locus_detail::allocate(at, LOCUS_KIND_DEFAULT, (n ? n : 1) * sizeof(T), ok);
        if (!ok) return nullptr;
        std::vector<T> tmp(vals, vals + n);
        if (n && locus_memory_write(mem.get(), 0, tmp.data(), n * sizeof(T)) != LOCUS_OK)
        {
            HAMR_LOCUS_ERROR("openmp_allocator: failed to initialize the array");
            return nullptr;
        }
        return std::shared_ptr<T>(mem, (T *)locus_detail::pointer(mem));
    }
};
}
#endif
