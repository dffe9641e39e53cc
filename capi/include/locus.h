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

// Which runtime a [`LocusNative`] handle belongs to.
typedef enum {
  // Host memory: `pointer`.
  LOCUS_NATIVE_HOST = 0,
  // `omp_target_alloc` memory: `pointer` on OpenMP device `device`.
  LOCUS_NATIVE_OPENMP = 1,
  // An OpenCL buffer: `object` is the `cl_mem`, the allocation starts `offset` bytes
  // into it.
  LOCUS_NATIVE_OPENCL = 2,
  // CUDA memory: `pointer` is the `CUdeviceptr`.
  LOCUS_NATIVE_CUDA = 3,
  // HIP memory: `pointer` is the device address.
  LOCUS_NATIVE_HIP = 4,
  // SYCL USM: `pointer`.
  LOCUS_NATIVE_SYCL = 5,
  // A wgpu buffer, `offset` bytes in. wgpu's Rust buffer is no C object (no
  // `WGPUBuffer`): C reaches it through locus's copies or a host mapping.
  LOCUS_NATIVE_WEBGPU = 6,
} LocusNativeKind;

// The kind of memory an allocation is (`locus_memory_new_kind`); each location offers
// some (`locus info` lists them).
typedef enum {
  // The location's ordinary memory (what `locus_memory_new` gives).
  LOCUS_KIND_DEFAULT = 0,
  // Page-locked host memory of a CUDA / HIP device.
  LOCUS_KIND_PINNED_HOST = 1,
  // Managed (unified) memory of a CUDA / HIP device.
  LOCUS_KIND_MANAGED = 2,
  // SYCL USM device memory.
  LOCUS_KIND_USM_DEVICE = 3,
  // SYCL USM shared memory.
  LOCUS_KIND_USM_SHARED = 4,
  // SYCL USM host memory.
  LOCUS_KIND_USM_HOST = 5,
  // Device memory from the CUDA / HIP driver's stream-ordered pool.
  LOCUS_KIND_STREAM_ORDERED = 6,
  // An OpenCL buffer in host-accessible memory (`CL_MEM_ALLOC_HOST_PTR`).
  LOCUS_KIND_HOST_VISIBLE = 7,
  // OpenCL coarse-grained shared virtual memory.
  LOCUS_KIND_SVM_COARSE = 8,
  // OpenCL fine-grained buffer SVM.
  LOCUS_KIND_SVM_FINE = 9,
} LocusMemoryKind;

// Which runtime a [`LocusNativeEvent`] belongs to.
typedef enum {
  // The work has no event of a runtime (it ran on a locus thread, or is done):
  // wait with `locus_event_wait`.
  LOCUS_EVENT_NONE = 0,
  // `handle` is a `cl_event`.
  LOCUS_EVENT_OPENCL = 1,
  // `handle` is a `DPCTLSyclEventRef` (a `sycl::event *`).
  LOCUS_EVENT_SYCL = 2,
  // `handle` is a `CUevent` recorded on device `device`'s stream.
  LOCUS_EVENT_CUDA = 3,
  // `handle` is a `hipEvent_t` recorded on device `device`'s stream.
  LOCUS_EVENT_HIP = 4,
} LocusNativeEventKind;

// The element type of a buffer.
typedef enum {
  LOCUS_U8 = 0,
  LOCUS_I8 = 1,
  LOCUS_U16 = 2,
  LOCUS_I16 = 3,
  LOCUS_U32 = 4,
  LOCUS_I32 = 5,
  LOCUS_U64 = 6,
  LOCUS_I64 = 7,
  LOCUS_F32 = 8,
  LOCUS_F64 = 9,
} LocusElement;

// How an access uses the data.
typedef enum {
  // Reads only: the data is current there; other copies stay valid.
  LOCUS_READ = 0,
  // Reads and writes: the data is current there, and that copy becomes the only
  // valid one when the access ends.
  LOCUS_READ_WRITE = 1,
} LocusAccessMode;

// An open access to a buffer, made by `locus_buffer_access`, ended by
// `locus_access_end`.
typedef struct LocusAccess LocusAccess;

// A typed buffer, made by `locus_buffer_new` / `locus_buffer_from_host`, freed by
// `locus_buffer_free`.
typedef struct LocusBuffer LocusBuffer;

// The completion of asynchronous work, made by `locus_memory_copy_async` and freed by
// `locus_event_free` (freeing does not wait: the work finishes on its own, and the
// memory it uses stays alive until then).
typedef struct LocusEvent LocusEvent;

// An allocation at one location, made by `locus_memory_new` and freed by
// `locus_memory_free`. Opaque to C.
typedef struct LocusMemory LocusMemory;

// An ordered stream of work (locus's `Queue`): work submitted on it runs after the work
// submitted on it before. Made by `locus_queue_new`, freed by `locus_queue_free`.
typedef struct LocusQueue LocusQueue;

// A memory resource, made by one of the `locus_resource_*` constructors and freed by
// `locus_resource_free` (memory allocated from it keeps what it needs alive).
typedef struct LocusResource LocusResource;

// The runtime's own handle of an allocation.
typedef struct {
  // Which runtime, and so which fields mean something.
  LocusNativeKind kind;
  // The address (host, OpenMP, CUDA, HIP, SYCL USM); NULL for OpenCL and WebGPU.
  void *pointer;
  // The `cl_mem` (OpenCL); NULL otherwise.
  void *object;
  // Where the allocation starts inside `object` (OpenCL, WebGPU); 0 otherwise.
  size_t offset;
  // The OpenMP device number (OpenMP), the device's ordinal otherwise.
  int32_t device;
} LocusNative;

// What `locus_lookup` knows of an address.
typedef struct {
  // Where the allocation lives (`"host"`, `"cuda:0"`, ...), NUL-terminated.
  char location[32];
  // The allocation's first address.
  void *base;
  // The allocation's length in bytes.
  size_t bytes;
  // How far into the allocation the address lies.
  size_t offset;
  // The kind of memory.
  LocusMemoryKind kind;
  // Non-zero when the memory is on loan from a memory resource (its description:
  // `locus_lookup_resource`).
  int32_t from_resource;
  // How many runtimes registered the range in place (CUDA's `cuMemHostRegister`,
  // HIP's `hipHostRegister`); 0 for memory that is not registered.
  uint32_t registered_with;
  // Non-zero where locus made, adopted or registered the memory; 0 where a driver
  // answered for memory another library allocated (`base` and `bytes` are then the
  // driver's range, or the address and 0 where it gives none: SYCL USM).
  int32_t known_to_locus;
} LocusAddressInfo;

// The runtime's own event of asynchronous work, for a wait on the device
// (`cuStreamWaitEvent`, an OpenCL wait list, SYCL's `depends_on`, ...). Owned by the
// `LocusEvent`: valid while it is, never released by C.
typedef struct {
  LocusNativeEventKind kind;
  void *handle;
  uint32_t device;
} LocusNativeEvent;

// A function locus calls once work is done, with the pointer it was given and the
// work's status (`LOCUS_OK`, or why it failed).
typedef void (*LocusEventCallback)(void *data, LocusStatus status);

// One copy of a batch (`locus_memory_copy_batch`): `len` bytes from `src` at
// `src_offset` to `dst` at `dst_offset`.
typedef struct {
  const LocusMemory *src;
  size_t src_offset;
  const LocusMemory *dst;
  size_t dst_offset;
  size_t len;
} LocusCopy;

// A rectangle of bytes in one memory, as `clEnqueueCopyBufferRect` and CUDA's
// `CUDA_MEMCPY3D` address it: byte `(x, y, z)` is at `x + y * row_pitch + z *
// slice_pitch`.
typedef struct {
  // Where it starts: x in bytes, y in rows, z in planes.
  size_t origin[3];
  // Its size: width in bytes, rows, planes (each at least 1).
  size_t extent[3];
  // Bytes from one row to the next.
  size_t row_pitch;
  // Bytes from one plane to the next.
  size_t slice_pitch;
} LocusRegion;

// Counts of a statistics adaptor (RMM's `bytes_counter` / `allocations_counter`).
typedef struct {
  size_t current_bytes;
  size_t peak_bytes;
  size_t total_bytes;
  size_t current_count;
  size_t peak_count;
  size_t total_count;
} LocusStatistics;

// A copy began: its span (the same in its `end_copy`), source and destination
// locations, bytes and route kind (`"direct"`, `"peer"`, `"mapped"`, `"staged"`).
typedef void (*LocusTraceBeginCopy)(void *data,
                                    uint64_t span,
                                    const char *src,
                                    const char *dst,
                                    size_t bytes,
                                    const char *route);

// A copy ended: its span, whether it succeeded, and its seconds.
typedef void (*LocusTraceEndCopy)(void *data, uint64_t span, bool ok, double seconds);

// Memory was allocated (or adopted, or handed out by a resource: `source` says which):
// its id (the same in its `deallocate`), location and bytes.
typedef void (*LocusTraceAllocate)(void *data,
                                   uint64_t id,
                                   const char *location,
                                   size_t bytes,
                                   const char *source);

// Memory was freed: its id, location and bytes.
typedef void (*LocusTraceDeallocate)(void *data, uint64_t id, const char *location, size_t bytes);

// A kernel ran: where, its name, and its seconds (until the launch returned).
typedef void (*LocusTraceLaunch)(void *data,
                                 const char *location,
                                 const char *kernel,
                                 double seconds);

// What `locus_trace_set_callbacks` calls; a NULL member is not called. Every callback
// runs on the thread that did the work (a queued copy's `end_copy` on a locus thread),
// must not unwind, and may call locus (work it asks for is not traced).
typedef struct {
  // Passed to every callback.
  void *data;
  // Before a copy (a queued one: when it is submitted).
  LocusTraceBeginCopy begin_copy;
  // After it (a queued one: when locus sees it done).
  LocusTraceEndCopy end_copy;
  // After an allocation.
  LocusTraceAllocate allocate;
  // Before a free.
  LocusTraceDeallocate deallocate;
  // After a launch returned.
  LocusTraceLaunch launch;
} LocusTraceCallbacks;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// The message of the calling thread's last failed call (`""` when none failed), valid
// until the next failed call on this thread. Never NULL.
const char *locus_last_error(void);

// This library's version (the crate's, e.g. `"0.2.0"`), a static string.
const char *locus_version(void);

// The location of `device` in the program's own OpenCL `context` (a `cl_context` and a
// `cl_device_id`), written NUL-terminated into `buf` (`capacity` bytes; `*needed`, when
// not NULL, gets the bytes it takes): the location locus already has for them (its own
// context, or one adopted before), or a new one (`opencl:3`), numbered after every
// OpenCL location so far, that every call takes as it takes a discovered location.
// locus retains the context for the life of the process and makes an in-order queue of
// its own in it; the program's queues of that context are adopted with
// `locus_queue_from_native`, its buffers with `locus_memory_adopt_opencl_buffer`. A
// device that is not one of the context's is `LOCUS_ERROR_INVALID`.
//
// # Safety
// `context` is a live `cl_context`; `buf` is NULL or holds `capacity` bytes; `needed` is
// NULL or points to a `size_t`.
LocusStatus locus_adopt_opencl_context(void *context,
                                       void *device,
                                       char *buf,
                                       size_t capacity,
                                       size_t *needed);

// Wraps the program's own OpenCL buffer `mem` (a `cl_mem`) in place as locus memory of
// its context's location (the context adopted now if locus did not know it), into
// `*out`: nothing is copied; locus retains the buffer and releases it when the handle is
// freed, so the program may release its own reference at any time.
//
// # Safety
// `mem` is a live `cl_mem` (OpenCL cannot tell one from any other pointer); `out` is
// NULL or points to a `LocusMemory *`.
LocusStatus locus_memory_adopt_opencl_buffer(void *mem, LocusMemory **out);

// The location of `device` in the program's own SYCL `context` (dpctl's
// `DPCTLSyclContextRef` and `DPCTLSyclDeviceRef`, kept by the caller), written into
// `buf` as `locus_adopt_opencl_context` does: the location locus already has for them,
// or a new one (`sycl:1`) with an in-order queue of locus's own in the context. The
// program's queues of it are adopted with `locus_queue_from_native`
// (`LOCUS_NATIVE_SYCL`), its USM pointers with `locus_memory_adopt` at that location.
//
// # Safety
// `context` and `device` are live dpctl references; `buf` and `needed` as for
// `locus_adopt_opencl_context`.
LocusStatus locus_adopt_sycl_context(void *context,
                                     void *device,
                                     char *buf,
                                     size_t capacity,
                                     size_t *needed);

// Adopts a program's own queue of `location`'s device, into `*out`: `kind` is a
// `LocusNativeKind`, `handle` the queue (`LOCUS_NATIVE_OPENCL`: a `cl_command_queue` of
// locus's context there; `LOCUS_NATIVE_SYCL`: a `DPCTLSyclQueueRef` of locus's
// context; `LOCUS_NATIVE_CUDA`: a `CUstream` / `cudaStream_t` of the device's primary
// context, NULL for the legacy default stream; `LOCUS_NATIVE_HIP`: a `hipStream_t`).
// Copies submitted on the returned queue (`locus_memory_copy_async`) run after the
// program's work queued there before, and the program's later work there runs after
// them, ordered on the device. A queue of another device or context is an error naming
// both. `locus_queue_free` lets go of it; locus never destroys the native queue (an
// OpenCL or SYCL queue may be released by the program at once: locus holds its own
// reference; a CUDA or HIP stream must outlive the queue and its work).
//
// # Safety
// `location` is NULL or a NUL-terminated string; `handle` is a live queue of the
// runtime `kind` names; `out` is NULL or points to a `LocusQueue *`.
LocusStatus locus_queue_from_native(const char *location,
                                    int32_t kind,
                                    void *handle,
                                    LocusQueue **out);

// The runtime queue of `queue` at `location`, into `*kind` (a `LocusNativeKind`) and
// `*handle`: the adopted queue for a queue adopted there, else the device's own
// in-order queue locus submits to (a program's work queued there runs after locus's
// queued copies); `LOCUS_NATIVE_HOST` and NULL where the technology has none (host,
// OpenMP) or no C handle (WebGPU). Valid while locus runs; never release it.
//
// # Safety
// `location` is NULL or a NUL-terminated string; `kind` and `handle` are NULL or point
// to an `int32_t` and a `void *`.
LocusStatus locus_queue_native(const LocusQueue *queue,
                               const char *location,
                               int32_t *kind,
                               void **handle);

// A zeroed buffer of `count` elements of `element` (a `LocusElement`) made at
// `location`, into `*out`.
//
// # Safety
// `location` is NULL or NUL-terminated; `out` is NULL or points to a `LocusBuffer *`.
LocusStatus locus_buffer_new(const char *location,
                             int32_t element,
                             size_t count,
                             LocusBuffer **out);

// A buffer at `location` holding a copy of `count` elements of `element` at `data` (host
// memory), into `*out`.
//
// # Safety
// `data` holds `count` elements (NULL when `count` is 0); `location` and `out` as for
// `locus_buffer_new`.
LocusStatus locus_buffer_from_host(const char *location,
                                   int32_t element,
                                   const void *data,
                                   size_t count,
                                   LocusBuffer **out);

// Declares an access to the buffer at `location` and opens it: the data is current
// there when this returns (moved, or served in place where `location` reaches a copy),
// `*native` is the runtime's handle of the memory to use, `*out` the access to end
// with `locus_access_end`. A write access while any other access is open, or any access
// while a write is open, is `LOCUS_ERROR_INVALID`.
//
// # Safety
// `location` is NULL or NUL-terminated; `native` is NULL or points to a `LocusNative`;
// `out` is NULL or points to a `LocusAccess *`.
LocusStatus locus_buffer_access(const LocusBuffer *buffer,
                                const char *location,
                                int32_t mode,
                                LocusNative *native,
                                LocusAccess **out);

// Ends an access: after a write, the memory it served holds the only current copy.
// Ending the same access twice is `LOCUS_ERROR_BAD_HANDLE`.
LocusStatus locus_access_end(LocusAccess *access);

// Copies the buffer's current data (every element) into host memory at `dst` of
// `capacity` bytes; a capacity smaller than the data is `LOCUS_ERROR_INVALID`.
//
// # Safety
// `dst` holds `capacity` writable bytes.
LocusStatus locus_buffer_read(const LocusBuffer *buffer, void *dst, size_t capacity);

// The buffer's element count, into `*count`.
//
// # Safety
// `count` is NULL or points to a `size_t`.
LocusStatus locus_buffer_len(const LocusBuffer *buffer, size_t *count);

// Frees a buffer handle; memory an open access uses stays valid until it ends. NULL
// does nothing.
LocusStatus locus_buffer_free(LocusBuffer *buffer);

// Allocates `bytes` at `location` that other processes on this node can open in place
// (host memory: a POSIX shared memory object; at the host, an OpenMP device on the
// host, a SYCL device with system USM, an OpenCL CPU device; another location is
// `LOCUS_ERROR_INVALID`, naming it). Free it with `locus_memory_free`: the name goes,
// processes that opened it keep their mapping.
//
// # Safety
// `location` is NULL or a NUL-terminated string; `out` is NULL or points to a
// `LocusMemory *`.
LocusStatus locus_memory_new_shared(const char *location, size_t bytes, LocusMemory **out);

// The text another process on this node opens `memory` with
// (`locus_memory_open_ipc`), into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`); memory
// made by `locus_memory_new_shared` only.
//
// # Safety
// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
LocusStatus locus_memory_ipc_handle(const LocusMemory *memory,
                                    char *buf,
                                    size_t capacity,
                                    size_t *needed);

// Opens memory another process on this node shared, from its handle's text: the same
// pages, in place. A handle of another node, of memory its maker freed, or text that is
// no handle is `LOCUS_ERROR_INVALID`, naming what. Free it with `locus_memory_free`.
//
// # Safety
// `handle` is NULL or a NUL-terminated string; `out` is NULL or points to a
// `LocusMemory *`.
LocusStatus locus_memory_open_ipc(const char *handle, LocusMemory **out);

// Which allocation `address` lies in, into `*info`: any address inside live memory
// locus made, adopted or registered whose handle is an address (host, OpenMP, CUDA,
// HIP, SYCL USM; OpenCL and WebGPU memory are objects), then any address the drivers
// present allocated (a `cudaMalloc` of the application, CuPy's or PyTorch's memory,
// SYCL USM: `known_to_locus` is 0). Another address is `LOCUS_ERROR_INVALID`, naming it
// (`locus_last_error`), and `*info` is untouched.
//
// # Safety
// `info` is NULL or points to a `LocusAddressInfo`. `address` is only compared, never
// read.
LocusStatus locus_lookup(const void *address, LocusAddressInfo *info);

// The description of the memory resource the allocation holding `address` is on loan
// from (`pool(upstream(cuda:0))`, ...), into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`);
// the empty string for memory allocated or adopted directly.
//
// # Safety
// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
LocusStatus locus_lookup_resource(const void *address, char *buf, size_t capacity, size_t *needed);

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

// Wraps host memory the C program owns (`pointer`, `bytes` long) as locus memory at
// `host`, into `*out`, registered in place ("pinned" where it lies) with every runtime
// whose copies need page-locked memory (CUDA's `cuMemHostRegister`, HIP's
// `hipHostRegister`): copies between it and those devices then go by DMA. Other
// locations use it as any host memory. `locus_memory_free` of the handle undoes the
// registration; locus never frees the memory itself. A runtime that refuses (memory
// registered already, by another library) is an error naming it, and nothing stays
// registered.
//
// # Safety
// `pointer` is `bytes` bytes of writable host memory, valid until `locus_memory_free` of
// the handle returns; `out` is NULL or points to a `LocusMemory *`.
LocusStatus locus_memory_register_host(void *pointer, size_t bytes, LocusMemory **out);

// Allocates `bytes` that every one of the `count` locations in `locations` uses in
// place, of the best kind they share (the owner's own memory, managed, USM shared, SVM,
// host-visible, USM host or pinned host memory), and stores the new handle in `*out`;
// `LOCUS_ERROR_INVALID` naming, for each kind tried, the location that does not reach
// it. Free it with `locus_memory_free`.
//
// # Safety
// `locations` is NULL (with `count` 0) or points to `count` NUL-terminated strings;
// `out` is NULL or points to a `LocusMemory *`.
LocusStatus locus_memory_new_reachable(const char *const *locations,
                                       size_t count,
                                       size_t bytes,
                                       LocusMemory **out);

// Allocates `bytes` of memory of `kind` (a `LocusMemoryKind`) at `location` and stores the new handle in
// `*out` (free it with `locus_memory_free`). A kind the location does not offer is
// `LOCUS_ERROR_INVALID`, naming the kinds it offers.
//
// # Safety
// `location` is NULL or a NUL-terminated string; `out` is NULL or points to a
// `LocusMemory *`.
LocusStatus locus_memory_new_kind(const char *location,
                                  int32_t kind,
                                  size_t bytes,
                                  LocusMemory **out);

// The runtime's own handle of the memory, into `*native` (valid until the memory is
// freed; locus still owns it: do not free it).
//
// # Safety
// `native` is NULL or points to a `LocusNative`.
LocusStatus locus_memory_native(const LocusMemory *memory, LocusNative *native);

// Wraps memory a C program allocated itself (`pointer`, `bytes` long, of `kind` at
// `location`: host memory, an OpenMP device pointer, a CUDA / HIP device or pinned or
// managed pointer, SYCL USM) as locus memory, into `*out`, without copying it. locus never
// frees it: the caller keeps it alive until `locus_memory_free` of the handle returns. An
// OpenCL or WebGPU location (whose memory is an object, not a pointer) is refused.
//
// # Safety
// `pointer` is a live allocation of at least `bytes` bytes of that kind at that location,
// valid until the handle is freed; `location` is NULL or NUL-terminated; `out` is NULL or
// points to a `LocusMemory *`.
LocusStatus locus_memory_adopt(const char *location,
                               int32_t kind,
                               void *pointer,
                               size_t bytes,
                               LocusMemory **out);

// Makes a new queue, into `*out`.
//
// # Safety
// `out` is NULL or points to a `LocusQueue *`.
LocusStatus locus_queue_new(LocusQueue **out);

// Frees a queue (work on it goes on; an adopted native queue is let go, never
// destroyed). NULL does nothing.
LocusStatus locus_queue_free(LocusQueue *queue);

// Waits for everything submitted on the queue so far; the first failure among it is the
// status.
LocusStatus locus_queue_wait(const LocusQueue *queue);

// Starts a copy of `len` bytes from `src` at `src_offset` to `dst` at `dst_offset` and
// returns at once; the event of its completion goes into `*event` (NULL: no event; the
// copy still completes). On `queue` (NULL: none) it runs after the work submitted there
// before. Both ranges are checked first; nothing starts when either is out of range.
// Do not touch the destination range before the event completes.
//
// # Safety
// `event` is NULL or points to a `LocusEvent *`.
LocusStatus locus_memory_copy_async(const LocusMemory *src,
                                    size_t src_offset,
                                    const LocusMemory *dst,
                                    size_t dst_offset,
                                    size_t len,
                                    const LocusQueue *queue,
                                    LocusEvent **event);

// Waits for the work; its failure, if it failed, is the status.
LocusStatus locus_event_wait(const LocusEvent *event);

// Whether the work has completed (successfully or not), into `*done`, without waiting.
//
// # Safety
// `done` is NULL or points to a `bool`.
LocusStatus locus_event_is_complete(const LocusEvent *event, bool *done);

// The runtime's own event of the work, into `*native` (`LOCUS_EVENT_NONE` when it has
// none).
//
// # Safety
// `native` is NULL or points to a `LocusNativeEvent`.
LocusStatus locus_event_native(const LocusEvent *event, LocusNativeEvent *native);

// Calls `done(data, status)` once the work is done: at once, on this thread, when it
// already is; otherwise on a locus thread (this call never blocks). For code that must
// start after locus's work with no host wait of its own: `omp_fulfill_event` of an
// OpenMP detached task (examples/c/openmp_target.c), an OpenCL user event. The event
// handle may be freed meanwhile.
//
// # Safety
// `done` is safe to call once, from any thread, with `data`; it must not unwind.
LocusStatus locus_event_on_complete(const LocusEvent *event, LocusEventCallback done, void *data);

// Starts moving `len` bytes from `offset` of `memory` to `location` ahead of their use
// there, when the memory migrates (SYCL USM shared memory to its device), and returns at
// once: the move's event goes into `*event` (NULL: no event) and whether anything moves
// into `*moved` (NULL: not said). Memory that does not migrate is left where it is
// (`*moved` false, the event already complete); the data is valid either way. The range
// is checked first.
//
// # Safety
// `location` is a NUL-terminated string; `event` is NULL or points to a `LocusEvent *`;
// `moved` is NULL or points to a `bool`.
LocusStatus locus_memory_prefetch(const LocusMemory *memory,
                                  const char *location,
                                  size_t offset,
                                  size_t len,
                                  LocusEvent **event,
                                  bool *moved);

// Frees the event handle without waiting. NULL does nothing.
LocusStatus locus_event_free(LocusEvent *event);

// Runs `count` copies between any locations and returns when all are done. Every copy
// is checked first (handles, ranges, two copies writing the same bytes or one reading
// what another writes): on bad input nothing is copied. A runtime's fixed cost is paid
// once per batch where its queue carries the copies (OpenCL, CUDA, HIP). When a started
// copy fails the message names each failed copy and how many completed.
//
// # Safety
// `copies` is NULL (with `count` 0) or points to `count` `LocusCopy` values.
LocusStatus locus_memory_copy_batch(const LocusCopy *copies, size_t count);

// Copies region `*src_region` of `src` to region `*dst_region` of `dst` (one extent,
// any pitches), at any two locations, in one call (umem's `copy_to` for a rectangle).
// Both regions are checked first: nothing is written when either lies outside its
// memory, has a zero extent, rows or planes that overlap, or the two share bytes of one
// memory.
//
// # Safety
// `src_region` and `dst_region` are NULL or point to `LocusRegion`s.
LocusStatus locus_memory_copy_region(const LocusMemory *src,
                                     const LocusRegion *src_region,
                                     const LocusMemory *dst,
                                     const LocusRegion *dst_region);

// The resource memory at `location` is allocated from now (its upstream unless
// replaced with `locus_resource_set_default`), into `*out`.
//
// # Safety
// `location` is NULL or NUL-terminated; `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_default(const char *location, LocusResource **out);

// Makes `resource` the default of its location (buffers and `locus_memory_new` there
// allocate from it); refused when it allocates elsewhere.
//
// # Safety
// `location` is NULL or NUL-terminated.
LocusStatus locus_resource_set_default(const char *location, const LocusResource *resource);

// The location's own allocator for memory of `kind` (a `LocusMemoryKind`), into `*out`.
//
// # Safety
// As [`locus_resource_default`].
LocusStatus locus_resource_upstream(const char *location, int32_t kind, LocusResource **out);

// A pool over `upstream` (RMM's `pool_memory_resource`): `initial` bytes taken at once,
// growing to at most `maximum` (0: no limit), blocks coalesced when freed.
//
// # Safety
// `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_pool(const LocusResource *upstream,
                                size_t initial,
                                size_t maximum,
                                LocusResource **out);

// An arena over `upstream` (RMM's `arena_memory_resource`): per-thread arenas taking
// `superblock` bytes at a time.
//
// # Safety
// `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_arena(const LocusResource *upstream,
                                 size_t superblock,
                                 LocusResource **out);

// Bins for sizes `smallest`, 2x, ... up to `largest` over `upstream`, `per_chunk`
// blocks at a time; larger requests go to `fallback` (RMM's
// `binning_memory_resource`).
//
// # Safety
// `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_binning(const LocusResource *upstream,
                                   const LocusResource *fallback,
                                   size_t smallest,
                                   size_t largest,
                                   size_t per_chunk,
                                   LocusResource **out);

// Blocks of `block` bytes over `upstream`, `per_chunk` per upstream allocation (RMM's
// `fixed_size_memory_resource`).
//
// # Safety
// `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_fixed_size(const LocusResource *upstream,
                                      size_t block,
                                      size_t per_chunk,
                                      LocusResource **out);

// `inner` with at most `budget` bytes allocated at once (RMM's `limiting_resource_adaptor`).
//
// # Safety
// `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_limiting(const LocusResource *inner, size_t budget, LocusResource **out);

// `inner`, counting bytes and allocations (RMM's `statistics_resource_adaptor`); read
// them with `locus_resource_statistics_totals`.
//
// # Safety
// `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_statistics(const LocusResource *inner, LocusResource **out);

// The counts of a resource made by `locus_resource_statistics`, into `*totals`.
//
// # Safety
// `totals` is NULL or points to a `LocusStatistics`.
LocusStatus locus_resource_statistics_totals(const LocusResource *resource,
                                             LocusStatistics *totals);

// `inner`, keeping a record of every live allocation (RMM's
// `tracking_resource_adaptor`); `locus_resource_outstanding` counts them.
//
// # Safety
// `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_tracking(const LocusResource *inner, LocusResource **out);

// How many allocations of a tracking adaptor are live, and their bytes.
//
// # Safety
// `count` and `bytes` are NULL or point to a `size_t`.
LocusStatus locus_resource_outstanding(const LocusResource *resource, size_t *count, size_t *bytes);

// `inner`, writing a CSV line per allocation and free to the file at `path` (RMM's
// `logging_resource_adaptor`, its columns).
//
// # Safety
// `path` is NULL or NUL-terminated; `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_logging(const LocusResource *inner,
                                   const char *path,
                                   LocusResource **out);

// `inner`, calling `callback(bytes, data)` when an allocation fails; when it returns
// true the allocation is tried again, up to `retries` times (RMM's
// `failure_callback_resource_adaptor`). The callback may run on any thread that
// allocates, and must not unwind (C++ exceptions) into locus.
//
// # Safety
// `callback` is a valid function for the resource's lifetime; `data` is what it
// expects; `out` is NULL or points to a `LocusResource *`.
LocusStatus locus_resource_failure_callback(const LocusResource *inner,
                                            size_t retries,
                                            bool (*callback)(size_t, void*),
                                            void *data,
                                            LocusResource **out);

// The location a resource allocates at, into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`).
//
// # Safety
// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
LocusStatus locus_resource_location(const LocusResource *resource,
                                    char *buf,
                                    size_t capacity,
                                    size_t *needed);

// Allocates `bytes` from `resource` into `*out` (free with `locus_memory_free`: the
// block goes back to the resource).
//
// # Safety
// `out` is NULL or points to a `LocusMemory *`.
LocusStatus locus_memory_from_resource(const LocusResource *resource,
                                       size_t bytes,
                                       LocusMemory **out);

// Frees a resource handle (memory allocated from it stays valid). NULL does nothing.
LocusStatus locus_resource_free(LocusResource *resource);

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

// Calls `callbacks` for every copy, allocation, free and launch from now on, replacing
// the callbacks set before; NULL removes them. The struct is copied: it need not
// outlive the call. A call already under way on another thread may still reach the
// callbacks replaced.
//
// # Safety
// `callbacks` is NULL or points to a `LocusTraceCallbacks` whose functions are safe to
// call from any thread with its `data`, never unwind, and stay loaded until they are
// replaced or removed.
LocusStatus locus_trace_set_callbacks(const LocusTraceCallbacks *callbacks);

// Starts writing every allocation, free, copy (pair, route, bytes), launch and wait to
// a new file at `path` in the Chrome trace format (open it in https://ui.perfetto.dev,
// or `locus trace summary path`), ending a trace this call started before.
//
// # Safety
// `path` is a NUL-terminated string.
LocusStatus locus_trace_start(const char *path);

// Ends the trace `locus_trace_start` started and completes its file; nothing when none
// was started.
LocusStatus locus_trace_finish(void);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* LOCUS_H */
