/* HAMR's buffer utilities (hamr_buffer_util.h), over locus: the free functions that give
 * a (std::shared_ptr, pointer) pair per buffer, for structured bindings:
 *   auto [sp, p] = hamr::get_host_accessible(b);
 *   auto [sp1, p1, sp2, p2] = hamr::get_openmp_accessible(b1, b2);
 * See LICENSE-hamr. */
#ifndef hamr_buffer_util_h
#define hamr_buffer_util_h

#include "hamr_buffer.h"
#include <tuple>

namespace hamr
{
#define HAMR_LOCUS_ACCESSIBLE(NAME)                                                   \
    inline auto NAME() { return std::make_tuple(); }                                  \
    template <typename TT, typename... PP>                                            \
    auto NAME(const TT &b, PP &&... args)                                             \
    {                                                                                 \
        auto sp = b.NAME();                                                           \
        return std::tuple_cat(std::make_tuple(sp, sp.get()),                          \
            NAME(std::forward<PP>(args)...));                                         \
    }

HAMR_LOCUS_ACCESSIBLE(get_host_accessible)
HAMR_LOCUS_ACCESSIBLE(get_cuda_accessible)
HAMR_LOCUS_ACCESSIBLE(get_hip_accessible)
HAMR_LOCUS_ACCESSIBLE(get_openmp_accessible)
HAMR_LOCUS_ACCESSIBLE(get_device_accessible)
HAMR_LOCUS_ACCESSIBLE(get_sycl_accessible)
#undef HAMR_LOCUS_ACCESSIBLE

/// the writable pointers of buffers, as a tuple
inline auto data() { return std::make_tuple(); }
template <typename TT, typename... PP>
auto data(TT &b, PP &&... args)
{
    return std::tuple_cat(std::make_tuple(b.data()), data(std::forward<PP>(args)...));
}

/// the shared pointers of buffers, as a tuple
inline auto pointer() { return std::make_tuple(); }
template <typename TT, typename... PP>
auto pointer(TT &b, PP &&... args)
{
    return std::tuple_cat(std::make_tuple(b.pointer()), pointer(std::forward<PP>(args)...));
}

/// synchronizes buffers
inline void synchronize() {}
template <typename TT, typename... PP>
void synchronize(const TT &b, PP &&... args)
{
    b.synchronize();
    synchronize(std::forward<PP>(args)...);
}

/// a new buffer of n_elem values and its writable pointer
template <typename NT>
auto make_buffer(buffer_allocator alloc, size_t n_elem)
{
    hamr::buffer<NT> buf(alloc, n_elem);
    NT *p = buf.data();
    return std::make_tuple(std::move(buf), p);
}

/// a new buffer of n_elem values set to ival and its writable pointer
template <typename NT>
auto make_buffer(buffer_allocator alloc, size_t n_elem, const NT &ival)
{
    hamr::buffer<NT> buf(alloc, n_elem, ival);
    NT *p = buf.data();
    return std::make_tuple(std::move(buf), p);
}
}
#endif
