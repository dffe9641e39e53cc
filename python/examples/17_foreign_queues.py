"""17: another library's queue adopted by locus (`locus.Queue.from_external`): the
library's kernel writes a locus buffer in place on *its own* queue, nobody waits, and the
buffer (put on that queue) reads what the kernel wrote. pyopencl at OpenCL locations,
dpnp at SYCL ones, CuPy or PyTorch at CUDA ones (on a GPU).

    python python/examples/17_foreign_queues.py opencl:0
"""

import sys

import numpy as np

import locus

N = 1 << 16
WANT = np.arange(N, dtype=np.float32) * 2 + 1


def with_pyopencl(at):
    import pyopencl as cl

    ours = locus.Queue().to_external(at)  # locus's queue, as pyopencl's: its context
    queue = cl.CommandQueue(ours.context)  # your own queue
    b = locus.Buffer(at, N, dtype="float32", fill=0.0, queue=locus.Queue.from_external(queue))
    program = cl.Program(ours.context, """
        __kernel void fill(__global float *a) { size_t i = get_global_id(0); a[i] = 2.0f * i + 1.0f; }
    """).build()
    with b.access_mut(at) as h:
        o = h.opencl
        mem = cl.Buffer.from_int_ptr(o["mem"], retain=True)
        if o["offset"]:
            mem = mem.get_sub_region(o["offset"], o["size"])
        program.fill(queue, (N,), None, mem)  # no queue.finish()
    return b


def with_dpnp(at):
    import dpctl
    import dpnp

    ours = locus.Queue().to_external(at)
    queue = dpctl.SyclQueue(ours.sycl_context, ours.sycl_device, property="in_order")  # yours
    b = locus.Buffer(at, N, dtype="float32", queue=locus.Queue.from_external(queue))
    with b.access_mut(at) as h:
        x = dpnp.asarray(h).to_device(queue)  # locus's memory, viewed on your queue
        x[:] = dpnp.arange(N, dtype=dpnp.float32, sycl_queue=queue) * 2 + 1  # no queue.wait()
    return b


def with_cupy(at):
    import cupy

    stream = cupy.cuda.Stream(non_blocking=True)  # yours
    b = locus.Buffer(at, N, dtype="float32", queue=locus.Queue.from_external(stream))
    with b.access_mut(at) as h, stream:
        x = cupy.asarray(h)
        x[:] = cupy.arange(N, dtype=cupy.float32) * 2 + 1  # on your stream, no synchronize
    return b


def main():
    at = sys.argv[1] if len(sys.argv) > 1 else "opencl:0"
    if at not in locus.available():
        sys.exit(f"{at} is not available here: {locus.available()}")
    make = {"opencl": with_pyopencl, "sycl": with_dpnp, "cuda": with_cupy}.get(at.split(":")[0])
    if make is None:
        sys.exit(f"{at}: this example needs OpenCL (pyopencl), SYCL (dpnp) or CUDA (CuPy)")
    b = make(at)
    got = b.to_numpy()  # after your kernel: the buffer is on your queue
    assert np.array_equal(got, WANT), f"{at}: read before the kernel finished"
    print(f"{at}: your kernel on {b.queue!r} wrote {N} values in place; locus read them after it: "
          f"a[{N - 1}] = {got[-1]}")
    b.synchronize()


if __name__ == "__main__":
    main()
