"""An application's own OpenCL context joining locus (issue 64, items 1 and 2), written as
a pyopencl program writes it: its own `cl.Context`, `CommandQueue`, `Buffer` and kernel;
the kernel fills the buffer and nobody waits. locus adopts the queue (and on the way its
context, a location of its own) and wraps the buffer in place, then copies it everywhere
after the kernel; locus writes into it and pyopencl's own blocking copy sees the data."""

import numpy as np
import pytest

import locus

cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed (pip install pyopencl)")

OPENCL = [l for l in locus.available() if l.startswith("opencl:")]
pytestmark = pytest.mark.filterwarnings("ignore:Non-empty compiler output")

FILL = """
__kernel void fill(__global uint *p, const uint n, const uint spins, __global uint *sink) {
    uint acc = 1u;
    for (uint i = 0; i < spins; i++) acc = acc * 1664525u + 1013904223u;
    sink[0] = acc;
    for (uint i = 0; i < n; i++) p[i] = i * 7u + 3u;
}
"""


def own_context(location):
    """A pyopencl context of the application's own on the device of `location`."""
    ours = locus.Queue().to_external(location)  # locus's queue: only to find the device
    return cl.Context(devices=[ours.device])


@pytest.mark.parametrize("cl_location", OPENCL)
def test_a_pyopencl_program_s_own_context_queue_and_buffer_join_locus(cl_location):
    n = 1 << 16
    ctx = own_context(cl_location)
    q = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    sink = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4)
    program = cl.Program(ctx, FILL).build()

    lq = locus.Queue.from_external(q)  # the context is adopted on the way
    at = locus.adopt_context(ctx)
    assert at != cl_location and at in locus.available(), at
    assert locus.adopt_context(ctx) == at, "a context is adopted once"
    m = locus.Memory.wrap(buf)
    assert (m.location, m.nbytes) == (at, 4 * n)

    program.fill(q, (1,), None, buf, np.uint32(n), np.uint32(5_000_000), sink)
    # No q.finish(): locus's copies go on the adopted queue, after the kernel.
    want = np.arange(n, dtype=np.uint32) * 7 + 3
    for to in locus.available():
        there = locus.Memory(to, 4 * n)
        m.copy_to_async(there, 4 * n, queue=lq).wait()
        got = np.frombuffer(there.read(), dtype=np.uint32)
        np.testing.assert_array_equal(got, want, err_msg=f"{at} -> {to}")

    # locus writes the application's buffer from the host; pyopencl's blocking read sees it.
    fresh = np.arange(n, dtype=np.uint32) ^ 0x1234
    m.write(fresh)
    out = np.empty(n, dtype=np.uint32)
    cl.enqueue_copy(q, out, buf)
    np.testing.assert_array_equal(out, fresh)

    # The application lets go of its buffer: locus's reference keeps it.
    q.finish()
    del buf
    np.testing.assert_array_equal(np.frombuffer(m.read(), dtype=np.uint32), fresh)


def test_wrong_objects_are_named():
    with pytest.raises(TypeError, match="expected a pyopencl.Context"):
        locus.adopt_context(object())
    with pytest.raises(TypeError, match="expected a pyopencl.Buffer"):
        locus.Memory.wrap(np.zeros(4))
