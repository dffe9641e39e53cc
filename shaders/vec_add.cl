// vec_add for OpenCL (and SYCL through its OpenCL-C kernel bundles): c = a + b.
__kernel void vec_add(__global const float *a, __global const float *b,
                      __global float *c, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
