/* umem's utilities (umem_utils.h), as locus provides them. Part of locus's libumem API.
 * Derived from libumem (https://github.com/xnd-project/umem), Copyright (c) 2018,
 * Plures (Xnd), BSD 3-Clause License: see LICENSE-umem. */
#ifndef UMEM_UTILS_H
#define UMEM_UTILS_H

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

/* Portability macros */

#define UMEM_FUNDAMENTAL_FILE_ALIGN 1
#define UMEM_FUNDAMENTAL_CUDA_ALIGN 256

#if defined(_WIN32) || defined(__CYGWIN__)
#define UMEM_EXPORT
#define UMEM_FUNDAMENTAL_HOST_ALIGN 8
#else
#define UMEM_EXPORT
#ifdef __cplusplus
#define UMEM_FUNDAMENTAL_HOST_ALIGN (alignof(max_align_t))
#else
#include <stdalign.h>
#define UMEM_FUNDAMENTAL_HOST_ALIGN (alignof(max_align_t))
#endif
#endif

#define UMEM_EXTERN extern UMEM_EXPORT

/* Utilities */

/* Sets the status of ME to ERROR with a printf-formatted message and runs ERRRETURN,
   when CALL is true. */
#define TRY_RETURN(ME, CALL, ERROR, ERRRETURN, FMT, ...)        \
  do {                                                          \
    if (CALL) {                                                 \
      char buf[256];                                            \
      snprintf(buf, sizeof(buf), FMT, __VA_ARGS__);             \
      umem_set_status(ME, ERROR, buf);                          \
      ERRRETURN;                                                \
    }                                                           \
  } while (0)

static inline int umem_ispowerof2(size_t x) {
  return x && !(x & (x - 1));
}

/* Prints LEN bytes at ADDR in hexadecimal and ASCII, 16 a line, after DESC. */
static inline void hexDump(const char *desc, const void *addr, int len) {
  const unsigned char *pc = (const unsigned char *)addr;
  char text[17];
  int i;
  if (desc != NULL)
    printf("%s:\n", desc);
  for (i = 0; i < len; i++) {
    if (i % 16 == 0) {
      if (i != 0)
        printf("  %s\n", text);
      printf("  %04x ", i);
    }
    printf(" %02x", pc[i]);
    text[i % 16] = (pc[i] < 0x20 || pc[i] > 0x7e) ? '.' : (char)pc[i];
    text[i % 16 + 1] = '\0';
  }
  while (i % 16 != 0) {
    printf("   ");
    i++;
  }
  printf("  %s\n", len > 0 ? text : "");
}

/* Prints LEN bytes at ADDR in hexadecimal and binary, 8 a line, after DESC. */
static inline void binDump(const char *desc, const void *addr, int len) {
  const unsigned char *pc = (const unsigned char *)addr;
  int i, j;
  if (desc != NULL)
    printf("%s:\n", desc);
  for (i = 0; i < len; i++) {
    if (i % 8 == 0)
      printf("%s  %04x ", i ? "\n" : "", i);
    printf("%02x:", pc[i]);
    for (j = 0; j < 8; j++)
      putchar('0' + ((pc[i] >> j) & 1));
    putchar(' ');
  }
  printf("\n");
}

#endif
