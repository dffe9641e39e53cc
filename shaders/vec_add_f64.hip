// vec_add in f64 for HIP (hiprtc): c = a + b.
extern "C" __global__ void vec_add_f64(const double *a, const double *b, double *c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
