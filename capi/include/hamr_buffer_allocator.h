/* HAMR's allocators (hamr_buffer_allocator.h), over locus, with HAMR's values, and one
 * per technology locus adds. See LICENSE-hamr. */
#ifndef hamr_buffer_allocator_h
#define hamr_buffer_allocator_h

#include "hamr_config.h"
#include <locus.h>
#include <string>

namespace hamr
{
/// where a buffer's memory is allocated, and how
enum class buffer_allocator
{
    same = -2,      ///< propagate the current allocator
    none = -1,      ///< no allocator specified
    cpp = 0,        ///< host memory (HAMR: new)
    malloc = 1,     ///< host memory (HAMR: malloc)
    cuda = 2,       ///< device memory of CUDA (cudaMalloc)
    cuda_async = 3, ///< CUDA's stream-ordered pool (cudaMallocAsync)
    cuda_uva = 4,   ///< CUDA managed memory (cudaMallocManaged)
    cuda_host = 5,  ///< CUDA page-locked host memory (cudaMallocHost)
    hip = 6,        ///< device memory of HIP (hipMalloc)
    hip_uva = 7,    ///< HIP managed memory (hipMallocManaged)
    openmp = 8,     ///< OpenMP device memory (omp_target_alloc)
    opencl = 9,     ///< locus: an OpenCL buffer
    sycl = 10,      ///< locus: SYCL USM device memory
    webgpu = 11     ///< locus: a WebGPU buffer
};

/// HAMR's name of an allocator
inline const char *get_allocator_name(buffer_allocator alloc)
{
    switch (alloc)
    {
    case buffer_allocator::cpp: return "cpp";
    case buffer_allocator::malloc: return "malloc";
    case buffer_allocator::cuda: return "cuda_malloc_allocator";
    case buffer_allocator::cuda_async: return "cuda_malloc_async_allocator";
    case buffer_allocator::cuda_uva: return "cuda_malloc_uva_allocator";
    case buffer_allocator::cuda_host: return "cuda_malloc_host_allocator";
    case buffer_allocator::hip: return "hip_malloc_allocator";
    case buffer_allocator::hip_uva: return "hip_malloc_uva_allocator";
    case buffer_allocator::openmp: return "openmp_allocator";
    case buffer_allocator::opencl: return "opencl_allocator";
    case buffer_allocator::sycl: return "sycl_allocator";
    case buffer_allocator::webgpu: return "webgpu_allocator";
    default: break;
    }
    return "the allocator name is not known";
}

/// HAMR's answers: whether memory of an allocator is used in place by host code, CUDA,
/// HIP, OpenMP (a buffer's own member functions ask locus, which knows the machine)
inline int host_accessible(buffer_allocator alloc)
{
    return (alloc == buffer_allocator::cpp) || (alloc == buffer_allocator::malloc) ||
        (alloc == buffer_allocator::cuda_uva) || (alloc == buffer_allocator::cuda_host) ||
        (alloc == buffer_allocator::hip_uva);
}

inline int cuda_accessible(buffer_allocator alloc)
{
    return (alloc == buffer_allocator::cuda) || (alloc == buffer_allocator::cuda_async) ||
        (alloc == buffer_allocator::cuda_uva) || (alloc == buffer_allocator::hip) ||
        (alloc == buffer_allocator::hip_uva) || (alloc == buffer_allocator::openmp);
}

inline int hip_accessible(buffer_allocator alloc)
{
    return (alloc == buffer_allocator::cuda) || (alloc == buffer_allocator::cuda_async) ||
        (alloc == buffer_allocator::cuda_uva) || (alloc == buffer_allocator::hip) ||
        (alloc == buffer_allocator::hip_uva);
}

inline int openmp_accessible(buffer_allocator alloc)
{
    return (alloc == buffer_allocator::cuda) || (alloc == buffer_allocator::cuda_async) ||
        (alloc == buffer_allocator::cuda_uva) || (alloc == buffer_allocator::hip) ||
        (alloc == buffer_allocator::hip_uva) || (alloc == buffer_allocator::openmp);
}

namespace locus_detail
{
/// the device number each technology's allocators use (HAMR: the active device)
inline int &active_device(buffer_allocator alloc)
{
    // one per technology: host, CUDA, HIP, OpenMP, OpenCL, SYCL, WebGPU
    static int devices[7] = {0};
    int slot = 0;
    switch (alloc)
    {
    case buffer_allocator::cuda: case buffer_allocator::cuda_async:
    case buffer_allocator::cuda_uva: case buffer_allocator::cuda_host: slot = 1; break;
    case buffer_allocator::hip: case buffer_allocator::hip_uva: slot = 2; break;
    case buffer_allocator::openmp: slot = 3; break;
    case buffer_allocator::opencl: slot = 4; break;
    case buffer_allocator::sycl: slot = 5; break;
    case buffer_allocator::webgpu: slot = 6; break;
    default: break;
    }
    return devices[slot];
}

/// the locus location and memory kind of an allocator
inline bool where(buffer_allocator alloc, std::string &location, int &kind)
{
    const int dev = active_device(alloc);
    kind = LOCUS_KIND_DEFAULT;
    switch (alloc)
    {
    case buffer_allocator::cpp:
    case buffer_allocator::malloc: location = "host"; return true;
    case buffer_allocator::cuda: location = "cuda:" + std::to_string(dev); return true;
    case buffer_allocator::cuda_async: kind = LOCUS_KIND_STREAM_ORDERED; location = "cuda:" + std::to_string(dev); return true;
    case buffer_allocator::cuda_uva: kind = LOCUS_KIND_MANAGED; location = "cuda:" + std::to_string(dev); return true;
    case buffer_allocator::cuda_host: kind = LOCUS_KIND_PINNED_HOST; location = "cuda:" + std::to_string(dev); return true;
    case buffer_allocator::hip: location = "hip:" + std::to_string(dev); return true;
    case buffer_allocator::hip_uva: kind = LOCUS_KIND_MANAGED; location = "hip:" + std::to_string(dev); return true;
    case buffer_allocator::openmp: location = "openmp:" + std::to_string(dev); return true;
    case buffer_allocator::opencl: location = "opencl:" + std::to_string(dev); return true;
    case buffer_allocator::sycl: location = "sycl:" + std::to_string(dev); return true;
    case buffer_allocator::webgpu: location = "webgpu:" + std::to_string(dev); return true;
    default: break;
    }
    return false;
}
}

/** locus: the device number the allocators of `alloc`'s technology use from now on, for
 * every thread (HAMR uses the active CUDA / HIP / OpenMP device; locus keeps one per
 * technology, 0 unless set). */
inline void set_active_device(buffer_allocator alloc, int device)
{
    locus_detail::active_device(alloc) = device;
}
}
#endif
