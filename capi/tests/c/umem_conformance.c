/* umem's C API at every location given (argv), as a umem user writes it: contexts,
 * alloc / calloc / set, copies between every pair and host ranges, aligned memory at
 * alignments 1..4096, connections in both directions (in place where each context
 * reaches the other's memory, a copy where not), a file, and bad input answered with a
 * status and nothing written.
 *
 *   umem_conformance host openmp:0 opencl:0 ...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <umem.h>

static int checks = 0;
#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    checks++;                                                                \
    if (!(cond)) {                                                           \
      fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
      exit(1);                                                               \
    }                                                                        \
  } while (0)
#define OK(ctx, where) CHECK(umem_is_ok(ctx), "%s: %s", where, umem_get_message(ctx))

/* The status of ctx is `type` with a message naming `word`; then cleared. */
static void expect_status(void *ctx, umemStatusType type, const char *word, const char *what) {
  CHECK(umem_get_status(ctx) == type, "%s: status %s, message \"%s\"", what,
        umem_get_status_name(umem_get_status(ctx)), umem_get_message(ctx));
  CHECK(strstr(umem_get_message(ctx), word) != NULL, "%s: message \"%s\" lacks \"%s\"", what,
        umem_get_message(ctx), word);
  umem_clear_status(ctx);
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 31u + seed);
}

/* Reads n bytes at adr of ctx into a new host buffer. */
static unsigned char *read_back(umemHost *host, void *ctx, uintptr_t adr, size_t n) {
  unsigned char *out = malloc(n ? n : 1);
  memset(out, 0xEE, n);
  umem_copy_to(ctx, adr, host, (uintptr_t)out, n);
  OK(ctx, "read back");
  return out;
}

static void basics(umemHost *host, const char *where) {
  umemLocus at;
  umemLocus_ctor(&at, where);
  OK(&at, where);
  CHECK(strcmp(umem_get_device_name(&at), "Locus") == 0, "device name %s", umem_get_device_name(&at));
  CHECK(strcmp(at.location, where) == 0, "location %s", at.location);

  /* alloc + set, whole and in parts */
  size_t n = 1000;
  uintptr_t a = umem_alloc(&at, n);
  OK(&at, "alloc");
  CHECK(a != 0, "alloc returned 0");
  umem_set(&at, a, 'a', n);
  umem_set(&at, a + 100, 'b', 50);
  OK(&at, "set");
  unsigned char *got = read_back(host, &at, a, n);
  for (size_t i = 0; i < n; i++)
    CHECK(got[i] == ((i >= 100 && i < 150) ? 'b' : 'a'), "%s: byte %zu is %d", where, i, got[i]);
  free(got);

  /* a range written from the host at an offset, read back in a range */
  unsigned char src[300];
  fill_pattern(src, sizeof src, 7);
  umem_copy_from(&at, a + 333, host, (uintptr_t)src, sizeof src);
  OK(&at, "copy_from host at an offset");
  unsigned char part[300];
  umem_copy_to(&at, a + 333, host, (uintptr_t)part, sizeof part);
  CHECK(memcmp(part, src, sizeof src) == 0, "%s: a range came back different", where);

  /* calloc is zeroed */
  uintptr_t z = umem_calloc(&at, 10, 100);
  OK(&at, "calloc");
  got = read_back(host, &at, z, 1000);
  for (size_t i = 0; i < 1000; i++) CHECK(got[i] == 0, "%s: calloc byte %zu is %d", where, i, got[i]);
  free(got);
  umem_free(&at, z);
  umem_free(&at, a);
  OK(&at, "free");

  /* aligned memory at every power of two to 4096 */
  for (size_t alignment = 1; alignment <= 4096; alignment <<= 1) {
    size_t size = alignment * 3;
    uintptr_t p = umem_aligned_alloc(&at, alignment, size);
    OK(&at, "aligned_alloc");
    CHECK(p % alignment == 0, "%s: %#zx is not aligned to %zu", where, (size_t)p, alignment);
    uintptr_t origin = umem_aligned_origin(&at, p);
    CHECK(origin != 0 && origin <= p, "%s: origin %#zx of %#zx", where, (size_t)origin, (size_t)p);
    umem_set(&at, p, 0x5A, size);
    got = read_back(host, &at, p, size);
    for (size_t i = 0; i < size; i++) CHECK(got[i] == 0x5A, "%s: aligned byte %zu", where, i);
    free(got);
    umem_aligned_free(&at, p);
    OK(&at, "aligned_free");
  }
  umem_dtor(&at);
}

static void pair(umemHost *host, const char *from, const char *to) {
  umemLocus a, b;
  umemLocus_ctor(&a, from);
  umemLocus_ctor(&b, to);
  OK(&a, from);
  OK(&b, to);
  size_t n = 4096 + 17;
  unsigned char *src = malloc(n), *got = malloc(n);
  fill_pattern(src, n, 3);
  uintptr_t x = umem_alloc(&a, n), y = umem_alloc(&b, n);
  umem_copy_from(&a, x, host, (uintptr_t)src, n);
  umem_set(&b, y, 0, n);
  /* copy_to, a range in the middle */
  umem_copy_to(&a, x + 10, &b, y + 20, 1000);
  OK(&a, "copy_to");
  OK(&b, "copy_to");
  umem_copy_to(&b, y, host, (uintptr_t)got, n);
  for (size_t i = 0; i < n; i++) {
    unsigned char want = (i >= 20 && i < 1020) ? src[i - 10] : 0;
    CHECK(got[i] == want, "%s -> %s: byte %zu is %d, not %d", from, to, i, got[i], want);
  }
  /* copy_from, the whole */
  umem_copy_from(&b, y, &a, x, n);
  OK(&b, "copy_from");
  umem_copy_to(&b, y, host, (uintptr_t)got, n);
  CHECK(memcmp(got, src, n) == 0, "%s -> %s: copy_from differs", from, to);
  umem_free(&a, x);
  umem_free(&b, y);
  OK(&a, "free");
  OK(&b, "free");
  free(src);
  free(got);
  umem_dtor(&a);
  umem_dtor(&b);
}

/* umem_connect between `where` and the host, each way, both alignments. */
static void connections(umemHost *host, const char *where) {
  umemLocus at;
  umemLocus_ctor(&at, where);
  size_t n = 512;
  bool in_place = umem_is_accessible_from(&at, host) && umem_is_accessible_from(host, &at);
  for (int aligned = 0; aligned < 2; aligned++) {
    size_t alignment = aligned ? 64 : 0;
    /* host memory paired with the location */
    unsigned char *h = malloc(n);
    memset(h, 'h', n);
    uintptr_t d = umem_connect(host, (uintptr_t)h, n, &at, alignment);
    OK(&at, "connect host -> location");
    CHECK((d == (uintptr_t)h) == (in_place && (!alignment || (uintptr_t)h % alignment == 0)),
          "%s: connect in place %d, returned the same address %d", where, in_place,
          d == (uintptr_t)h);
    umem_sync_to(host, (uintptr_t)h, &at, d, n);
    umem_set(&at, d + 8, 'D', 8);
    umem_sync_from(host, (uintptr_t)h, &at, d, n);
    OK(&at, "sync");
    CHECK(h[8] == 'D' && h[15] == 'D' && h[16] == 'h', "%s: sync_from did not bring the set", where);
    h[0] = 'H';
    umem_sync_to(host, (uintptr_t)h, &at, d, n);
    unsigned char first = 0;
    umem_copy_to(&at, d, host, (uintptr_t)&first, 1);
    CHECK(first == 'H', "%s: sync_to did not take the host's write", where);
    umem_disconnect(host, (uintptr_t)h, &at, d, alignment);
    OK(&at, "disconnect");
    free(h);

    /* location memory paired with the host: the host writes through its address */
    uintptr_t m = umem_alloc(&at, n);
    umem_set(&at, m, 'm', n);
    uintptr_t hp = umem_connect(&at, m, n, host, alignment);
    OK(host, "connect location -> host");
    CHECK(((unsigned char *)hp)[n - 1] == 'm', "%s: the host's copy lacks the data", where);
    ((unsigned char *)hp)[1] = 'W';
    umem_sync_from(&at, m, host, hp, n);
    umem_copy_to(&at, m + 1, host, (uintptr_t)&first, 1);
    CHECK(first == 'W', "%s: sync_from did not bring the host's write", where);
    umem_set(&at, m + 2, 'X', 1);
    umem_sync_to(&at, m, host, hp, n);
    CHECK(((unsigned char *)hp)[2] == 'X', "%s: sync_to did not bring the set", where);
    umem_disconnect(&at, m, host, hp, alignment);
    umem_free(&at, m);
    OK(&at, "free");
    OK(host, "host");
  }
  umem_dtor(&at);
}

/* Bad input: a status naming the problem, nothing written, no crash. */
static void bad_input(umemHost *host, const char *where) {
  umemLocus at;
  umemLocus_ctor(&at, where);
  uintptr_t a = umem_alloc(&at, 64);
  umem_set(&at, a, 1, 64);

  umem_free(&at, a + 1);
  expect_status(&at, umemValueError, "not the start", "free inside an allocation");
  umem_free(&at, (uintptr_t)0x1000);
  expect_status(&at, umemValueError, "not the start", "free of a made-up address");

  unsigned char big[128];
  memset(big, 9, sizeof big);
  umem_copy_from(&at, a + 32, host, (uintptr_t)big, 64);
  expect_status(&at, umemIndexError, "past the end", "copy past the end");
  unsigned char got[64];
  umem_copy_to(&at, a, host, (uintptr_t)got, 64);
  for (int i = 0; i < 64; i++) CHECK(got[i] == 1, "%s: a refused copy wrote byte %d", where, i);
  umem_set(&at, a + 60, 0, 5);
  expect_status(&at, umemIndexError, "past the end", "set past the end");

  CHECK(umem_aligned_alloc(&at, 3, 9) == 0, "alignment 3 allocated");
  expect_status(&at, umemValueError, "power of 2", "alignment 3");
  CHECK(umem_calloc(&at, SIZE_MAX / 2, 4) == 0, "an overflowing calloc allocated");
  expect_status(&at, umemMemoryError, "overflow", "calloc overflow");
  CHECK(umem_alloc(&at, SIZE_MAX) == 0, "SIZE_MAX allocated");
  CHECK(!umem_is_ok(&at), "SIZE_MAX: no status");
  umem_clear_status(&at);

  /* Addresses umem never gave out, or took back: a status, never an access (the code
     before wrote them as host memory wherever the host reaches the location: SIGSEGV
     at 0x1000, freed heap written with status OK, a second aligned free crashing). */
  umem_set(&at, (uintptr_t)0x1000, 0, 8);
  expect_status(&at, umemValueError, "not an address", "set of a never-allocated address");
  umem_copy_to(&at, (uintptr_t)0x1000, host, (uintptr_t)got, 8);
  expect_status(&at, umemValueError, "not an address", "copy from a never-allocated address");
  uintptr_t al = umem_aligned_alloc(&at, 64, 64);
  OK(&at, "aligned alloc");
  umem_aligned_free(&at, al);
  OK(&at, "aligned free");
  umem_aligned_free(&at, al);
  expect_status(&at, umemValueError, "not an address", "aligned free twice");

  umem_free(&at, a);
  OK(&at, "free");
  umem_set(&at, a, 7, 8);
  expect_status(&at, umemValueError, "not an address", "set after free");
  umem_free(&at, a);
  expect_status(&at, umemValueError, "freed already", "double free");

  umem_dtor(&at);
  umem_dtor(&at);
  expect_status(&at, umemValueError, "destroyed", "dtor twice");
  CHECK(umem_alloc(&at, 8) == 0, "alloc after dtor");
  expect_status(&at, umemValueError, "destroyed", "alloc after dtor");
}

static void global_bad_input(umemHost *host) {
  CHECK(umem_alloc(NULL, 8) == 0, "alloc on NULL");
  CHECK(umem_get_status(NULL) == umemValueError, "NULL status");
  CHECK(strstr(umem_get_message(NULL), "umem_alloc") != NULL, "NULL message: %s", umem_get_message(NULL));
  umem_copy_to(NULL, 0, host, 0, 1);
  CHECK(strstr(umem_get_message(NULL), "umem_copy_to") != NULL, "NULL message: %s", umem_get_message(NULL));
  umem_clear_status(NULL);
  CHECK(umem_is_ok(NULL), "NULL status not cleared");

  umemLocus nowhere;
  umemLocus_ctor(&nowhere, "nowhere:0");
  CHECK(!umem_is_ok(&nowhere), "an unknown location constructed");
  CHECK(strstr(umem_get_message(&nowhere), "nowhere") != NULL, "message: %s", umem_get_message(&nowhere));
  CHECK(umem_alloc(&nowhere, 8) == 0, "allocated at an unknown location");
  umem_dtor(&nowhere);

  umemLocus far;
  umemLocus_ctor(&far, "opencl:99");
  CHECK(umem_get_status(&far) == umemRuntimeError, "opencl:99: %s", umem_get_message(&far));
  CHECK(strstr(umem_get_message(&far), "opencl:99") != NULL, "message: %s", umem_get_message(&far));
  umem_dtor(&far);

  umemLocus long_name;
  umemLocus_ctor(&long_name, "opencl:000000000000000000000000000000000001");
  CHECK(umem_get_status(&long_name) == umemValueError, "a long name: %s", umem_get_message(&long_name));
  umem_dtor(&long_name);

  umemLocus null_name;
  umemLocus_ctor(&null_name, NULL);
  CHECK(umem_get_status(&null_name) == umemValueError, "a NULL name: %s", umem_get_message(&null_name));
  umem_dtor(&null_name);
}

/* A file written from a location's memory and read back into another's. */
static void file(umemHost *host, const char *from, const char *to) {
  char path[] = "/tmp/umem-conformance-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  umemFile f;
  umemFile_ctor(&f, path, "w+b");
  uintptr_t start = umem_alloc(&f, 0);
  OK(&f, "file alloc");
  umemLocus a, b;
  umemLocus_ctor(&a, from);
  umemLocus_ctor(&b, to);
  size_t n = 3000;
  unsigned char *src = malloc(n), *got = malloc(n);
  fill_pattern(src, n, 11);
  uintptr_t x = umem_alloc(&a, n), y = umem_alloc(&b, n);
  umem_copy_from(&a, x, host, (uintptr_t)src, n);
  umem_copy_to(&a, x, &f, start, n);
  OK(&a, "to the file");
  OK(&f, "to the file");
  umem_copy_from(&b, y, &f, start, n);
  OK(&b, "from the file");
  umem_copy_to(&b, y, host, (uintptr_t)got, n);
  CHECK(memcmp(got, src, n) == 0, "%s -> file -> %s differs", from, to);
  umem_free(&a, x);
  umem_free(&b, y);
  umem_dtor(&a);
  umem_dtor(&b);
  umem_dtor(&f);
  free(src);
  free(got);
  remove(path);
  (void)fd;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LOCATION...\n", argv[0]);
    return 2;
  }
  umemHost host;
  umemHost_ctor(&host);
  global_bad_input(&host);
  for (int i = 1; i < argc; i++) {
    basics(&host, argv[i]);
    connections(&host, argv[i]);
    bad_input(&host, argv[i]);
    for (int j = 1; j < argc; j++) pair(&host, argv[i], argv[j]);
    file(&host, argv[i], argv[argc - i]);
    printf("umem at %s: ok\n", argv[i]);
  }
  OK(&host, "host");
  umem_dtor(&host);
  printf("umem conformance: %d checks passed at %d locations\n", checks, argc - 1);
  return 0;
}
