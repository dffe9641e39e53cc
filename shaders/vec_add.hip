// vec_add for HIP (compiled at run time with hiprtc): c = a + b.
extern "C" __global__ void vec_add(const float *a, const float *b, float *c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
