/* HAMR's buffer (hamr_buffer.h) over locus: hamr::buffer<T> as HAMR has it, its memory
 * made and moved by locus's C library, so the same program also runs its buffers at
 * OpenCL, SYCL and WebGPU locations. C++17, header-only; link with
 * `pkg-config --cflags --libs locus`. Derived from HAMR (https://github.com/LBL-EESA/HAMR,
 * at 09dda72): see LICENSE-hamr.
 *
 * As in HAMR: producers declare where data is made (the allocator), consumers where it is
 * used (get_host_accessible, get_cuda_accessible, get_hip_accessible,
 * get_openmp_accessible, and here get_sycl_accessible): the buffer's own memory where
 * that technology reaches it in place (locus decides, from the machine), else a
 * temporary copy that the returned std::shared_ptr keeps alive. Writes to a temporary are
 * not seen by the buffer (HAMR's rule). Errors are printed to std::cerr, as HAMR prints
 * them, and reported by a non-zero return or an empty pointer. */
#ifndef hamr_buffer_h
#define hamr_buffer_h

#include "hamr_config.h"
#include "hamr_buffer_allocator.h"
#include "hamr_buffer_locus.h"
#include "hamr_buffer_transfer.h"
#include "hamr_stream.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace hamr
{
/** locus: an OpenCL buffer holding a hamr::buffer's data, for a user's OpenCL kernel:
 * `mem` is the `cl_mem` (pass it as the kernel argument), the data starts `offset` bytes
 * into it; `owner` keeps it alive. */
struct opencl_handle
{
    std::shared_ptr<void> owner;
    void *mem = nullptr;
    size_t offset = 0;
};

template <typename T>
class HAMR_EXPORT buffer
{
public:
    using allocator = buffer_allocator;
    using transfer = buffer_transfer;

    buffer(allocator alloc, const hamr::stream &strm, transfer sync = transfer::async)
        : m_alloc(alloc), m_stream(strm), m_sync(sync) { check_allocator(); }
    buffer(allocator alloc) : buffer(alloc, stream(), transfer::async) {}

    buffer(allocator alloc, const hamr::stream &strm, transfer sync, size_t n_elem)
        : buffer(alloc, strm, sync) { reserve(n_elem); m_size = m_capacity; }
    buffer(allocator alloc, const hamr::stream &strm, size_t n_elem)
        : buffer(alloc, strm, transfer::async, n_elem) {}
    buffer(allocator alloc, size_t n_elem) : buffer(alloc, stream(), transfer::async, n_elem) {}

    buffer(allocator alloc, const hamr::stream &strm, transfer sync, size_t n_elem, const T &val)
        : buffer(alloc, strm, sync) { resize(n_elem, val); }
    buffer(allocator alloc, const hamr::stream &strm, size_t n_elem, const T &val)
        : buffer(alloc, strm, transfer::async, n_elem, val) {}
    buffer(allocator alloc, size_t n_elem, const T &val)
        : buffer(alloc, stream(), transfer::async, n_elem, val) {}

    /// a copy of n_elem values at vals (host memory)
    buffer(allocator alloc, const hamr::stream &strm, transfer sync, size_t n_elem, const T *vals)
        : buffer(alloc, strm, sync, n_elem) { write(0, vals, n_elem); }
    buffer(allocator alloc, const hamr::stream &strm, size_t n_elem, const T *vals)
        : buffer(alloc, strm, transfer::async, n_elem, vals) {}
    buffer(allocator alloc, size_t n_elem, const T *vals)
        : buffer(alloc, stream(), transfer::async, n_elem, vals) {}

    /// adopts size elements at ptr, allocated as `alloc` allocates on device `owner`;
    /// df(ptr) frees them when the last user goes
    template <typename delete_func_t>
    buffer(allocator alloc, const hamr::stream &strm, transfer sync, size_t size, int owner,
        T *ptr, delete_func_t df)
        : buffer(alloc, strm, sync)
    {
        adopt(size, owner, ptr, std::shared_ptr<T>(ptr, df));
    }
    template <typename delete_func_t>
    buffer(allocator alloc, const hamr::stream &strm, size_t size, int owner, T *ptr, delete_func_t df)
        : buffer(alloc, strm, transfer::async, size, owner, ptr, df) {}
    template <typename delete_func_t>
    buffer(allocator alloc, size_t size, int owner, T *ptr, delete_func_t df)
        : buffer(alloc, stream(), transfer::async, size, owner, ptr, df) {}

    /// adopts size elements at ptr without taking ownership (the caller frees them)
    buffer(allocator alloc, const hamr::stream &strm, transfer sync, size_t size, int owner, T *ptr)
        : buffer(alloc, strm, sync) { adopt(size, owner, ptr, std::shared_ptr<T>(ptr, [](T *) {})); }
    buffer(allocator alloc, const hamr::stream &strm, size_t size, int owner, T *ptr)
        : buffer(alloc, strm, transfer::async, size, owner, ptr) {}
    buffer(allocator alloc, size_t size, int owner, T *ptr)
        : buffer(alloc, stream(), transfer::async, size, owner, ptr) {}

    /// shares size elements held by data
    buffer(allocator alloc, const hamr::stream &strm, transfer sync, size_t size, int owner,
        const std::shared_ptr<T> &data)
        : buffer(alloc, strm, sync) { adopt(size, owner, data.get(), data); }
    buffer(allocator alloc, const hamr::stream &strm, size_t size, int owner, const std::shared_ptr<T> &data)
        : buffer(alloc, strm, transfer::async, size, owner, data) {}
    buffer(allocator alloc, size_t size, int owner, const std::shared_ptr<T> &data)
        : buffer(alloc, stream(), transfer::async, size, owner, data) {}

    /// copies (converting from U) with other's allocator, stream and mode
    template <typename U>
    buffer(const buffer<U> &other) : buffer(other.m_alloc, other.m_stream, other.m_sync, other) {}
    buffer(const buffer<T> &other) : buffer(other.m_alloc, other.m_stream, other.m_sync, other) {}

    /// copies (converting from U) into memory of alloc
    template <typename U>
    buffer(allocator alloc, const hamr::stream &strm, transfer sync, const buffer<U> &other)
        : buffer(alloc, strm, sync) { assign(other); }
    template <typename U>
    buffer(allocator alloc, const hamr::stream &strm, const buffer<U> &other)
        : buffer(alloc, strm, transfer::async, other) {}
    template <typename U>
    buffer(allocator alloc, const buffer<U> &other) : buffer(alloc, other.m_stream, other.m_sync, other) {}

    buffer(buffer<T> &&other) : buffer(other.m_alloc, other.m_stream, other.m_sync) { swap(other); }
    buffer(allocator alloc, const hamr::stream &strm, transfer sync, buffer<T> &&other)
        : buffer(alloc, strm, sync)
    {
        if (alloc == other.m_alloc) swap(other); else assign(other);
    }
    buffer(allocator alloc, const hamr::stream &strm, buffer<T> &&other)
        : buffer(alloc, strm, transfer::async, std::move(other)) {}
    buffer(allocator alloc, buffer<T> &&other)
        : buffer(alloc, other.m_stream, other.m_sync, std::move(other)) {}

    ~buffer() = default;

    void operator=(buffer<T> &&other) { swap(other); }
    template <typename U>
    void operator=(const buffer<U> &other) { assign(other); }
    void operator=(const buffer<T> &other) { if (&other != this) assign(other); }

    void swap(buffer<T> &other)
    {
        std::swap(m_alloc, other.m_alloc); std::swap(m_stream, other.m_stream);
        std::swap(m_sync, other.m_sync); std::swap(m_mem, other.m_mem);
        std::swap(m_data, other.m_data); std::swap(m_size, other.m_size);
        std::swap(m_capacity, other.m_capacity); std::swap(m_owner, other.m_owner);
    }

    /// moves the data to memory of alloc
    int move(allocator alloc)
    {
        if (alloc == m_alloc) return 0;
        buffer<T> moved(alloc, m_stream, m_sync);
        if (moved.reserve(m_capacity) || moved.set_from(0, *this, 0, m_size)) return -1;
        moved.m_size = m_size;
        swap(moved);
        return 0;
    }

    int reserve(size_t n_elem)
    {
        if (n_elem <= m_capacity) return 0;
        size_t bytes = 0;
        if (__builtin_mul_overflow(n_elem, sizeof(T), &bytes))
            return HAMR_LOCUS_ERROR("reserve: " + std::to_string(n_elem) + " elements overflow a size_t");
        std::string at; int kind = 0;
        if (!locus_detail::where(m_alloc, at, kind))
            return HAMR_LOCUS_ERROR(std::string("invalid allocator ") + get_allocator_name(m_alloc));
        bool ok = true;
        locus_detail::memory_ptr mem = locus_detail::allocate(at, kind, bytes, ok);
        if (!ok) return -1;
        if (m_size && copy_bytes(m_mem.get(), 0, mem.get(), 0, m_size * sizeof(T), at == "host"))
            return HAMR_LOCUS_ERROR("reserve: failed to move the data");
        m_mem = mem;
        m_data = std::shared_ptr<T>(m_mem, (T *)locus_detail::pointer(m_mem));
        m_capacity = n_elem;
        return 0;
    }
    int reserve(size_t n_elem, const T &val)
    {
        size_t old = m_capacity;
        if (reserve(n_elem)) return -1;
        return fill(old, m_capacity - old, val);
    }

    int resize(size_t n_elem)
    {
        if (reserve(n_elem)) return -1;
        m_size = n_elem;
        return 0;
    }
    int resize(size_t n_elem, const T &val)
    {
        size_t old = m_size;
        if (resize(n_elem)) return -1;
        return n_elem > old ? fill(old, n_elem - old, val) : 0;
    }

    int free()
    {
        m_mem = nullptr; m_data = nullptr; m_size = 0; m_capacity = 0;
        return 0;
    }

    size_t size() const { return m_size; }

    template <typename U>
    int assign(const U *src, size_t src_start, size_t n_vals)
    {
        if (resize(n_vals)) return -1;
        return write(0, src + src_start, n_vals);
    }
    template <typename U>
    int assign(const buffer<U> &src, size_t src_start, size_t n_vals)
    {
        if (resize(n_vals)) return -1;
        return set_from(0, src, src_start, n_vals);
    }
    template <typename U>
    int assign(const buffer<U> &src) { return assign(src, 0, src.size()); }

    template <typename U>
    int append(const U *src, size_t src_start, size_t n_vals)
    {
        size_t at = m_size;
        if (reserve_for_append(n_vals)) return -1;
        m_size += n_vals;
        return write(at, src + src_start, n_vals);
    }
    template <typename U>
    int append(const buffer<U> &src, size_t src_start, size_t n_vals)
    {
        size_t at = m_size;
        if (reserve_for_append(n_vals)) return -1;
        m_size += n_vals;
        return set_from(at, src, src_start, n_vals);
    }
    template <typename U>
    int append(const buffer<U> &src) { return append(src, 0, src.size()); }

    /// copies n_vals values from src (host memory) at src_start to dest_start
    template <typename U>
    int set(size_t dest_start, const U *src, size_t src_start, size_t n_vals)
    {
        if (out_of_range("set", dest_start, n_vals, m_size)) return -1;
        return write(dest_start, src + src_start, n_vals);
    }
    template <typename U>
    int set(const buffer<U> &src) { return set(0, src, 0, src.size()); }
    template <typename U>
    int set(size_t dest_start, const buffer<U> &src, size_t src_start, size_t n_vals)
    {
        if (out_of_range("set", dest_start, n_vals, m_size) ||
            out_of_range("set (source)", src_start, n_vals, src.size())) return -1;
        return set_from(dest_start, src, src_start, n_vals);
    }

    /// copies n_vals values at src_start into dest (host memory) at dest_start
    template <typename U>
    int get(size_t src_start, U *dest, size_t dest_start, size_t n_vals) const
    {
        if (out_of_range("get", src_start, n_vals, m_size)) return -1;
        return read(src_start, dest + dest_start, n_vals);
    }
    template <typename U>
    int get(size_t src_start, buffer<U> &dest, size_t dest_start, size_t n_vals) const
    {
        return dest.set(dest_start, *this, src_start, n_vals);
    }
    template <typename U>
    int get(buffer<U> &dest) const
    {
        if (dest.resize(m_size)) return -1;
        return dest.set(0, *this, 0, m_size);
    }

    std::shared_ptr<const T> get_host_accessible() const { return accessible("host"); }
    std::shared_ptr<const T> get_cuda_accessible() const { return accessible(location_of(allocator::cuda)); }
    std::shared_ptr<const T> get_hip_accessible() const { return accessible(location_of(allocator::hip)); }
    std::shared_ptr<const T> get_openmp_accessible() const { return accessible(location_of(allocator::openmp)); }
    /// locus: a USM pointer usable by SYCL kernels on the active SYCL device
    std::shared_ptr<const T> get_sycl_accessible() const { return accessible(location_of(allocator::sycl)); }
    /// locus: the data in an OpenCL buffer of the active OpenCL device (the buffer's own
    /// where it lives there, else a temporary copy); an empty handle after an error
    opencl_handle get_opencl_accessible() const
    {
        opencl_handle h;
        if (!m_size) return h;
        std::string at = location_of(allocator::opencl);
        locus_detail::memory_ptr mem = m_mem;
        LocusNative n;
        char here[32] = {0};
        locus_memory_location(m_mem.get(), here, sizeof here, nullptr);
        if (settle()) return h;
        if (at != here)
        {
            bool ok = true;
            mem = locus_detail::allocate(at, LOCUS_KIND_DEFAULT, m_size * sizeof(T), ok);
            if (!ok) return h;
            if (locus_memory_copy(m_mem.get(), 0, mem.get(), 0, m_size * sizeof(T)) != LOCUS_OK)
            {
                HAMR_LOCUS_ERROR("failed to move the data to " + at);
                return h;
            }
        }
        if (locus_memory_native(mem.get(), &n) != LOCUS_OK || n.kind != LOCUS_NATIVE_OPENCL)
        {
            HAMR_LOCUS_ERROR(at + " memory is not an OpenCL buffer");
            return h;
        }
        h.owner = mem;
        h.mem = n.object;
        h.offset = n.offset;
        return h;
    }

    /// the device HAMR would choose: CUDA, else HIP, else OpenMP, as this build enables them
    std::shared_ptr<const T> get_device_accessible() const
    {
#if defined(HAMR_ENABLE_CUDA)
        return get_cuda_accessible();
#elif defined(HAMR_ENABLE_HIP)
        return get_hip_accessible();
#else
        return get_openmp_accessible();
#endif
    }

    /// whether the buffer's own memory is used in place there (locus's answer)
    int host_accessible() const { return in_place("host"); }
    int cuda_accessible() const { return in_place(location_of(allocator::cuda)); }
    int hip_accessible() const { return in_place(location_of(allocator::hip)); }
    int openmp_accessible() const { return in_place(location_of(allocator::openmp)); }
    int sycl_accessible() const { return in_place(location_of(allocator::sycl)); }
    int device_accessible() const { return openmp_accessible() || cuda_accessible() || hip_accessible(); }

    /// the buffer's own memory (a host or device pointer; nullptr for an OpenCL or WebGPU
    /// buffer, which is an object: use the accessors, or locus_memory_native of memory())
    T *data() { return m_data.get(); }
    const T *data() const { return m_data.get(); }
    std::shared_ptr<T> &pointer() { return m_data; }
    const std::shared_ptr<T> &pointer() const { return m_data; }
    /// locus: the buffer's memory handle (for locus.h's calls), NULL when empty
    LocusMemory *memory() const { return m_mem.get(); }

    allocator get_allocator() const { return m_alloc; }
    int get_owner() const { return m_owner; }
    const hamr::stream &get_stream() const { return m_stream; }
    hamr::stream &get_stream() { return m_stream; }
    void set_stream(const stream &strm, transfer sync = transfer::async) { m_stream = strm; m_sync = sync; }
    transfer get_transfer_mode() const { return m_sync; }
    void set_transfer_asynchronous() { m_sync = transfer::async; }
    void set_transfer_sycnhronous_host() { m_sync = transfer::sync_host; }
    void set_transfer_sycnhronous() { m_sync = transfer::sync; }
    void set_transfer_synchronous_host() { m_sync = transfer::sync_host; }
    void set_transfer_synchronous() { m_sync = transfer::sync; }

    /// waits for the buffer's moves and everything else on its stream (HAMR's
    /// cudaStreamSynchronize); without a stream the moves completed when they returned
    int synchronize() const { return m_stream.synchronize(); }

    /// prints the buffer's state and contents to std::cerr (HAMR's format)
    int print() const
    {
        std::cerr << "m_alloc = " << get_allocator_name(m_alloc) << ", m_owner = " << m_owner
            << ", m_size = " << m_size << ", m_capacity = " << m_capacity << ", m_data = ";
        if (m_size)
        {
            std::vector<T> vals(m_size);
            if (read(0, vals.data(), m_size)) return -1;
            std::cerr << vals[0];
            for (size_t i = 1; i < m_size; ++i) std::cerr << ", " << vals[i];
        }
        std::cerr << std::endl;
        return 0;
    }

    int reserve_for_append(size_t n_vals)
    {
        size_t need = m_size + n_vals;
        if (need <= m_capacity) return 0;
        return reserve(std::max(need, 2 * m_capacity));
    }

private:
    template <typename U> friend class buffer;

    void check_allocator()
    {
        std::string at; int kind = 0;
        if (!locus_detail::where(m_alloc, at, kind))
            HAMR_LOCUS_ERROR(std::string("invalid allocator ") + get_allocator_name(m_alloc));
        else
            m_owner = locus_detail::active_device(m_alloc);
    }

    static std::string location_of(allocator alloc)
    {
        std::string at; int kind = 0;
        locus_detail::where(alloc, at, kind);
        return at;
    }

    int out_of_range(const char *what, size_t start, size_t n, size_t size) const
    {
        if (start <= size && n <= size - start) return 0;
        return HAMR_LOCUS_ERROR(std::string(what) + ": elements " + std::to_string(start) + " .. " +
            std::to_string(start) + " + " + std::to_string(n) + " are out of range of " +
            std::to_string(size));
    }

    /// waits for the moves in flight on the buffer's stream (nothing without one)
    int settle() const { return m_stream.synchronize(); }

    /// copies bytes: on the stream when the buffer has one (waited for in sync mode, and
    /// in sync_host mode when `to_host`), else a synchronous copy
    int copy_bytes(LocusMemory *src, size_t src_at, LocusMemory *dst, size_t dst_at, size_t n,
        bool to_host) const
    {
        LocusQueue *q = m_stream.locus_queue();
        if (!q) return locus_memory_copy(src, src_at, dst, dst_at, n) == LOCUS_OK ? 0 : -1;
        LocusEvent *done = nullptr;
        if (locus_memory_copy_async(src, src_at, dst, dst_at, n, q, &done) != LOCUS_OK) return -1;
        bool wait = m_sync == transfer::sync || (m_sync == transfer::sync_host && to_host);
        int rc = wait && locus_event_wait(done) != LOCUS_OK ? -1 : 0;
        locus_event_free(done);
        return rc;
    }

    std::shared_ptr<const T> accessible(const std::string &location) const
    {
        bool in = false;
        if (settle()) return nullptr;
        return std::static_pointer_cast<const T>(locus_detail::view(m_mem, m_size * sizeof(T), location, in));
    }

    int in_place(const std::string &location) const
    {
        if (!m_mem) return 0;
        if (location == "host") return locus_detail::host_pointer(m_mem) != nullptr;
        bool yes = false;
        return locus_memory_is_accessible_from(m_mem.get(), location.c_str(), &yes) == LOCUS_OK && yes &&
            locus_detail::pointer(m_mem) != nullptr;
    }

    void adopt(size_t size, int owner, T *ptr, std::shared_ptr<T> keep)
    {
        std::string at; int kind = 0;
        if (!locus_detail::where(m_alloc, at, kind)) return;
        if (size == 0) return;
        LocusMemory *m = nullptr;
        if (locus_memory_adopt(at.c_str(), kind, ptr, size * sizeof(T), &m) != LOCUS_OK)
        {
            HAMR_LOCUS_ERROR("failed to adopt " + std::to_string(size) + " elements at " + at);
            return;
        }
        m_mem = locus_detail::memory_ptr(m, [keep](LocusMemory *p) { locus_memory_free(p); });
        m_data = std::shared_ptr<T>(m_mem, ptr);
        m_size = m_capacity = size;
        m_owner = owner;
    }

    /// writes n values (host memory, converted to T) at element `at`
    template <typename U>
    int write(size_t at, const U *src, size_t n)
    {
        if (!n) return 0;
        if (out_of_range("write", at, n, m_capacity)) return -1;
        if constexpr (std::is_same_v<T, U>)
        {
            if (settle() || locus_memory_write(m_mem.get(), at * sizeof(T), src, n * sizeof(T)) != LOCUS_OK)
                return HAMR_LOCUS_ERROR("failed to copy " + std::to_string(n) + " values in");
            return 0;
        }
        else
        {
            std::vector<T> tmp(src, src + n);
            return write(at, tmp.data(), n);
        }
    }

    /// reads n values at element `at` into host memory (converted to U)
    template <typename U>
    int read(size_t at, U *dest, size_t n) const
    {
        if (!n) return 0;
        if constexpr (std::is_same_v<T, U>)
        {
            if (settle() || locus_memory_read(m_mem.get(), at * sizeof(T), dest, n * sizeof(T)) != LOCUS_OK)
                return HAMR_LOCUS_ERROR("failed to copy " + std::to_string(n) + " values out");
            return 0;
        }
        else
        {
            std::vector<T> tmp(n);
            if (read(at, tmp.data(), n)) return -1;
            std::copy(tmp.begin(), tmp.end(), dest);
            return 0;
        }
    }

    /// copies n values of src at src_start to element `at` (same type: locus's route;
    /// another type: converted on the host)
    template <typename U>
    int set_from(size_t at, const buffer<U> &src, size_t src_start, size_t n)
    {
        if (!n) return 0;
        if constexpr (std::is_same_v<T, U>)
        {
            if (src.settle() || copy_bytes(src.m_mem.get(), src_start * sizeof(T), m_mem.get(),
                    at * sizeof(T), n * sizeof(T), location_of(m_alloc) == "host"))
                return HAMR_LOCUS_ERROR("failed to copy " + std::to_string(n) + " values");
            return 0;
        }
        else
        {
            std::vector<U> tmp(n);
            if (src.read(src_start, tmp.data(), n)) return -1;
            return write(at, tmp.data(), n);
        }
    }

    int fill(size_t at, size_t n, const T &val)
    {
        if (!n) return 0;
        std::vector<T> tmp(n, val);
        return write(at, tmp.data(), n);
    }

    allocator m_alloc = allocator::none;
    hamr::stream m_stream;
    transfer m_sync = transfer::async;
    locus_detail::memory_ptr m_mem;
    std::shared_ptr<T> m_data;
    size_t m_size = 0;
    size_t m_capacity = 0;
    int m_owner = -1;
};
}

#include "hamr_buffer_util.h"
#endif
