/* HAMR's stream (hamr_stream.h), over locus: wraps a user's cudaStream_t or hipStream_t,
 * adopted, never destroyed. See LICENSE-hamr. */
#ifndef hamr_stream_h
#define hamr_stream_h

#include "hamr_config.h"
#include <cstddef>
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
/** A stream: none (the default), a CUDA stream or a HIP stream. */
class HAMR_EXPORT stream
{
public:
    stream() : m_stream(std::in_place_index<0>, '\0') {}
    stream(const stream &) = default;
    stream(stream &&) = default;
    stream &operator=(const stream &) = default;
    stream &operator=(stream &&) = default;

    stream(const cudaStream_t &strm) : m_stream(std::in_place_index<1>, strm) {}
    stream(const hipStream_t &strm) : m_stream(std::in_place_index<2>, strm) {}

    stream &operator=(cudaStream_t strm) { m_stream.emplace<1>(strm); return *this; }
    stream &operator=(hipStream_t strm) { m_stream.emplace<2>(strm); return *this; }

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

    /// Returns 0: locus's moves complete before the call that makes them returns.
    int synchronize() const { return 0; }

    /// the stream as a number (0 for none)
    size_t get_stream() const
    {
        if (const cudaStream_t *cs = std::get_if<1>(&m_stream)) return (size_t)(*cs);
        if (const hipStream_t *hs = std::get_if<2>(&m_stream)) return (size_t)(*hs);
        return 0;
    }

private:
    std::variant<char, cudaStream_t, hipStream_t> m_stream;
};
}
#endif
