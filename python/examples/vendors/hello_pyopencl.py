"""Hello, OpenCL from Python: pyopencl's own objects around locus memory.

OpenCL's model: a platform lists devices; a context holds buffers (`cl_mem`) for some of
them; an in-order command queue runs copies and kernels on one device; kernels are
OpenCL C built at run time. pyopencl wraps each of those objects, and wraps locus's by
their integer handles (`from_int_ptr`), so both libraries work on the same memory and
queue. This program: one upload pyopencl's way beside locus's, `c = a + b` by an OpenCL
C kernel on locus's buffers in place, the result read both ways, and locus's routes.

    python python/examples/vendors/hello_pyopencl.py [opencl:N]
"""

import pathlib
import sys

import numpy as np
import pyopencl as cl

import locus

N = 1 << 16
VEC_ADD = pathlib.Path(__file__).resolve().parents[3] / "shaders" / "vec_add.cl"


def cl_buffer(handle):
    """The pyopencl buffer behind a locus access (a sub-buffer when locus pooled it)."""
    o = handle.opencl
    mem = cl.Buffer.from_int_ptr(o["mem"], retain=True)  # the handle owns it: retain
    return mem.get_sub_region(o["offset"], o["size"]) if o["offset"] else mem


def main():
    at = sys.argv[1] if len(sys.argv) > 1 else "opencl:0"
    if at not in locus.available():
        sys.exit(f"opencl unavailable: {at} is not among {locus.available()}")

    # 1. Memory made by locus at the device; its objects seen through pyopencl.
    a = locus.Buffer(at, N, dtype="float32")
    c = locus.Buffer(at, N, dtype="float32")
    with a.access_mut(at) as h:
        o = h.opencl
        context = cl.Context.from_int_ptr(o["context"], retain=True)
        queue = cl.CommandQueue.from_int_ptr(o["queue"], retain=True)  # locus's queue
        device = context.devices[0]
        print(f"{at}: platform {device.platform.name!r}, device {device.name!r}")

        # 2. One upload, pyopencl's way: a blocking write through the queue.
        cl.enqueue_copy(queue, cl_buffer(h), np.ones(N, dtype=np.float32))

    # ... and locus's: an array made on the host, used at the device (one move, or none
    # where the device reaches host memory).
    b = locus.Buffer.from_array(np.arange(N, dtype=np.float32))
    with b.access(at) as hb:
        print(f"b at {at}: {hb.route}")

        # 3. A kernel in OpenCL C on locus's buffers in place, on locus's queue (so locus's
        #    later reads are ordered after it: nobody waits here).
        program = cl.Program(context, VEC_ADD.read_text()).build()
        with a.access(at) as ha, c.access_mut(at) as hc:
            program.vec_add(queue, (N,), None, cl_buffer(ha), cl_buffer(hb), cl_buffer(hc),
                            np.uint32(N))

            # 4. The result, pyopencl's way: a blocking read on the same in-order queue.
            raw = np.empty(N, dtype=np.float32)
            cl.enqueue_copy(queue, raw, cl_buffer(hc))

    # ... and locus's.
    with c.access("host") as hh:
        print(f"c on the host: {hh.route}")
        through_locus = np.array(hh)
    want = np.arange(N, dtype=np.float32) + 1
    assert np.array_equal(raw, want) and np.array_equal(through_locus, want)
    print(f"c = a + b: {raw[:4]} ... (both reads agree)")


if __name__ == "__main__":
    main()
