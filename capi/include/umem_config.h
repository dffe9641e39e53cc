/* umem's configuration, as locus provides it. Part of locus's libumem API (umem.h).
 *
 * umem chose its contexts when it was built (ENABLE_CUDA, ...); locus finds its runtimes
 * when the program runs, so every context is declared here and a context whose
 * technology this machine lacks reports it in its status after construction
 * (umem_is_ok(&ctx) is false, umem_get_message(&ctx) says why). */
#ifndef UMEM_CONFIG_H
#define UMEM_CONFIG_H

#define UMEM_VERSION_MAJOR 0
#define UMEM_VERSION_MINOR 1
#define UMEM_VERSION_MICRO 0

#define HAVE_FILE_CONTEXT 1
#define HAVE_CUDA_CONTEXT 1
#define HAVE_CUDA_HOST_CONTEXT 1
#define HAVE_CUDA_MANAGED_CONTEXT 1
/* locus's own: umemLocus, memory at any locus location by name. */
#define HAVE_LOCUS_CONTEXT 1

#endif
