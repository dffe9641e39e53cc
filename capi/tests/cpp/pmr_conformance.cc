// locus::pmr::resource (locus_pmr.hpp) as a C++ user uses it: standard containers
// allocating from a locus pool over the host, counted by a statistics adaptor; blocks of
// every size and of alignments above locus's own; a resource of device memory refused
// with std::bad_alloc naming why; many threads on one pool; nothing outstanding at the
// end. Prints one line and exits 0 when every check held.
#include "locus_pmr.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

static int checks = 0;
#define CHECK(c)                                                                 \
  do {                                                                           \
    ++checks;                                                                    \
    if (!(c)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

int main(int argc, char **argv) {
  LocusResource *host = nullptr, *pool = nullptr, *counted = nullptr;
  CHECK(locus_resource_upstream("host", 0, &host) == LOCUS_OK);
  CHECK(locus_resource_pool(host, 1 << 20, 0, &pool) == LOCUS_OK);
  CHECK(locus_resource_statistics(pool, &counted) == LOCUS_OK);
  {
    locus::pmr::resource mr(counted);
    {
      std::pmr::vector<double> v(&mr);
      for (int i = 0; i < 100000; ++i)
        v.push_back(i * 0.5);
      CHECK(v[99999] == 49999.5);
      std::pmr::map<int, std::pmr::string> names(&mr);
      for (int i = 0; i < 1000; ++i)
        names.emplace(i, std::pmr::string(std::string(40, 'a' + i % 26), &mr));
      CHECK(std::string(names.at(27)) == std::string(40, 'b'));
      CHECK(mr.outstanding() > 1000);
      LocusStatistics totals{};
      CHECK(locus_resource_statistics_totals(counted, &totals) == LOCUS_OK);
      CHECK(totals.current_count == mr.outstanding());
      for (std::size_t align : {1, 8, 64, 256, 512, 4096, 65536}) {
        void *p = mr.allocate(1000, align);
        CHECK(reinterpret_cast<std::uintptr_t>(p) % align == 0);
        static_cast<char *>(p)[999] = 1;
        mr.deallocate(p, 1000, align);
      }
      void *empty = mr.allocate(0);
      mr.deallocate(empty, 0);
    }
    CHECK(mr.outstanding() == 0);
    // Many threads on one pool.
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&mr, t] {
        std::pmr::vector<std::pmr::vector<int>> lists(&mr);
        for (int i = 0; i < 2000; ++i)
          lists.emplace_back(std::size_t(i % 64 + 1), t);
        for (auto &l : lists)
          if (l[0] != t)
            std::abort();
      });
    for (auto &t : threads)
      t.join();
    CHECK(mr.outstanding() == 0);
    locus::pmr::resource same(counted);
    CHECK(mr.is_equal(same) && !mr.is_equal(*std::pmr::new_delete_resource()));
    // Beyond what the pool may grow to: std::bad_alloc with locus's reason.
    LocusResource *limited = nullptr;
    CHECK(locus_resource_limiting(host, 4096, &limited) == LOCUS_OK);
    locus::pmr::resource tight(limited);
    bool refused = false;
    try {
      (void)tight.allocate(1 << 20);
    } catch (const std::bad_alloc &e) {
      refused = std::string(e.what()).find("locus::pmr::resource") != std::string::npos;
    }
    CHECK(refused);
    locus_resource_free(limited);
  }
  // Each location named: its default kind served where the host reaches it, else refused.
  for (int i = 1; i < argc; ++i) {
    LocusResource *device = nullptr;
    if (locus_resource_upstream(argv[i], 0, &device) != LOCUS_OK) {
      std::printf("SKIPPED: %s (%s)\n", argv[i], locus_last_error());
      continue;
    }
    locus::pmr::resource mr(device);
    bool refused = false;
    try {
      mr.deallocate(mr.allocate(64), 64);
    } catch (const std::bad_alloc &e) {
      refused = std::string(e.what()).find("not reachable from the host") != std::string::npos;
    }
    std::printf("%s: %s\n", argv[i], refused ? "refused (device memory)" : "served (host-reachable)");
    locus_resource_free(device);
  }
  LocusStatistics totals{};
  CHECK(locus_resource_statistics_totals(counted, &totals) == LOCUS_OK);
  CHECK(totals.current_count == 0 && totals.current_bytes == 0);
  locus_resource_free(counted);
  locus_resource_free(pool);
  locus_resource_free(host);
  std::printf("pmr conformance: %d checks passed\n", checks);
  return 0;
}
