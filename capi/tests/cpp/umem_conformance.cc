// umem's C++ API (umem.hpp) at every location given (argv), as a umem C++ user writes
// it: contexts as objects, umem::Address owning its memory (freed, or its connection
// ended, at the end of its scope), copies, connections with sync / update, the class of
// each technology, and bad input answered in the context's status.
//
//   umem_conformance_cxx host openmp:0 opencl:0 ...
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <umem.h>

static int checks = 0;
#define CHECK(cond, what)                                                          \
  do {                                                                             \
    checks++;                                                                      \
    if (!(cond)) {                                                                 \
      std::fprintf(stderr, "FAILED %s:%d: %s: %s\n", __FILE__, __LINE__, #cond,    \
                   std::string(what).c_str());                                     \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)
#define OK(ctx, where) CHECK((ctx).is_ok(), std::string(where) + ": " + (ctx).get_message())

static void at(umem::Host &host, const std::string &where, const std::string &next) {
  umem::Locus dev(where);
  OK(dev, where);
  CHECK(dev.location() == where, dev.location());
  {
    const size_t n = 256;
    umem::Address a = dev.alloc(n);
    OK(dev, "alloc");
    a.set('a', n);
    (a + 10).set('b', 5);
    umem::Address h = host.alloc(n);
    a.copy_to(h, n);
    OK(dev, "copy_to");
    for (size_t i = 0; i < n; i++)
      CHECK(h[i] == ((i >= 10 && i < 15) ? 'b' : 'a'), where + ": byte " + std::to_string(i));

    // from a string, then to the next location and back
    a.copy_from(std::string("abcdefghij"), 10);
    umem::Locus other(next);
    umem::Address b = other.calloc(1, n);
    a.copy_to(b, n);
    OK(other, "copy_to the next location");
    b.copy_to(h, n);
    CHECK(std::memcmp((char *)h, "abcdefghij", 10) == 0 && h[20] == 'a', where + " -> " + next);

    // connections: the host's view of the device memory
    umem::Address view = a.connect(host, n, 64);
    OK(host, "connect");
    CHECK(view[0] == 'a' && view[9] == 'j', where + ": connect brought the data");
    view[0] = 'Z';
    view.sync(n);  // to the device
    a.copy_to(h, 1);
    CHECK(h[0] == 'Z', where + ": sync");
    a.set('Y', 1);
    view.update(n);  // from the device
    CHECK(view[0] == 'Y', where + ": update");
    // the document's form: connect to the context's own host RAM
    umem::Address mine = a.connect(n);
    OK(dev, "connect(nbytes)");
    CHECK(((char *)mine)[1] == 'b', where + ": connect(nbytes)");

    // aligned memory and its origin
    umem::Address p = dev.aligned_alloc(4096, 8192);
    OK(dev, "aligned_alloc");
    CHECK((uintptr_t)p % 4096 == 0 && p % (size_t)4096 == 0, where + ": alignment");
    CHECK((uintptr_t)p.origin() <= (uintptr_t)p, where + ": origin");

    // bad input: a status, nothing written
    a.copy_to(h, n + 1);
    CHECK(dev.get_status() == umemIndexError, where + ": copy past the end: " + dev.get_message());
    dev.clear_status();
    a.set(0, n + 1);
    CHECK(dev.get_status() == umemIndexError, where + ": set past the end");
    dev.clear_status();
    umem::Address plain = dev.alloc(8);
    plain.sync(8);
    CHECK(dev.get_status() == umemValueError, where + ": sync of an unconnected address");
    dev.clear_status();
    a.copy_to(h, 1);
    CHECK(h[0] == 'Y', where + ": a refused call wrote");
  }
  OK(dev, "after the scope freed everything");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LOCATION...\n", argv[0]);
    return 2;
  }
  umem::Host host;
  for (int i = 1; i < argc; i++) {
    at(host, argv[i], argv[i % (argc - 1) + 1]);
    std::printf("umem.hpp at %s: ok\n", argv[i]);
  }
  // one class per technology, named as locus names the location
  CHECK(umem::OpenMP(0).location() == "openmp:0", "OpenMP");
  CHECK(umem::OpenCL(1).location() == "opencl:1", "OpenCL");
  CHECK(umem::Sycl(0).location() == "sycl:0", "Sycl");
  CHECK(umem::WebGpu(0).location() == "webgpu:0", "WebGpu");
  umem::Hip hip(0);
  CHECK(hip.location() == "hip:0", "Hip");
  CHECK(hip.is_ok() || hip.get_message().find("hip:0") != std::string::npos, hip.get_message());
  umem::Locus nowhere("nowhere:1");
  CHECK(!nowhere.is_ok() && nowhere.get_message().find("nowhere") != std::string::npos,
        nowhere.get_message());
  OK(host, "host");
  std::printf("umem.hpp conformance: %d checks passed at %d locations\n", checks, argc - 1);
  return 0;
}
