"""The same program in pyopencl style (docs/python.md): a[i] = a[i] * 3 + i on 1M floats made at opencl:0."""

import numpy as np
import pyopencl as cl
import locus

b = locus.Buffer("opencl:0", 1_000_000, dtype="float32", fill=2.0)
with b.access_mut("opencl:0") as h:      # the data at the device, nothing copied
    o = h.opencl                          # cl_mem, offset, context, queue as integers
    ctx = cl.Context.from_int_ptr(o["context"], retain=True)
    queue = cl.CommandQueue.from_int_ptr(o["queue"], retain=True)
    mem = cl.Buffer.from_int_ptr(o["mem"], retain=True)
    if o["offset"]:
        mem = mem.get_sub_region(o["offset"], o["size"])
    prg = cl.Program(ctx, """
        __kernel void axpi(__global float *a, const float s) {
            size_t i = get_global_id(0);
            a[i] = a[i] * s + (float)i;
        }""").build()
    prg.axpi(queue, (b.size,), None, mem, np.float32(3.0))
    queue.finish()
print(b.to_numpy()[:4], float(b.to_numpy().sum()))
