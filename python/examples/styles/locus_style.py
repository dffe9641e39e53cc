"""The same program in locus style (docs/python.md): a[i] = a[i] * 3 + i on 1M floats made at opencl:0."""

import locus

AXPI = """
__kernel void axpi(__global float *a, const float s, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) a[i] = a[i] * s + (float)i;
}"""
kernel = (locus.Kernel("axpi").buffer("a", "float32", "inout")
          .scalar("s", "float32").scalar("n", "uint32").opencl_c(AXPI, "axpi"))
b = locus.Buffer("opencl:0", 1_000_000, dtype="float32", fill=2.0)
report = locus.Codelet(kernel, ["opencl:0"]).call([b, 3.0, b.size], launch=b.size)
print(b.to_numpy()[:4], float(b.to_numpy().sum()), report["target"])
