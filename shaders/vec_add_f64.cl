// vec_add in f64 for OpenCL (and SYCL): c = a + b. Needs cl_khr_fp64 (locus checks the
// device for it before building).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void vec_add_f64(__global const double *a, __global const double *b,
                          __global double *c, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
