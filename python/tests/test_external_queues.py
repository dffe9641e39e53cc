"""Another library's queue adopted by locus (`locus.Queue.from_external`, issue 41 items 2
and 4), written the way users of those libraries write code: their kernel writes a locus
buffer in place on *their own* queue and nobody waits for it; the buffer, put on the
adopted queue (HAMR's stream form), reads what the kernel wrote. And the other way:
locus's move on the adopted queue comes before the library's next command there, which
the user waits for as they always do (a blocking pyopencl copy).

Clients nobody here wrote: pyopencl (its `CommandQueue`, `Program`, `enqueue_copy`) and
dpnp/dpctl (a `dpctl.SyclQueue` of the user's, dpnp's own kernels on it). CuPy and
PyTorch streams go through the same call; they need a GPU (test_gpu_clients.py)."""

import numpy as np
import pytest

import locus

OPENCL = [l for l in locus.available() if l.startswith("opencl:")]
SYCL = [l for l in locus.available() if l.startswith("sycl:")]

SLOW_FILL = """
__kernel void slow_fill(__global uint *p, const uint n, const uint spins, __global uint *sink) {
    uint acc = 1u;
    for (uint i = 0; i < spins; i++) acc = acc * 1664525u + 1013904223u;
    sink[0] = acc;
    for (uint i = 0; i < n; i++) p[i] = i * 3u + 1u;
}
"""


def test_raw_handles_need_a_location_and_foreign_objects_are_named():
    with pytest.raises(ValueError, match="needs its location"):
        locus.Queue.from_external(12345)
    with pytest.raises(TypeError, match="expected a dpctl.SyclQueue"):
        locus.Queue.from_external(object())
    with pytest.raises(ValueError, match="host: cannot adopt a raw queue handle"):
        locus.Queue.from_external(1, location="host")
    assert locus.Queue().native("host") is None


@pytest.mark.parametrize("cl_location", OPENCL)
@pytest.mark.filterwarnings("ignore:Non-empty compiler output")
def test_a_pyopencl_queue_adopted_orders_both_ways(cl_location):
    cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")
    ours = locus.Queue().to_external(cl_location)  # locus's own queue, as pyopencl's
    assert ours.int_ptr == locus.Queue().native(cl_location)
    q = cl.CommandQueue(ours.context)  # the user's own queue, in locus's context
    lq = locus.Queue.from_external(q)
    assert lq.native(cl_location) == q.int_ptr
    assert lq.to_external(cl_location) is q
    n = 1 << 16
    b = locus.Buffer(cl_location, n, dtype="uint32", queue=lq)
    assert b.queue == lq
    program = cl.Program(ours.context, SLOW_FILL).build()
    sink = cl.Buffer(ours.context, cl.mem_flags.READ_WRITE, 4)
    with b.access_mut(cl_location) as h:
        o = h.opencl
        mem = cl.Buffer.from_int_ptr(o["mem"], retain=True)
        if o["offset"]:
            mem = mem.get_sub_region(o["offset"], o["size"])
        program.slow_fill(q, (1,), None, mem, np.uint32(n), np.uint32(20_000_000), sink)
        # No q.finish(): the buffer is on the adopted queue.
    np.testing.assert_array_equal(b.to_numpy(), np.arange(n, dtype=np.uint32) * 3 + 1)

    # locus's move (host -> OpenCL) on the adopted queue, then the user's blocking copy
    # out on their queue.
    want = np.arange(n, dtype=np.uint32) ^ 0x5A5A
    h_b = locus.Buffer.from_array(want)
    h_b.set_queue(lq)
    with h_b.access(cl_location) as h:
        o = h.opencl
        mem = cl.Buffer.from_int_ptr(o["mem"], retain=True)
        if o["offset"]:
            mem = mem.get_sub_region(o["offset"], o["size"])
        out = np.empty(n, dtype=np.uint32)
        cl.enqueue_copy(q, out, mem)  # blocking, on the user's queue
    np.testing.assert_array_equal(out, want)
    h_b.synchronize()
    b.synchronize()


@pytest.mark.parametrize("cl_location", OPENCL)
def test_a_pyopencl_queue_of_another_device_is_refused(cl_location):
    cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")
    others = [l for l in OPENCL if l != cl_location]
    if not others:
        pytest.skip("one OpenCL location: no other device to refuse")
    theirs = locus.Queue().to_external(others[0])
    with pytest.raises(locus.LocusError, match="cannot adopt OpenCL command queue"):
        locus.Queue.from_external(theirs, location=cl_location)


@pytest.mark.parametrize("sycl_location", SYCL)
def test_dpnp_on_an_adopted_dpctl_queue_writes_before_locus_reads(sycl_location):
    dpctl = pytest.importorskip("dpctl", reason="dpctl is not installed")
    dpnp = pytest.importorskip("dpnp", reason="dpnp is not installed")
    ours = locus.Queue().to_external(sycl_location)
    q = dpctl.SyclQueue(ours.sycl_context, ours.sycl_device, property="in_order")
    lq = locus.Queue.from_external(q)
    n = 1 << 22
    want = np.arange(n, dtype=np.float32) * 3 + 1
    stale = 0
    for _ in range(20):
        b = locus.Buffer(sycl_location, n, dtype="float32", queue=lq)
        with b.access_mut(sycl_location) as h:
            x = dpnp.asarray(h).to_device(q)  # a view of locus's memory on the user's queue
            assert x.sycl_queue == q
            x[:] = dpnp.arange(n, dtype=dpnp.float32, sycl_queue=q) * 3 + 1
            del x
        # No q.wait(): the buffer is on the adopted queue.
        stale += not np.array_equal(b.to_numpy(), want)
    assert stale == 0, f"{sycl_location}: {stale} of 20 reads were stale"


@pytest.mark.parametrize("sycl_location", SYCL)
def test_a_dpctl_queue_of_another_context_is_refused_there_and_adopted_with_its_context(sycl_location):
    dpctl = pytest.importorskip("dpctl", reason="dpctl is not installed")
    ours = locus.Queue().to_external(sycl_location)
    # A context of its own (a device list; dpctl caches the one-device context).
    other = dpctl.SyclQueue(dpctl.SyclContext([ours.sycl_device]), ours.sycl_device)
    assert other.sycl_context != ours.sycl_context
    # At locus's own location it cannot be: locus's USM is not of its context.
    with pytest.raises(locus.LocusError, match="another SYCL context"):
        locus.Queue.from_external(other, location=sycl_location)
    # Without a location, its context becomes a location of its own.
    adopted = locus.Queue.from_external(other)
    at = locus.adopt_context(other.sycl_context, other.sycl_device)
    assert at != sycl_location and adopted.native(at) is not None


@pytest.mark.parametrize("cl_location", OPENCL)
def test_an_opencl_copy_hands_out_its_cl_event(cl_location):
    src = locus.Memory(cl_location, 4096)
    dst = locus.Memory(cl_location, 4096)
    event = src.copy_to_async(dst, 4096)
    native = event.native()
    assert native is not None and native["kind"] == "opencl" and native["handle"] != 0
    event.wait()
    (gate, trigger) = locus.Event.user()
    behind = src.copy_to_async(locus.Memory("host", 4096), 4096, after=[gate])
    trigger.complete()
    behind.wait()
    assert behind.native() is None, "a worker thread's copy has no runtime event"


@pytest.mark.parametrize("cl_location", OPENCL)
@pytest.mark.filterwarnings("ignore:Non-empty compiler output")
def test_a_marker_of_an_adopted_queue_ends_after_the_library_s_work(cl_location):
    """`Queue.marker()` of an adopted pyopencl queue completes only after the kernel the
    user queued there (no wait of theirs), and `release_after` takes it: the memory goes
    back to its pool after that kernel, as a stream-ordered free does."""
    cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")
    ours = locus.Queue().to_external(cl_location)
    q = cl.CommandQueue(ours.context)
    lq = locus.Queue.from_external(q)
    program = cl.Program(ours.context, SLOW_FILL).build()
    sink = cl.Buffer(ours.context, cl.mem_flags.READ_WRITE, 4)
    out = cl.Buffer(ours.context, cl.mem_flags.READ_WRITE, 4 * 16)
    kernel = program.slow_fill(q, (1,), None, out, np.uint32(16), np.uint32(50_000_000), sink)
    marker = lq.marker()
    pool = locus.mr.PoolMemoryResource(locus.mr.UpstreamMemoryResource(cl_location))
    m = locus.Memory.from_resource(pool, 4096, queue=lq)
    m.release_after(lq, marker)
    marker.wait()
    assert kernel.command_execution_status == cl.command_execution_status.COMPLETE
    got = np.empty(16, dtype=np.uint32)
    cl.enqueue_copy(q, got, out, is_blocking=False).wait()
    np.testing.assert_array_equal(got, np.arange(16, dtype=np.uint32) * 3 + 1)
    assert locus.Queue().marker().is_complete()
