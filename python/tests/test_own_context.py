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
    with pytest.raises(TypeError, match="expected a pyopencl.Buffer, or an array"):
        locus.Memory.wrap(object())


def test_memory_wraps_arrays_in_place():
    # numpy's memory, wrapped: locus's writes are numpy's data, and it copies anywhere.
    a = np.arange(64, dtype=np.float32)
    m = locus.Memory.wrap(a)
    assert (m.location, m.nbytes) == ("host", a.nbytes)
    m.write(np.full(64, 7.0, dtype=np.float32))
    assert (a == 7.0).all(), "the wrapped memory is numpy's own"
    for to in locus.available():
        there = locus.Memory(to, a.nbytes)
        m.copy_to(there, a.nbytes)
        assert (np.frombuffer(there.read(), np.float32) == 7.0).all(), to
    with pytest.raises(BufferError):
        locus.Memory.wrap(np.arange(64, dtype=np.float32)[::2])  # not in place: refused


SYCL = [l for l in locus.available() if l.startswith("sycl:")]


@pytest.mark.parametrize("sycl_location", SYCL)
def test_a_dpnp_program_s_own_sycl_context_joins_locus(sycl_location):
    # dpnp computing on a queue of a context of the program's own (not the platform's
    # default one locus and dpctl share), nobody waiting; locus adopts the queue (its
    # context becomes a location), takes the array in place, and reads it
    # after dpnp's work.
    dpctl = pytest.importorskip("dpctl", reason="dpctl is not installed")
    dpnp = pytest.importorskip("dpnp", reason="dpnp is not installed")
    device = locus.Queue().to_external(sycl_location).sycl_device
    ctx = dpctl.SyclContext([device])  # a context of the program's own (the list form makes a new one)
    q = dpctl.SyclQueue(ctx, device, property="in_order")
    lq = locus.Queue.from_external(q)
    at = locus.adopt_context(ctx, device)
    assert at != sycl_location and at in locus.available(), at
    n = 1 << 20
    want = np.arange(n, dtype=np.float32) * 3 + 1
    x = dpnp.arange(n, dtype=dpnp.float32, sycl_queue=q) * 3 + 1  # not waited for
    # dpnp exports DLPack only for the platform's default context: its SYCL USM array
    # interface names the memory of any context.
    b = locus.Buffer.from_array(x)
    assert b.location == at, b.location
    b.set_queue(lq)
    np.testing.assert_array_equal(b.to_numpy(), want)
    # locus copies it to every location, and writes back into it.
    for to in locus.available():
        np.testing.assert_array_equal(b.copy(to).to_numpy(), want, err_msg=f"{at} -> {to}")
    b.fill(2.5)
    b.synchronize()
    assert (dpnp.asnumpy(x) == 2.5).all()
    # The same array as untyped memory, in place at the adopted location.
    m = locus.Memory.wrap(x)
    assert (m.location, m.nbytes) == (at, 4 * n)
    assert (np.frombuffer(m.read(), np.float32) == 2.5).all()


def test_a_foreign_sycl_pointer_needs_its_context_adopted():
    dpctl = pytest.importorskip("dpctl", reason="dpctl is not installed")
    dpnp = pytest.importorskip("dpnp", reason="dpnp is not installed")
    if not SYCL:
        pytest.skip("SKIPPED: no SYCL location on this machine")
    device = locus.Queue().to_external(SYCL[0]).sycl_device
    q = dpctl.SyclQueue(dpctl.SyclContext([device]), device)  # never adopted
    x = dpnp.ones(16, dtype=dpnp.float32, sycl_queue=q)
    with pytest.raises(BufferError, match="adopt its context first"):
        locus.Buffer.from_array(x)
