/* HAMR's malloc allocator (hamr_malloc_allocator.h): arrays from C's malloc in a
 * std::shared_ptr, as HAMR has it. See LICENSE-hamr. */
#ifndef hamr_malloc_allocator_h
#define hamr_malloc_allocator_h

#include "hamr_config.h"
#include <cstdlib>
#include <memory>
#include <new>

namespace hamr
{
template <typename T>
struct HAMR_EXPORT malloc_allocator
{
    static std::shared_ptr<T> allocate(size_t n)
    {
        T *p = (T *)std::malloc(n ? n * sizeof(T) : 1);
        if (!p) return nullptr;
        return std::shared_ptr<T>(p, [](T *q) { std::free(q); });
    }
    static std::shared_ptr<T> allocate(size_t n, const T &val)
    {
        auto sp = allocate(n);
        if (sp) for (size_t i = 0; i < n; ++i) sp.get()[i] = val;
        return sp;
    }
    template <typename U>
    static std::shared_ptr<T> allocate(size_t n, const U *vals)
    {
        auto sp = allocate(n);
        if (sp) for (size_t i = 0; i < n; ++i) sp.get()[i] = vals[i];
        return sp;
    }
};
}
#endif
