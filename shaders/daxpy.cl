// daxpy (saxpy in f64) for OpenCL (and SYCL): y = a * x + y. Needs cl_khr_fp64.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void daxpy(const double a, __global const double *x, __global double *y,
                    const uint n) {
    size_t i = get_global_id(0);
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
