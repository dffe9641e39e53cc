// BabelStream's five kernels in OpenCL C (used for OpenCL and, through kernel bundles,
// SYCL). `T` is the element type: locus puts `#define T float` or `#define T double`
// (with cl_khr_fp64 enabled) in front of this file, one program per type.
//
//   copy:  c = a              2 arrays touched per element
//   mul:   b = scalar * c     2
//   add:   c = a + b          3
//   triad: a = b + scalar * c 3
//   dot:   sum(a * b)         2 (partial sums here, finished on the host)
//
// One work item per element, consecutive items on consecutive elements (what lets a
// GPU coalesce the loads into whole cache lines); `n` bounds the launch, which the
// runtime may round up.
#ifndef T
#define T float
#endif

__kernel void stream_copy(__global const T *a, __global T *c, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) {
        c[i] = a[i];
    }
}

__kernel void stream_mul(const T scalar, __global const T *c, __global T *b, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) {
        b[i] = scalar * c[i];
    }
}

__kernel void stream_add(__global const T *a, __global const T *b, __global T *c,
                         const uint n) {
    size_t i = get_global_id(0);
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

__kernel void stream_triad(const T scalar, __global const T *b, __global const T *c,
                           __global T *a, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) {
        a[i] = b[i] + scalar * c[i];
    }
}

// Each of the `parts` work items sums a[j] * b[j] for j = its index, + parts, + 2 parts,
// ... (a grid-stride loop: at each step neighbouring items read neighbouring elements),
// and writes its partial sum. The host adds the `parts` partial sums.
__kernel void stream_dot(__global const T *a, __global const T *b, __global T *partial,
                         const uint n, const uint parts) {
    size_t i = get_global_id(0);
    if (i < parts) {
        T sum = 0;
        for (size_t j = i; j < n; j += parts) {
            sum += a[j] * b[j];
        }
        partial[i] = sum;
    }
}
