/* The locus side of HAMR's buffer: memory handles owned by std::shared_ptr, errors
 * printed as HAMR prints them, and views of memory at a location, in place where locus
 * says the location reaches it and through a temporary otherwise. Part of locus's HAMR
 * API (hamr_buffer.h). See LICENSE-hamr. */
#ifndef hamr_buffer_locus_h
#define hamr_buffer_locus_h

#include "hamr_buffer_allocator.h"
#include <locus.h>

#include <iostream>
#include <memory>
#include <string>

namespace hamr
{
namespace locus_detail
{
/// prints a failed locus call as HAMR prints its errors; returns -1
inline int error(const char *file, int line, const std::string &what)
{
    std::cerr << "[" << file << ":" << line << "] ERROR: " << what;
    const char *why = locus_last_error();
    if (why && *why)
        std::cerr << ": " << why;
    std::cerr << std::endl;
    return -1;
}

#define HAMR_LOCUS_ERROR(what) ::hamr::locus_detail::error(__FILE__, __LINE__, (what))

using memory_ptr = std::shared_ptr<LocusMemory>;

/// owns a locus memory handle
inline memory_ptr own(LocusMemory *m)
{
    return memory_ptr(m, [](LocusMemory *p) { locus_memory_free(p); });
}

/// `bytes` at `location` of `kind` (none for 0 bytes); nullptr after printing the error
inline memory_ptr allocate(const std::string &location, int kind, size_t bytes, bool &ok)
{
    ok = true;
    if (bytes == 0)
        return nullptr;
    LocusMemory *m = nullptr;
    LocusStatus s = (kind == LOCUS_KIND_DEFAULT)
        ? locus_memory_new(location.c_str(), bytes, &m)
        : locus_memory_new_kind(location.c_str(), kind, bytes, &m);
    if (s != LOCUS_OK)
    {
        ok = false;
        HAMR_LOCUS_ERROR("failed to allocate " + std::to_string(bytes) + " bytes at " + location);
        return nullptr;
    }
    return own(m);
}

/// the address a program uses for `m`: its pointer (host, OpenMP, CUDA, HIP, SYCL), or
/// nullptr for an object (an OpenCL or WebGPU buffer)
inline void *pointer(const memory_ptr &m)
{
    LocusNative n;
    if (!m || locus_memory_native(m.get(), &n) != LOCUS_OK)
        return nullptr;
    return n.pointer;
}

/// the host address of `m` where host code reaches it in place, else nullptr
inline void *host_pointer(const memory_ptr &m)
{
    void *p = nullptr;
    if (!m || locus_memory_host_pointer(m.get(), &p) != LOCUS_OK)
        return nullptr;
    return p;
}

/// a view of `bytes` of `m` usable at `location`: `m` itself where the location reaches
/// it in place (`in_place` set), a temporary copy otherwise; nullptr after printing an
/// error
inline std::shared_ptr<void> view(const memory_ptr &m, size_t bytes, const std::string &location,
    bool &in_place)
{
    in_place = false;
    if (!m || bytes == 0)
        return nullptr;
    void *p = nullptr;
    if (location == "host")
    {
        p = host_pointer(m);
    }
    else
    {
        bool yes = false;
        if (locus_memory_is_accessible_from(m.get(), location.c_str(), &yes) == LOCUS_OK && yes)
            p = pointer(m);
    }
    if (p)
    {
        in_place = true;
        return std::shared_ptr<void>(m, p);
    }
    bool ok = true;
    memory_ptr tmp = allocate(location, LOCUS_KIND_DEFAULT, bytes, ok);
    if (!ok)
        return nullptr;
    if (locus_memory_copy(m.get(), 0, tmp.get(), 0, bytes) != LOCUS_OK)
    {
        HAMR_LOCUS_ERROR("failed to move " + std::to_string(bytes) + " bytes to " + location);
        return nullptr;
    }
    p = (location == "host") ? host_pointer(tmp) : pointer(tmp);
    if (!p)
    {
        HAMR_LOCUS_ERROR(location + " memory has no address a program can use; use the host");
        return nullptr;
    }
    return std::shared_ptr<void>(tmp, p);
}
}
}
#endif
