// HAMR's buffer over locus at every allocator given (argv: cpp malloc openmp opencl sycl
// webgpu ...), as a HAMR user writes it: constructors, element access, growth, moves,
// converting copies, accessors in place or through temporaries, a pipeline mixing float,
// double and int buffers with the allocators rotated, and bad input answered by a
// non-zero return and a message, nothing written.
#include <hamr_buffer.h>
#include <hamr_buffer_util.h>
#include <hamr_cuda_malloc_allocator.h>
#include <hamr_hip_malloc_allocator.h>
#include <hamr_openmp_allocator.h>
#include <hamr_openmp_print.h>
#include <hamr_cuda_print.h>
#include <hamr_hip_print.h>
#include <hamr_malloc_allocator.h>
#include <hamr_new_allocator.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using hamr::buffer;
using allocator = hamr::buffer_allocator;

static int checks = 0;
#define CHECK(cond, what)                                                                  \
    do {                                                                                   \
        checks++;                                                                          \
        if (!(cond)) {                                                                     \
            std::cerr << "FAILED " << __FILE__ << ":" << __LINE__ << ": " << #cond << ": " \
                      << what << std::endl;                                                \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

static const std::map<std::string, allocator> names = {
    {"cpp", allocator::cpp}, {"malloc", allocator::malloc}, {"openmp", allocator::openmp},
    {"opencl", allocator::opencl}, {"sycl", allocator::sycl}, {"webgpu", allocator::webgpu},
    {"cuda", allocator::cuda}, {"cuda_uva", allocator::cuda_uva}, {"cuda_host", allocator::cuda_host},
    {"hip", allocator::hip}};

template <typename T>
static std::vector<T> host_values(const buffer<T> &b)
{
    auto [sp, p] = hamr::get_host_accessible(b);
    return std::vector<T>(p, p + b.size());
}

// Captures what a call prints to std::cerr (HAMR's error channel).
struct capture_cerr
{
    std::stringstream text;
    std::streambuf *old;
    capture_cerr() : old(std::cerr.rdbuf(text.rdbuf())) {}
    ~capture_cerr() { std::cerr.rdbuf(old); }
};

static void members(allocator a, const std::string &name)
{
    const size_t n = 1000;
    buffer<float> b(a, n, 1.5f);
    CHECK(b.size() == n && b.get_allocator() == a, name);
    CHECK(b.get_transfer_mode() == hamr::buffer_transfer::async, name + ": HAMR's default mode");
    for (float v : host_values(b)) CHECK(v == 1.5f, name);

    std::vector<double> src(n);
    for (size_t i = 0; i < n; ++i) src[i] = double(i);
    CHECK(b.set(0, src.data(), 0, n) == 0, name);                // converting from double
    std::vector<int> out(n, -1);
    CHECK(b.get(10, out.data(), 0, 20) == 0, name);               // converting to int
    for (int i = 0; i < 20; ++i) CHECK(out[i] == 10 + i, name + ": get");

    buffer<double> d(b);                                           // converting copy
    CHECK(d.get_allocator() == a && d.size() == n, name);
    CHECK(host_values(d)[999] == 999.0, name + ": converting copy");
    buffer<int> at_host(allocator::malloc, b);                     // to another allocator
    CHECK(host_values(at_host)[500] == 500, name);

    CHECK(b.append(src.data(), 0, 10) == 0 && b.size() == n + 10, name + ": append");
    CHECK(host_values(b)[n + 3] == 3.0f, name + ": appended");
    CHECK(b.resize(5) == 0 && b.size() == 5, name + ": shrink");
    CHECK(b.resize(8, 7.0f) == 0 && host_values(b)[7] == 7.0f && host_values(b)[4] == 4.0f, name + ": grow");
    CHECK(b.reserve(100000) == 0 && b.size() == 8 && host_values(b)[2] == 2.0f, name + ": reserve");
    buffer<float> c(allocator::malloc, 3, 9.0f);
    b.swap(c);
    CHECK(b.size() == 3 && c.size() == 8 && c.get_allocator() == a, name + ": swap");
    b.swap(c);
    CHECK(b.assign(c) == 0 && b.size() == 3 && host_values(b)[1] == 9.0f, name + ": assign");
    CHECK(b.move(allocator::malloc) == 0 && b.get_allocator() == allocator::malloc, name + ": move");
    CHECK(b.move(a) == 0 && host_values(b)[2] == 9.0f, name + ": move back");

    // accessors: in place where locus says so, a temporary otherwise
    auto [sp, p] = hamr::get_host_accessible(b);
    CHECK(p != nullptr, name);
    if (b.host_accessible()) CHECK(p == b.data(), name + ": host access in place is the buffer itself");
    auto [spo, po] = hamr::get_openmp_accessible(b);
    CHECK(po != nullptr, name + ": openmp access");

    // bad input: -1, a message, nothing written
    {
        capture_cerr err;
        std::vector<float> big(10, 4.0f);
        CHECK(b.set(2, big.data(), 0, 5) == -1, name + ": set past the end");
        CHECK(b.get(1, out.data(), 0, 3) == -1, name + ": get past the end");
        CHECK(b.reserve(size_t(-1) / 2) == -1, name + ": an overflowing size");
        CHECK(err.text.str().find("ERROR") != std::string::npos, err.text.str());
    }
    CHECK(host_values(b)[2] == 9.0f && b.size() == 3, name + ": nothing written");
    {
        capture_cerr err;
        buffer<float> probe(allocator::hip, 1);
        if (probe.size() == 0)
        {
            CHECK(b.move(allocator::hip) == -1 && b.get_allocator() == a, name + ": a move to a missing technology");
            CHECK(host_values(b)[2] == 9.0f && b.size() == 3, name + ": nothing lost by a refused move");
        }
    }
    {
        capture_cerr err;  // no OpenCL here: an error printed, an empty handle
        auto cl = b.get_opencl_accessible();
        CHECK((cl.mem != nullptr && cl.owner != nullptr) || err.text.str().find("opencl:0") != std::string::npos,
              name + ": an OpenCL view, or why not: " + err.text.str());
    }

    {
        capture_cerr err;
        b.print();
        CHECK(err.text.str().find("m_size = 3") != std::string::npos, err.text.str());
        CHECK(err.text.str().find("9, 9, 9") != std::string::npos, err.text.str());
    }
    CHECK(b.free() == 0 && b.size() == 0 && b.data() == nullptr, name + ": free");
    CHECK(b.synchronize() == 0, name);

    // adopting memory with a deleter, and a shared pointer
    bool deleted = false;
    {
        float *raw = new float[4]{1, 2, 3, 4};
        buffer<float> adopted(allocator::malloc, 4, 0, raw, [&deleted](float *q) { deleted = true; delete[] q; });
        buffer<float> copy(a, adopted);
        CHECK(host_values(copy)[3] == 4.0f, name + ": adopted");
    }
    CHECK(deleted, name + ": the deleter ran");
}

// HAMR's pipeline style: each stage allocates its output with the next allocator.
template <typename T, typename U>
static buffer<T> add(allocator out, const buffer<T> &a1, const buffer<U> &a2)
{
    auto [sp1, p1, sp2, p2] = hamr::get_host_accessible(a1, a2);
    std::vector<T> r(a1.size());
    for (size_t i = 0; i < r.size(); ++i) r[i] = p1[i] + p2[i];
    return buffer<T>(out, r.size(), r.data());
}

template <typename T, typename U>
static buffer<T> scale(allocator out, const buffer<T> &a, U s)
{
    buffer<T> r(out, a.size());
    std::vector<T> tmp(a.size());
    a.get(0, tmp.data(), 0, a.size());
    for (auto &v : tmp) v = T(v * s);
    r.set(0, tmp.data(), 0, tmp.size());
    return r;
}

static void pipeline(const std::vector<std::pair<std::string, allocator>> &all)
{
    const size_t n = 4096;
    for (size_t r = 0; r < all.size(); ++r)
    {
        auto at = [&](size_t k) { return all[(r + k) % all.size()].second; };
        buffer<float> a0(at(0), n, 1.0f);
        buffer<float> a1 = scale(at(1), a0, 2.0f);                  // 2
        buffer<double> a2(at(2), n, 2.0);
        buffer<double> a3 = add(at(3), a2, a1);                     // 4
        buffer<double> a4 = scale(at(4), a3, 1000.0);               // 4000
        buffer<int> a5(at(5), n, 3);
        buffer<int> a6 = scale(at(0), a5, 100);                     // 300
        buffer<float> a7(at(1), n);
        a7.set(a6);                                                 // 300
        buffer<double> a8 = add(at(2), a4, a7);                     // 4300
        buffer<int> check(at(3), n);
        a8.get(check);
        auto v = host_values(check);
        for (size_t i = 0; i < n; ++i)
            CHECK(v[i] == 4300, "rotation " + std::to_string(r) + " element " + std::to_string(i));
    }
}

/// HAMR's stream form over a queue locus adopted (locus's own OpenCL queue of the active
/// OpenCL device, as a program's code would hand it over): moves go on it
/// asynchronously (HAMR's default), synchronize() waits for it, every read sees the
/// data; a stream that cannot be adopted leaves no queue and an error naming both.
static void streams(allocator a, const std::string &name)
{
    LocusQueue *ours = nullptr;
    int32_t kind = 0;
    void *handle = nullptr;
    CHECK(locus_queue_new(&ours) == LOCUS_OK, name);
    std::string at = "opencl:" + std::to_string(hamr::locus_detail::active_device(allocator::opencl));
    CHECK(locus_queue_native(ours, at.c_str(), &kind, &handle) == LOCUS_OK, locus_last_error());
    if (kind != LOCUS_NATIVE_OPENCL)
    {
        locus_queue_free(ours);
        std::printf("SKIPPED hamr::stream over an OpenCL queue: no %s\n", at.c_str());
        return;
    }
    hamr::stream strm = hamr::stream::adopt(at.c_str(), kind, handle);
    CHECK(strm.locus_queue() != nullptr, locus_last_error());
    const size_t n = 4096;
    buffer<float> b(a, strm, n, 2.5f);
    CHECK(b.get_transfer_mode() == hamr::buffer_transfer::async, name + ": async with a stream");
    buffer<float> c(allocator::opencl, strm, n, 0.0f);
    CHECK(c.set(0, b, 0, n) == 0, name + ": a move on the stream");
    CHECK(c.move(a) == 0 && c.move(allocator::opencl) == 0, name + ": moves on the stream");
    CHECK(c.synchronize() == 0, name + ": synchronize waits for the stream");
    for (float v : host_values(c)) CHECK(v == 2.5f, name + ": after the stream's moves");
    CHECK(hamr::stream::adopt("host", kind, handle).locus_queue() == nullptr, name);
    CHECK(std::string(locus_last_error()).find("host") != std::string::npos, locus_last_error());
    locus_queue_free(ours);
}

int main(int argc, char **argv)
{
    std::vector<std::pair<std::string, allocator>> all;
    for (int i = 1; i < argc; ++i)
    {
        auto it = names.find(argv[i]);
        CHECK(it != names.end(), std::string("unknown allocator ") + argv[i]);
        all.emplace_back(it->first, it->second);
    }
    for (auto &[name, a] : all)
    {
        members(a, name);
        streams(a, name);
        std::printf("hamr::buffer with allocator %s: ok\n", name.c_str());
    }
    pipeline(all);
    {
        auto om = hamr::openmp_allocator<double>::allocate(8, 2.0);
        CHECK(om != nullptr, "openmp_allocator");
        {
            capture_cerr err;
            CHECK(hamr::openmp_print(om.get(), 8) == 0, "openmp_print");
            CHECK(err.text.str() == "2, 2, 2, 2, 2, 2, 2, 2\n", err.text.str());
        }
        auto nm = hamr::new_allocator<int>::allocate(4, 3);
        auto mm = hamr::malloc_allocator<float>::allocate(4, 1.5f);
        CHECK(nm.get()[3] == 3 && mm.get()[0] == 1.5f, "new / malloc allocators");
        capture_cerr err;
        auto cm = hamr::cuda_malloc_allocator<float>::allocate(4);
        CHECK(cm != nullptr || err.text.str().find("cuda:0") != std::string::npos, err.text.str());
    }
    {
        capture_cerr err;
        buffer<float> nowhere(allocator::hip, 10, 1.0f);
        bool hip_here = nowhere.size() == 10;
        CHECK(hip_here || err.text.str().find("hip:0") != std::string::npos, err.text.str());
    }
    std::printf("hamr conformance: %d checks passed with %zu allocators\n", checks, all.size());
    return 0;
}
