// daxpy for HIP (hiprtc): y = a * x + y in f64.
extern "C" __global__ void daxpy(double a, const double *x, double *y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
