/* locus's memory resources as C++17 polymorphic memory resources (<memory_resource>):
 * `locus::pmr::resource` adapts any host-reachable LocusResource (the host's upstream,
 * a pool, an arena, binning, fixed-size, and the adaptors over them), so that standard
 * containers and libraries written against std::pmr allocate from locus's pools:
 *
 *   LocusResource *host = nullptr, *pool = nullptr;
 *   locus_resource_upstream("host", 0, &host);
 *   locus_resource_pool(host, 1 << 20, 0, &pool);
 *   locus::pmr::resource mr(pool);                 // `pool` kept while `mr` lives
 *   std::pmr::vector<double> v(1000, 0.0, &mr);    // its blocks come from the pool
 *
 * An allocation that fails throws std::bad_alloc (the std::pmr contract), with locus's
 * message in what(). Alignment up to locus's 256 bytes is the resource's own; a larger
 * power of two is served from a block over-allocated by the alignment. The memory must
 * be reachable from the host (`locus_memory_host_pointer`): a resource of device
 * memory is refused with std::bad_alloc naming its location. Thread-safe; two adaptors
 * compare equal when they adapt the same LocusResource. Part of locus's C API
 * (locus.h); header-only. */
#ifndef LOCUS_PMR_HPP
#define LOCUS_PMR_HPP

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "locus.h"

namespace locus {
namespace pmr {

/// std::bad_alloc with locus's reason.
class bad_alloc : public std::bad_alloc {
public:
  explicit bad_alloc(std::string why) : why_(std::move(why)) {}
  const char *what() const noexcept override { return why_.c_str(); }

private:
  std::string why_;
};

/// A std::pmr::memory_resource over a LocusResource.
class resource : public std::pmr::memory_resource {
public:
  /// Adapts `upstream`, which the caller keeps (does not `locus_resource_free`) while
  /// the adaptor lives, as std::pmr's own resources take their upstream.
  explicit resource(const LocusResource *upstream) : upstream_(upstream) {}
  resource(const resource &) = delete;
  resource &operator=(const resource &) = delete;
  ~resource() override = default;

  /// The LocusResource this adapts.
  const LocusResource *upstream() const noexcept { return upstream_; }

  /// How many blocks are allocated through this adaptor now.
  std::size_t outstanding() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return blocks_.size();
  }

protected:
  void *do_allocate(std::size_t bytes, std::size_t alignment) override {
    const std::size_t own = 256;
    std::size_t extra = alignment > own ? alignment : 0;
    LocusMemory *memory = nullptr;
    if (locus_memory_from_resource(upstream_, (bytes ? bytes : 1) + extra, &memory) != LOCUS_OK)
      throw bad_alloc(std::string("locus::pmr::resource: ") + message());
    void *address = nullptr;
    if (locus_memory_host_pointer(memory, &address) != LOCUS_OK) {
      std::string why = message();
      locus_memory_free(memory);
      throw bad_alloc(std::string("locus::pmr::resource: the resource's memory is not "
                                  "reachable from the host: ") + why);
    }
    auto at = reinterpret_cast<std::uintptr_t>(address);
    if (extra)
      at = (at + alignment - 1) & ~(static_cast<std::uintptr_t>(alignment) - 1);
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_.emplace(reinterpret_cast<void *>(at), memory);
    return reinterpret_cast<void *>(at);
  }

  void do_deallocate(void *p, std::size_t, std::size_t) override {
    LocusMemory *memory = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = blocks_.find(p);
      if (found == blocks_.end())
        return; // not ours: std::pmr leaves this undefined; do nothing rather than crash
      memory = found->second;
      blocks_.erase(found);
    }
    locus_memory_free(memory);
  }

  bool do_is_equal(const std::pmr::memory_resource &other) const noexcept override {
    auto *same = dynamic_cast<const resource *>(&other);
    return same && same->upstream_ == upstream_;
  }

private:
  static std::string message() {
    const char *text = locus_last_error();
    return text ? text : "unknown error";
  }

  const LocusResource *upstream_;
  mutable std::mutex mutex_;
  std::unordered_map<void *, LocusMemory *> blocks_;
};

} // namespace pmr
} // namespace locus

#endif
