/* libumem's C API over locus: umem's contexts, addresses and connections, with every
 * locus location behind them. Compile and link with `pkg-config --cflags --libs locus`.
 *
 * Source-compatible with libumem (https://github.com/xnd-project/umem, at def69fa):
 * the same types, layouts, functions and status rules, so a umem program compiles
 * unchanged. Derived from libumem's umem.h, Copyright (c) 2018, Plures (Xnd), BSD
 * 3-Clause License: see LICENSE-umem.
 *
 * What locus adds:
 * - umemLocus: memory at any locus location by name, umemLocus_ctor(&ctx, "opencl:0")
 *   ("host", "openmp:N", "opencl:N", "sycl:N", "webgpu:N", "cuda:N", "hip:N"). Its
 *   addresses are pointers where the memory has one (host, OpenMP, CUDA, HIP, SYCL USM)
 *   and made-up numbers above any host pointer where it is an object (an OpenCL
 *   buffer, a wgpu buffer); either way, increments address the whole allocation.
 * - umemCuda, umemCudaHost and umemCudaManaged run on locus's CUDA backend (found at run
 *   time: on a machine without CUDA their constructor sets a status saying why).
 * - Bad input is a status, never a crash: an address that was never allocated or is
 *   freed twice, a copy past an allocation's end, a size that overflows, a context used
 *   after umem_dtor. A NULL context has no status of its own: the call records the error
 *   for the calling thread, read with umem_get_status(NULL) / umem_get_message(NULL).
 * - Copies between two files go through a host buffer (umem left them unimplemented). */

#ifndef UMEM_H
#define UMEM_H

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdbool.h>

#include "umem_config.h"
#include "umem_utils.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of memory context. */
typedef enum {
  umemVirtualDevice = 0,
  umemHostDevice,
  umemFileDevice,
  umemCudaDevice,
  umemCudaHostDevice,
  umemCudaManagedDevice,
  umemMMapDevice,
  umemRMMDevice,
  umemLocusDevice,
} umemDeviceType;

/* The type of a context's status. */
typedef enum {
  umemOK = 0,
  umemMemoryError,
  umemRuntimeError,
  umemIOError,
  umemValueError,
  umemTypeError,
  umemIndexError,
  umemNotImplementedError,
  umemNotSupportedError,
  umemAssertError,
} umemStatusType;

/* A context's status: its type and message (owned by the context; change it only with
   umem_set_status / umem_clear_status). */
typedef struct {
  umemStatusType type;
  char* message;
} umemStatus;

/* The base of every memory context. */
struct umemVtbl;
typedef struct {
  struct umemVtbl const *vptr;
  umemDeviceType type;
  umemStatus status;
  void* host_ctx;
} umemVirtual;

/* The methods of a context. */
struct umemVtbl {
  void (*dtor)(umemVirtual * const ctx);
  bool (*is_accessible_from)(umemVirtual * const src_ctx, umemVirtual * const dest_ctx);
  uintptr_t (*alloc)(umemVirtual * const ctx, size_t nbytes);
  uintptr_t (*calloc)(umemVirtual * const ctx, size_t nmemb, size_t size);
  void (*free)(umemVirtual * const ctx, uintptr_t adr);
  uintptr_t (*aligned_alloc)(umemVirtual * const ctx, size_t alignment, size_t size);
  uintptr_t (*aligned_origin)(umemVirtual * const ctx, uintptr_t aligned_adr);
  void (*aligned_free)(umemVirtual * const ctx, uintptr_t aligned_adr);
  void (*set)(umemVirtual * const ctx, uintptr_t adr, int c, size_t nbytes);
  void (*copy_to)(umemVirtual * const src_ctx, uintptr_t src_adr,
                  umemVirtual * const dest_ctx, uintptr_t dest_adr,
                  size_t nbytes);
  void (*copy_from)(umemVirtual * const dest_ctx, uintptr_t dest_adr,
                    umemVirtual * const src_ctx, uintptr_t src_adr,
                    size_t nbytes);
};

/* Host RAM (malloc / free). Construct with umemHost_ctor, destroy with umem_dtor. */
typedef struct {
  umemVirtual super;
} umemHost;

UMEM_EXTERN void umemHost_ctor(umemHost * const ctx);

UMEM_EXTERN void umemVirtual_ctor(umemVirtual * const ctx, umemHost* host_ctx);

/* Device memory of CUDA device `device` (locus's cuda:<device>). */
typedef struct {
  umemVirtual super;
  umemHost host;
  int device;
} umemCuda;

UMEM_EXTERN void umemCuda_ctor(umemCuda * const ctx, int device);

/* Page-locked host memory of CUDA (locus's pinned host memory of cuda:0). */
typedef struct {
  umemVirtual super;
  umemHost host;
  unsigned int flags;
} umemCudaHost;

UMEM_EXTERN void umemCudaHost_ctor(umemCudaHost * const ctx, unsigned int flags);

/* CUDA managed memory (locus's managed memory of cuda:0). */
typedef struct {
  umemVirtual super;
  umemHost host;
  unsigned int flags;
  bool async;
  uintptr_t stream;
} umemCudaManaged;

UMEM_EXTERN void umemCudaManaged_ctor(umemCudaManaged * const ctx, unsigned int flags, bool async, uintptr_t stream);

/* A file in binary form (stdio); addresses are offsets. The first umem_alloc opens it. */
typedef struct {
  umemVirtual super;
  umemHost host;
  uintptr_t fp;
  const char * filename;
  const char * mode;
} umemFile;

UMEM_EXTERN void umemFile_ctor(umemFile * const ctx,
                               const char* filename, const char* mode);

/* Memory at a locus location, by name ("opencl:0", "sycl:1", "webgpu:0", "openmp:0",
   "host", "cuda:0", "hip:0"). An unknown or unavailable location sets the status. */
#define UMEM_LOCUS_NAME_CAPACITY 32
typedef struct {
  umemVirtual super;
  umemHost host;
  char location[UMEM_LOCUS_NAME_CAPACITY];
} umemLocus;

UMEM_EXTERN void umemLocus_ctor(umemLocus * const ctx, const char * location);

/* Public C API functions. */

static inline void umem_dtor(void * const ctx);
static inline uintptr_t umem_alloc(void * const ctx, size_t nbytes);
static inline uintptr_t umem_calloc(void * const ctx, size_t nmemb, size_t size);
static inline uintptr_t umem_aligned_alloc(void * const ctx, size_t alignment, size_t size);
static inline uintptr_t umem_aligned_origin(void * const ctx, uintptr_t aligned_adr);
static inline bool umem_is_accessible_from(void * const src_ctx, void * const dest_ctx);
static inline size_t umem_fundamental_align(void * const ctx);
static inline void umem_free(void * const ctx, uintptr_t adr);
static inline void umem_aligned_free(void * const ctx, uintptr_t aligned_adr);
static inline void umem_set(void * const ctx, uintptr_t adr, int c, size_t nbytes);
static inline void umem_set_safe(void * const ctx, uintptr_t adr, size_t size, int c, size_t nbytes);
static inline void umem_copy_to(void * const src_ctx, uintptr_t src_adr,
                                void * const dest_ctx, uintptr_t dest_adr,
                                size_t nbytes);
static inline void umem_copy_to_safe(void * const src_ctx, uintptr_t src_adr, size_t src_size,
                                     void * const dest_ctx, uintptr_t dest_adr, size_t dest_size,
                                     size_t nbytes);
static inline void umem_copy_from(void * const dest_ctx, uintptr_t dest_adr,
                                  void * const src_ctx, uintptr_t src_adr,
                                  size_t nbytes);
static inline void umem_copy_from_safe(void * const dest_ctx, uintptr_t dest_adr, size_t dest_size,
                                       void * const src_ctx, uintptr_t src_adr, size_t src_size,
                                       size_t nbytes);

UMEM_EXTERN uintptr_t umem_connect(void * const src_ctx, uintptr_t src_adr,
                                   size_t nbytes, void * const dest_ctx,
                                   size_t dest_alignment);
UMEM_EXTERN void umem_sync_from(void * const src_ctx, uintptr_t src_adr,
                                void * const dest_ctx, uintptr_t dest_adr,
                                size_t nbytes);
UMEM_EXTERN void umem_sync_to(void * const src_ctx, uintptr_t src_adr,
                              void * const dest_ctx, uintptr_t dest_adr,
                              size_t nbytes);
UMEM_EXTERN void umem_disconnect(void * const src_ctx, uintptr_t src_adr,
                                 void * const dest_ctx, uintptr_t dest_adr,
                                 size_t dest_alignment);
UMEM_EXTERN void umem_sync_to_safe(void * const src_ctx, uintptr_t src_adr, size_t src_size,
                                   void * const dest_ctx, uintptr_t dest_adr, size_t dest_size,
                                   size_t nbytes);
UMEM_EXTERN void umem_sync_from_safe(void * const dest_ctx, uintptr_t dest_adr, size_t dest_size,
                                     void * const src_ctx, uintptr_t src_adr, size_t src_size,
                                     size_t nbytes);

/* Default implementations of context methods (for new context types). */

UMEM_EXTERN void umemVirtual_dtor(umemVirtual * const ctx);
UMEM_EXTERN bool umemVirtual_is_accessible_from(umemVirtual * const src_ctx,
                                                umemVirtual * const dest_ctx);
UMEM_EXTERN uintptr_t umemVirtual_calloc(umemVirtual * const ctx,
                                         size_t nmemb, size_t size);
UMEM_EXTERN uintptr_t umemVirtual_aligned_alloc(umemVirtual * const ctx,
                                                size_t alignment, size_t size);
UMEM_EXTERN void umemVirtual_aligned_free(umemVirtual * const ctx, uintptr_t aligned_adr);
UMEM_EXTERN uintptr_t umemVirtual_aligned_origin(umemVirtual * const ctx, uintptr_t aligned_adr);

/* Utility functions */

static inline umemStatusType umem_get_status(void * const ctx);
static inline const char * umem_get_message(void * const ctx);
static inline bool umem_is_ok(void * const ctx);
UMEM_EXTERN void umem_set_status(void * const ctx,
                                 umemStatusType type, const char * message);
UMEM_EXTERN void umem_clear_status(void * const ctx);
UMEM_EXTERN const char* umem_get_status_name(umemStatusType type);
UMEM_EXTERN const char* umem_get_device_name_from_type(umemDeviceType type);
static inline const char* umem_get_device_name(void * const ctx);
UMEM_EXTERN bool umem_is_same_device(void * const one_ctx, void * const other_ctx);
UMEM_EXTERN void umem_copy_to_via_host(void * const src_ctx, uintptr_t src_adr,
                                       void * const dest_ctx, uintptr_t dest_adr,
                                       size_t nbytes);
UMEM_EXTERN void umem_copy_from_via_host(void * const dest_ctx, uintptr_t dest_adr,
                                         void * const src_ctx, uintptr_t src_adr,
                                         size_t nbytes);

/* locus: where a call with a NULL context records its error (the calling thread's), and
   how umem_get_status(NULL) / umem_get_message(NULL) read it. */
UMEM_EXTERN void umem_null_context(const char * call);
UMEM_EXTERN umemStatusType umem_null_context_status(void);
UMEM_EXTERN const char * umem_null_context_message(void);

/* Implementations of inline functions. Each checks for a NULL context first. */

#define UMEM_CTX_(ctx) ((umemVirtual *)(ctx))
#define UMEM_NULL_(ctx, call, ret) \
  do { if ((ctx) == NULL) { umem_null_context(call); ret; } } while (0)

static inline void umem_dtor(void * const ctx) {
  UMEM_NULL_(ctx, "umem_dtor", return);
  (*UMEM_CTX_(ctx)->vptr->dtor)(UMEM_CTX_(ctx));
}

static inline uintptr_t umem_alloc(void * const ctx, size_t nbytes) {
  UMEM_NULL_(ctx, "umem_alloc", return 0);
  return (*UMEM_CTX_(ctx)->vptr->alloc)(UMEM_CTX_(ctx), nbytes);
}

static inline uintptr_t umem_calloc(void * const ctx, size_t nmemb, size_t size) {
  UMEM_NULL_(ctx, "umem_calloc", return 0);
  return (*UMEM_CTX_(ctx)->vptr->calloc)(UMEM_CTX_(ctx), nmemb, size);
}

static inline size_t umem_fundamental_align(void * const ctx) {
  UMEM_NULL_(ctx, "umem_fundamental_align", return 1);
  switch (UMEM_CTX_(ctx)->type) {
  case umemFileDevice: return UMEM_FUNDAMENTAL_FILE_ALIGN;
  case umemCudaDevice:
  case umemCudaManagedDevice:
  case umemRMMDevice:
  case umemLocusDevice:
    return UMEM_FUNDAMENTAL_CUDA_ALIGN;
  case umemHostDevice: return UMEM_FUNDAMENTAL_HOST_ALIGN;
  default: ;
  }
  return 1;
}

static inline bool umem_is_accessible_from(void * const src_ctx, void * const dest_ctx) {
  UMEM_NULL_(src_ctx, "umem_is_accessible_from", return false);
  UMEM_NULL_(dest_ctx, "umem_is_accessible_from", return false);
  return (src_ctx == dest_ctx ? true :
          (*UMEM_CTX_(src_ctx)->vptr->is_accessible_from)(UMEM_CTX_(src_ctx), UMEM_CTX_(dest_ctx)));
}

static inline umemStatusType umem_get_status(void * const ctx) {
  if (ctx == NULL) return umem_null_context_status();
  return UMEM_CTX_(ctx)->status.type;
}

static inline const char * umem_get_message(void * const ctx) {
  if (ctx == NULL) return umem_null_context_message();
  return (UMEM_CTX_(ctx)->status.message == NULL ? "" : UMEM_CTX_(ctx)->status.message);
}

static inline bool umem_is_ok(void * const ctx) {
  return umem_get_status(ctx) == umemOK;
}

static inline const char* umem_get_device_name(void * const ctx) {
  UMEM_NULL_(ctx, "umem_get_device_name", return "NULL");
  return umem_get_device_name_from_type(UMEM_CTX_(ctx)->type);
}

static inline uintptr_t umem_aligned_alloc(void * const ctx, size_t alignment, size_t size) {
  UMEM_NULL_(ctx, "umem_aligned_alloc", return 0);
  TRY_RETURN(ctx, !umem_ispowerof2(alignment), umemValueError, return 0,
             "umem_aligned_alloc: alignment %zu must be power of 2",
             alignment);
  TRY_RETURN(ctx, size % alignment, umemValueError, return 0,
             "umem_aligned_alloc: size %zu must be multiple of alignment %zu",
             size, alignment);
  size_t fundamental_align = umem_fundamental_align(ctx);
  alignment = (alignment < fundamental_align ? fundamental_align : alignment);
  return (*UMEM_CTX_(ctx)->vptr->aligned_alloc)(UMEM_CTX_(ctx), alignment, size);
}

static inline uintptr_t umem_aligned_origin(void * const ctx, uintptr_t aligned_adr) {
  UMEM_NULL_(ctx, "umem_aligned_origin", return 0);
  return (*UMEM_CTX_(ctx)->vptr->aligned_origin)(UMEM_CTX_(ctx), aligned_adr);
}

static inline void umem_free(void * const ctx, uintptr_t adr) {
  UMEM_NULL_(ctx, "umem_free", return);
  (*UMEM_CTX_(ctx)->vptr->free)(UMEM_CTX_(ctx), adr);
}

static inline void umem_aligned_free(void * const ctx, uintptr_t aligned_adr) {
  UMEM_NULL_(ctx, "umem_aligned_free", return);
  (*UMEM_CTX_(ctx)->vptr->aligned_free)(UMEM_CTX_(ctx), aligned_adr);
}

static inline void umem_copy_to(void * const src_ctx, uintptr_t src_adr,
                                void * const dest_ctx, uintptr_t dest_adr,
                                size_t nbytes) {
  UMEM_NULL_(src_ctx, "umem_copy_to", return);
  UMEM_NULL_(dest_ctx, "umem_copy_to", return);
  (*UMEM_CTX_(src_ctx)->vptr->copy_to)(UMEM_CTX_(src_ctx), src_adr,
                                       UMEM_CTX_(dest_ctx), dest_adr, nbytes);
}

static inline void umem_copy_to_safe(void * const src_ctx, uintptr_t src_adr, size_t src_size,
                                     void * const dest_ctx, uintptr_t dest_adr, size_t dest_size,
                                     size_t nbytes) {
  UMEM_NULL_(src_ctx, "umem_copy_to_safe", return);
  UMEM_NULL_(dest_ctx, "umem_copy_to_safe", return);
  if (!(nbytes<=src_size))
    umem_set_status(src_ctx, umemIndexError, "umem_copy_to_safe: nbytes out of range of source context");
  else if (!(nbytes<=dest_size))
    umem_set_status(dest_ctx, umemIndexError, "umem_copy_to_safe: nbytes out of range of destination context");
  else
    umem_copy_to(src_ctx, src_adr, dest_ctx, dest_adr, nbytes);
}

static inline void umem_copy_from(void * const dest_ctx, uintptr_t dest_adr,
                                  void * const src_ctx, uintptr_t src_adr,
                                  size_t nbytes) {
  UMEM_NULL_(dest_ctx, "umem_copy_from", return);
  UMEM_NULL_(src_ctx, "umem_copy_from", return);
  (*UMEM_CTX_(dest_ctx)->vptr->copy_from)(UMEM_CTX_(dest_ctx), dest_adr,
                                          UMEM_CTX_(src_ctx), src_adr, nbytes);
}

static inline void umem_copy_from_safe(void * const dest_ctx, uintptr_t dest_adr, size_t dest_size,
                                       void * const src_ctx, uintptr_t src_adr, size_t src_size,
                                       size_t nbytes) {
  UMEM_NULL_(dest_ctx, "umem_copy_from_safe", return);
  UMEM_NULL_(src_ctx, "umem_copy_from_safe", return);
  if (!(nbytes<=src_size))
    umem_set_status(src_ctx, umemIndexError, "umem_copy_from_safe: nbytes out of range of source context");
  else if (!(nbytes<=dest_size))
    umem_set_status(dest_ctx, umemIndexError, "umem_copy_from_safe: nbytes out of range of destination context");
  else
    umem_copy_from(dest_ctx, dest_adr, src_ctx, src_adr, nbytes);
}

static inline void umem_set(void * const ctx, uintptr_t adr, int c, size_t nbytes) {
  UMEM_NULL_(ctx, "umem_set", return);
  (*UMEM_CTX_(ctx)->vptr->set)(UMEM_CTX_(ctx), adr, c, nbytes);
}

static inline void umem_set_safe(void * const ctx, uintptr_t adr, size_t size, int c, size_t nbytes) {
  UMEM_NULL_(ctx, "umem_set_safe", return);
  if (size < nbytes)
    umem_set_status(ctx, umemIndexError, "umem_set_safe: nbytes out of range of context");
  else
    umem_set(ctx, adr, c, nbytes);
}

#ifdef __cplusplus
}  /* extern "C" */
#include "umem.hpp"
#endif

#endif
