/* HAMR's stream (hamr_stream.h), over locus: wraps a user's cudaStream_t or hipStream_t,
 * adopted by locus (locus_queue_from_native) and never destroyed. A buffer made with a
 * stream moves its data on it (asynchronously by default, HAMR's rule), ordered with the
 * user's own work there on the device; synchronize() waits for the stream. locus's
 * extension: stream::adopt for any runtime queue locus adopts (an OpenCL command queue,
 * a SYCL queue). See LICENSE-hamr. */
#ifndef hamr_stream_h
#define hamr_stream_h

#include "hamr_config.h"
#include <locus.h>
#include <cstddef>
#include <memory>
#include <string>
#include <variant>

#if defined(HAMR_ENABLE_CUDA)
#include <cuda_runtime.h>
#else
using cudaStream_t = void*;
#endif
#if defined(HAMR_ENABLE_HIP)
#include <hip/hip_runtime.h>
#elif !defined(HAMR_HIP_STREAM_DECLARED)
struct ihipStream_t;
using hipStream_t = ihipStream_t*;
#endif

namespace hamr
{
/** A stream: none (the default), a CUDA stream or a HIP stream, adopted by locus. */
class HAMR_EXPORT stream
{
public:
    stream() : m_stream(std::in_place_index<0>, '\0') {}
    stream(const stream &) = default;
    stream(stream &&) = default;
    stream &operator=(const stream &) = default;
    stream &operator=(stream &&) = default;

    stream(const cudaStream_t &strm) : m_stream(std::in_place_index<1>, strm)
    {
        m_queue = adopt_queue("cuda", LOCUS_NATIVE_CUDA, (void *)strm);
    }
    stream(const hipStream_t &strm) : m_stream(std::in_place_index<2>, strm)
    {
        m_queue = adopt_queue("hip", LOCUS_NATIVE_HIP, (void *)strm);
    }

    stream &operator=(cudaStream_t strm) { return *this = stream(strm); }
    stream &operator=(hipStream_t strm) { return *this = stream(strm); }

    /// locus: a stream over any runtime queue locus adopts at `location` (`kind`
    /// LOCUS_NATIVE_OPENCL: a cl_command_queue; LOCUS_NATIVE_SYCL: a DPCTLSyclQueueRef;
    /// LOCUS_NATIVE_CUDA / _HIP: a stream); no stream, and locus_last_error() says why,
    /// when it cannot be adopted
    static stream adopt(const char *location, int32_t kind, void *handle)
    {
        stream s;
        LocusQueue *q = nullptr;
        if (locus_queue_from_native(location, kind, handle, &q) == LOCUS_OK)
            s.m_queue = std::shared_ptr<LocusQueue>(q, [](LocusQueue *p) { locus_queue_free(p); });
        return s;
    }

    operator cudaStream_t () const { return get_cuda_stream(); }
    operator hipStream_t () const { return get_hip_stream(); }

    cudaStream_t get_cuda_stream() const
    {
        const cudaStream_t *cs = std::get_if<1>(&m_stream);
        return cs ? *cs : cudaStream_t();
    }

    hipStream_t get_hip_stream() const
    {
        const hipStream_t *hs = std::get_if<2>(&m_stream);
        return hs ? *hs : hipStream_t();
    }

    /// locus: the queue the buffer's moves go on (NULL: none; they complete before the
    /// call that makes them returns)
    LocusQueue *locus_queue() const { return m_queue.get(); }

    /// Waits for everything on the stream (locus's moves and the user's own work); 0,
    /// or -1 with locus_last_error() set.
    int synchronize() const
    {
        if (!m_queue) return 0;
        return locus_queue_wait(m_queue.get()) == LOCUS_OK ? 0 : -1;
    }

    /// the stream as a number (0 for none)
    size_t get_stream() const
    {
        if (const cudaStream_t *cs = std::get_if<1>(&m_stream)) return (size_t)(*cs);
        if (const hipStream_t *hs = std::get_if<2>(&m_stream)) return (size_t)(*hs);
        return 0;
    }

private:
    /// The stream adopted at `technology`:N, N the active device (0 without the vendor's
    /// headers); none when that location is not available.
    static std::shared_ptr<LocusQueue> adopt_queue(const char *technology, int32_t kind, void *handle)
    {
        int device = 0;
#if defined(HAMR_ENABLE_CUDA)
        if (kind == LOCUS_NATIVE_CUDA) cudaGetDevice(&device);
#endif
#if defined(HAMR_ENABLE_HIP)
        if (kind == LOCUS_NATIVE_HIP) (void)hipGetDevice(&device);
#endif
        std::string at = std::string(technology) + ":" + std::to_string(device);
        return adopt(at.c_str(), kind, handle).m_queue;
    }

    std::variant<char, cudaStream_t, hipStream_t> m_stream;
    std::shared_ptr<LocusQueue> m_queue;
};
}
#endif
