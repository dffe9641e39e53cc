/* locus: one memory model across Host, CUDA, HIP, OpenMP, OpenCL, SYCL and WebGPU.
 *
 * The C API. Generated from capi/src by cbindgen (tests/header.rs checks it is current;
 * LOCUS_CAPI_BLESS=1 cargo test -p locus-capi rewrites it). Compile and link with
 * `pkg-config --cflags --libs locus`.
 *
 * Every function returns a LocusStatus (LOCUS_OK is 0); on any other status,
 * locus_last_error() is the calling thread's message, naming the location, the call and
 * what to do. Nothing is written to an output argument on failure (but `*needed` on
 * LOCUS_ERROR_BUFFER_TOO_SMALL). Handles are opaque and freed by their own function; a
 * NULL, freed or made-up handle is an error, never a crash. */

#ifndef LOCUS_H
#define LOCUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// What a call returned: `LOCUS_OK`, or why it did nothing.
typedef enum {
  // It worked.
  LOCUS_OK = 0,
  // An argument is wrong (a range past the end, a size that overflows, text that is
  // not UTF-8, ...).
  LOCUS_ERROR_INVALID = 1,
  // A pointer or handle argument is NULL.
  LOCUS_ERROR_NULL = 2,
  // A handle that is not live: freed already, or never made by locus.
  LOCUS_ERROR_BAD_HANDLE = 3,
  // A location name locus does not know (`"opencl:0"`, `"host"`, ...).
  LOCUS_ERROR_UNKNOWN_LOCATION = 4,
  // The location is not available on this machine (the message says why).
  LOCUS_ERROR_UNAVAILABLE = 5,
  // The location ran out of memory, or a budget was exceeded.
  LOCUS_ERROR_OUT_OF_MEMORY = 6,
  // Host code cannot reach this memory in place: copy it instead.
  LOCUS_ERROR_NOT_HOST_ACCESSIBLE = 7,
  // A text output buffer is too small: `*needed` says how many bytes it takes.
  LOCUS_ERROR_BUFFER_TOO_SMALL = 8,
  // A runtime (OpenCL, CUDA, ...) call failed.
  LOCUS_ERROR_BACKEND = 9,
  // locus failed inside (a bug: please report the message).
  LOCUS_ERROR_INTERNAL = 10,
} LocusStatus;

// An allocation at one location, made by `locus_memory_new` and freed by
// `locus_memory_free`. Opaque to C.
typedef struct LocusMemory LocusMemory;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// The message of the calling thread's last failed call (`""` when none failed), valid
// until the next failed call on this thread. Never NULL.
const char *locus_last_error(void);

// This library's version (`"0.1.0"`), a static string.
const char *locus_version(void);

// Allocates `bytes` at `location` (`"host"`, `"opencl:0"`, `"cuda:1"`, ...) through
// its default memory resource, and stores the new handle in `*out`. Free it with
// `locus_memory_free`.
//
// # Safety
// `location` is NULL or a NUL-terminated string; `out` is NULL or points to a
// `LocusMemory *`.
LocusStatus locus_memory_new(const char *location, size_t bytes, LocusMemory **out);

// Frees memory made by `locus_memory_new` (after any call using it on another thread
// returns). NULL does nothing; a handle freed already is `LOCUS_ERROR_BAD_HANDLE`.
LocusStatus locus_memory_free(LocusMemory *memory);

// Its size in bytes, into `*bytes`.
//
// # Safety
// `bytes` is NULL or points to a `size_t`.
LocusStatus locus_memory_size(const LocusMemory *memory, size_t *bytes);

// Its location's name, into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`).
//
// # Safety
// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
LocusStatus locus_memory_location(const LocusMemory *memory,
                                  char *buf,
                                  size_t capacity,
                                  size_t *needed);

// Copies `len` bytes from host memory at `src` into the memory at `offset`.
//
// # Safety
// `src` holds `len` readable bytes (it may be NULL when `len` is 0).
LocusStatus locus_memory_write(const LocusMemory *memory,
                               size_t offset,
                               const void *src,
                               size_t len);

// Copies `len` bytes of the memory at `offset` into host memory at `dst`.
//
// # Safety
// `dst` holds `len` writable bytes (it may be NULL when `len` is 0) that no other
// thread uses during the call.
LocusStatus locus_memory_read(const LocusMemory *memory, size_t offset, void *dst, size_t len);

// Sets `len` bytes at `offset` to `byte` (umem's `set`).
LocusStatus locus_memory_fill(const LocusMemory *memory, size_t offset, size_t len, uint8_t byte);

// Copies `len` bytes from `src` at `src_offset` to `dst` at `dst_offset`, any two
// locations, on the route the transfer matrix picks (umem's `copy_to`). Both ranges
// are checked first; nothing is written when either is out of range.
LocusStatus locus_memory_copy(const LocusMemory *src,
                              size_t src_offset,
                              const LocusMemory *dst,
                              size_t dst_offset,
                              size_t len);

// Whether code running at `location` uses this memory in place (no copy), into
// `*result`.
//
// # Safety
// `location` is NULL or a NUL-terminated string; `result` is NULL or points to a
// `bool`.
LocusStatus locus_memory_is_accessible_from(const LocusMemory *memory,
                                            const char *location,
                                            bool *result);

// The host address of the memory's first byte, when host code reaches it with plain
// loads and stores (host memory, OpenMP's initial device, USM a CPU reaches), into
// `*address`; `LOCUS_ERROR_NOT_HOST_ACCESSIBLE` otherwise. Valid until the memory is
// freed.
//
// # Safety
// `address` is NULL or points to a `void *`.
LocusStatus locus_memory_host_pointer(const LocusMemory *memory, void **address);

// How many locations this machine has (the host first), into `*count`.
//
// # Safety
// `count` is NULL or points to a `size_t`.
LocusStatus locus_location_count(size_t *count);

// The name of location `index` (0 ..< `locus_location_count`), such as `"opencl:1"`,
// into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`).
//
// # Safety
// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
LocusStatus locus_location_name(size_t index, char *buf, size_t capacity, size_t *needed);

// Why `technology` (`"cuda"`, `"opencl"`, ...) has no location here, into `buf`: the
// empty string when it has one.
//
// # Safety
// `technology` is NULL or a NUL-terminated string; `buf` and `needed` as for
// `locus_location_name`.
LocusStatus locus_technology_missing(const char *technology,
                                     char *buf,
                                     size_t capacity,
                                     size_t *needed);

// The route a copy of `bytes` from memory at `src` to memory at `dst` takes, as text
// (`"opencl:0 -> host: direct (...)"`), into `buf`.
//
// # Safety
// `src` and `dst` are NULL or NUL-terminated strings; `buf` and `needed` as for
// `locus_location_name`.
LocusStatus locus_route(const char *src,
                        const char *dst,
                        size_t bytes,
                        char *buf,
                        size_t capacity,
                        size_t *needed);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* LOCUS_H */
