/* HAMR's new allocator (hamr_new_allocator.h): arrays from new[] in a std::shared_ptr.
 * See LICENSE-hamr. */
#ifndef hamr_new_allocator_h
#define hamr_new_allocator_h

#include "hamr_config.h"
#include <memory>

namespace hamr
{
template <typename T>
struct HAMR_EXPORT new_allocator
{
    static std::shared_ptr<T> allocate(size_t n)
    {
        return std::shared_ptr<T>(new T[n ? n : 1], [](T *q) { delete[] q; });
    }
    static std::shared_ptr<T> allocate(size_t n, const T &val)
    {
        auto sp = allocate(n);
        for (size_t i = 0; i < n; ++i) sp.get()[i] = val;
        return sp;
    }
    template <typename U>
    static std::shared_ptr<T> allocate(size_t n, const U *vals)
    {
        auto sp = allocate(n);
        for (size_t i = 0; i < n; ++i) sp.get()[i] = vals[i];
        return sp;
    }
};
}
#endif
