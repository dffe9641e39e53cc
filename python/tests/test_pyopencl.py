"""pyopencl, a client nobody here wrote, runs its own kernel on a locus buffer in place on
every OpenCL location: the handle's `opencl` objects wrapped with `from_int_ptr`, the
kernel enqueued on locus's queue, the data checked element by element, and no copy (the
wrapped `cl_mem` is the buffer's own)."""

import numpy as np
import pytest

import locus
from locus import mr

cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed (pip install pyopencl)")

OPENCL = [l for l in locus.available() if l.startswith("opencl:")]

# Intel's compiler reports its vectorisation: not a problem.
pytestmark = pytest.mark.filterwarnings("ignore:Non-empty compiler output")

SCALE = """
__kernel void scale(__global float *a, const float factor, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) a[i] = a[i] * factor + (float)i;
}
"""


def wrap(h):
    """pyopencl's objects for a locus handle (retained: locus owns them)."""
    o = h.opencl
    context = cl.Context.from_int_ptr(o["context"], retain=True)
    queue = cl.CommandQueue.from_int_ptr(o["queue"], retain=True)
    mem = cl.Buffer.from_int_ptr(o["mem"], retain=True)
    assert mem.int_ptr == o["mem"]  # the buffer's own cl_mem: nothing was copied
    if o["offset"]:
        mem = mem.get_sub_region(o["offset"], o["size"])
    return context, queue, mem


def scale_in_place(b, location, factor):
    with b.access_mut(location) as h:
        assert h.in_place and h.memory_location == location
        context, queue, mem = wrap(h)
        program = cl.Program(context, SCALE).build()
        program.scale(queue, (b.size,), None, mem, np.float32(factor), np.uint32(b.size))
        # No queue.finish(): a user's kernel on locus's queue comes before locus's next
        # use of the buffer (the queue is in order).


@pytest.mark.parametrize("cl_location", OPENCL)
def test_a_pyopencl_kernel_scales_a_locus_buffer_in_place(cl_location):
    location = cl_location
    n = 1000
    b = locus.Buffer(location, n, dtype="float32", fill=2.0)
    scale_in_place(b, location, 3.0)
    expected = np.full(n, 6.0, dtype=np.float32) + np.arange(n, dtype=np.float32)
    assert np.array_equal(b.to_numpy(), expected)
    # The other way: locus's data written on the host, read by pyopencl on the device.
    d = locus.Buffer(location, n, dtype="float32")
    with d.access_mut("host") as h:
        np.asarray(h)[:] = np.arange(n, dtype=np.float32)
    with d.access(location) as h:
        context, queue, mem = wrap(h)
        out = np.empty(n, dtype=np.float32)
        cl.enqueue_copy(queue, out, mem)
        queue.finish()
    assert np.array_equal(out, np.arange(n, dtype=np.float32))


@pytest.mark.parametrize("cl_location", OPENCL)
def test_a_pooled_buffer_is_a_sub_buffer_for_pyopencl(cl_location):
    location = cl_location
    pool = mr.PoolMemoryResource(mr.UpstreamMemoryResource(location), initial_pool_size="1MiB")
    previous = mr.set_per_device_resource(location, pool)
    try:
        first = locus.Buffer(location, 300, dtype="float32", fill=1.0)
        b = locus.Buffer(location, 500, dtype="float32", fill=1.0)  # not at offset 0
        with b.access(location) as h:
            assert h.opencl["offset"] > 0 and h.opencl["size"] == 2000
        scale_in_place(b, location, 5.0)
        assert np.array_equal(b.to_numpy(), 5.0 + np.arange(500, dtype=np.float32))
        assert np.array_equal(first.to_numpy(), np.ones(300, dtype=np.float32))  # untouched
        del first, b
    finally:
        mr.set_per_device_resource(location, previous)


def test_only_opencl_memory_has_opencl_objects():
    b = locus.Buffer("host", 10, dtype="float32")
    with b.access("host") as h:
        with pytest.raises(AttributeError, match="not OpenCL memory"):
            h.opencl


@pytest.mark.parametrize("cl_location", OPENCL)
def test_a_pyopencl_kernel_on_locus_queue_lands_before_locus_reads(cl_location):
    # As a pyopencl user writes it: the kernel enqueued through a write handle, not
    # finished, the handle closed, then a read by locus. 1 Mi floats, 20 runs.
    n = 1 << 20
    stale = 0
    for _ in range(20):
        b = locus.Buffer(cl_location, n, dtype="float32", fill=1.0)
        with b.access_mut(cl_location) as h:
            context, queue, mem = wrap(h)
            program = cl.Program(context, SCALE).build()
            program.scale(queue, (n,), None, mem, np.float32(3.0), np.uint32(n))
        expected_head = np.float32(3.0) + np.arange(4, dtype=np.float32)
        got = b.to_numpy()
        if not (np.array_equal(got[:4], expected_head) and got[-1] == np.float32(3.0) + np.float32(n - 1)):
            stale += 1
    assert stale == 0, f"{stale} of 20 reads were stale"
