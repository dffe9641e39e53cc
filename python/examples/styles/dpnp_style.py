"""The same program in dpnp style (docs/python.md): a[i] = a[i] * 3 + i on 1M floats made at opencl:0."""

import dpnp
import locus

# Made at an OpenCL device; dpnp works on SYCL USM, so the write access is declared at
# sycl:0 and locus moves the data there (the buffer then lives at sycl:0).
b = locus.Buffer("opencl:0", 1_000_000, dtype="float32", fill=2.0)
with b.access_mut("sycl:0") as h:        # the data at the SYCL device
    x = dpnp.from_dlpack(h)               # DLPack's oneAPI device: dpnp views it, no copy
    x *= 3.0                              # dpnp's own kernels, on locus's memory
    x += dpnp.arange(x.size, dtype=dpnp.float32, sycl_queue=x.sycl_queue)
    x.sycl_queue.wait()                   # dpnp's queue is its own: finish before the access ends
    del x
print(b.to_numpy()[:4], float(b.to_numpy().sum()))
