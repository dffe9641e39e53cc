// BabelStream's five kernels in HIP (compiled at run time with hiprtc, whose built-in
// declarations need no #include). `T` is the element type: locus puts `#define T float`
// or `#define T double` in front of this file.
// See stream.cl for what each kernel does; the HIP form differs only in how a thread
// finds its element: blockIdx.x * blockDim.x + threadIdx.x.
#ifndef T
#define T float
#endif

extern "C" __global__ void stream_copy(const T *a, T *c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i];
    }
}

extern "C" __global__ void stream_mul(T scalar, const T *c, T *b, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        b[i] = scalar * c[i];
    }
}

extern "C" __global__ void stream_add(const T *a, const T *b, T *c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

extern "C" __global__ void stream_triad(T scalar, const T *b, const T *c, T *a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = b[i] + scalar * c[i];
    }
}

// A grid-stride loop per thread; the host adds the `parts` partial sums.
extern "C" __global__ void stream_dot(const T *a, const T *b, T *partial, unsigned n,
                                      unsigned parts) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < parts) {
        T sum = 0;
        for (unsigned long long j = i; j < n; j += parts) {
            sum += a[j] * b[j];
        }
        partial[i] = sum;
    }
}
