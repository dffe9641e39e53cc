/* HAMR's configuration (hamr_config.h), as locus provides it. Part of locus's HAMR API
 * (hamr_buffer.h): HAMR's names over locus's C library. See LICENSE-hamr.
 *
 * HAMR chose its technologies when it was built; locus finds its runtimes when the
 * program runs, so every allocator is there and one whose technology this machine lacks
 * reports it when a buffer is made with it. What stays a compile-time choice is the
 * program's own: HAMR_ENABLE_OPENMP follows the compiler's -fopenmp; define
 * HAMR_ENABLE_CUDA / HAMR_ENABLE_HIP where the toolkit is, to take cudaStream_t /
 * hipStream_t from it. */
#ifndef hamr_config_h
#define hamr_config_h

#define HAMR_EXPORT __attribute__ ((visibility ("default")))
#define HAMR_PRIVATE __attribute__ ((visibility ("hidden")))

/* HAMR over locus (not HAMR's own library). */
#define HAMR_LOCUS 1

#if defined(_OPENMP) && !defined(HAMR_ENABLE_OPENMP)
#define HAMR_ENABLE_OPENMP
#endif

/* The looping construct HAMR's OpenMP loops use after `#pragma omp target teams`
   (HAMR's build: "loop" with NVIDIA's compiler, else this). */
#if !defined(HAMR_OPENMP_LOOP)
#if defined(__NVCOMPILER)
#define HAMR_OPENMP_LOOP loop
#else
#define HAMR_OPENMP_LOOP distribute parallel for
#endif
#endif

#endif
