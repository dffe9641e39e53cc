"""Kernels from Python: the shipped kernels and the user's own sources, called through a
codelet on locus buffers at every location, checked element by element."""

import numpy as np
import pytest

import locus

SCALE_CL = """
__kernel void scale(__global float *x, const float s, const uint n) {
    size_t i = get_global_id(0);
    if (i < n) x[i] = x[i] * s;
}
"""
SCALE_WGSL = """
struct Params { s: f32, n: u32 }
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;
@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let i = id.x + id.y * g.x * 64u;
    if (i < params.n) { x[i] = x[i] * params.s; }
}
"""
SCALE_OMP = """
#include <stddef.h>
int locus_omp_k_scale(void **args, size_t gx, size_t gy, int dev) {
    float *x = (float *)args[0];
    float s = *(const float *)args[1];
    size_t n = *(const unsigned *)args[2];
    (void)gy;
    if (gx < n) n = gx;
    #pragma omp target teams distribute parallel for device(dev) is_device_ptr(x)
    for (size_t i = 0; i < n; ++i) x[i] = x[i] * s;
    return 0;
}
"""

SCALE_CU = """
extern "C" __global__ void scale(float *x, float s, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s;
}
"""
SCALE_HIP = """
#include <hip/hip_runtime.h>
extern "C" __global__ void scale(float *x, float s, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s;
}
"""


def scale_kernel():
    return (
        locus.Kernel("scale")
        .buffer("x", "float32", "inout")
        .scalar("s", "float32")
        .scalar("n", "uint32")
        .opencl_c(SCALE_CL, "scale")
        .wgsl(SCALE_WGSL, "scale")
        .openmp_c(SCALE_OMP, "scale")
        .cuda(SCALE_CU, "scale")
        .hip(SCALE_HIP, "scale")
    )


def test_shipped_saxpy_at_every_location(location):
    n = 10_000
    xs = np.arange(n, dtype=np.float32) % 17
    x = locus.Buffer.from_array(xs)
    y = locus.Buffer(location, n, dtype="float32", fill=1.0)
    saxpy = locus.Codelet(locus.kernels.saxpy(), [location])
    assert saxpy.target == location
    report = saxpy.call([2.5, x, y, n], launch=n)
    assert report["target"] == location
    assert report["fell_back"] == []
    np.testing.assert_allclose(y.to_numpy(), 2.5 * xs + 1.0, rtol=1e-6)


def test_shipped_jacobi_and_sgemm(location):
    nx, ny = 33, 20
    grid = np.zeros((ny, nx), dtype=np.float32)
    grid[:, 0] = 100.0
    src = locus.Buffer.from_array(grid.ravel())
    dst = locus.Buffer(location, nx * ny, dtype="float32")
    locus.Codelet(locus.kernels.jacobi(), [location]).call([src, dst, nx, ny], launch=(nx, ny))
    want = grid.copy()
    want[1:-1, 1:-1] = 0.25 * (grid[1:-1, :-2] + grid[1:-1, 2:] + grid[:-2, 1:-1] + grid[2:, 1:-1])
    np.testing.assert_allclose(dst.to_numpy().reshape(ny, nx), want, rtol=1e-6)
    m, n, k = 7, 5, 3
    a = np.arange(m * k, dtype=np.float32).reshape(m, k) % 4
    b = np.arange(k * n, dtype=np.float32).reshape(k, n) % 3
    c = np.ones((m, n), dtype=np.float32)
    cb = locus.Buffer.from_array(c.ravel()).copy(location)
    locus.Codelet(locus.kernels.sgemm(), [location]).call(
        [m, n, k, 2.0, locus.Buffer.from_array(a.ravel()), locus.Buffer.from_array(b.ravel()), 0.5, cb],
        launch=(n, m),
    )
    np.testing.assert_allclose(cb.to_numpy().reshape(m, n), 2.0 * a @ b + 0.5 * c, rtol=1e-5)


def test_a_user_kernel_from_source(location):
    n = 1000
    x = locus.Buffer.from_array(np.arange(n, dtype=np.float32))
    codelet = locus.Codelet(scale_kernel(), [location])
    if location == "host":
        # A kernel written in Python's neighbours' languages has no host (Rust) source.
        with pytest.raises(ValueError, match="no host"):
            codelet.call([x, 3.0, n], launch=n)
        return
    report = codelet.call([x, 3.0, n], launch=n)
    assert report["target"] == location
    np.testing.assert_array_equal(x.to_numpy(), np.arange(n, dtype=np.float32) * 3.0)
    # Again: the data is at the target already; nothing moves.
    report = codelet.call([x, 2.0, n], launch=n)
    assert report["bytes_moved"] == 0
    np.testing.assert_array_equal(x.to_numpy(), np.arange(n, dtype=np.float32) * 6.0)


def test_cond_keeps_a_call_on_the_host(location):
    n = 300
    x = locus.Buffer.from_array(np.ones(n, dtype=np.float32))
    y = locus.Buffer(location, n, dtype="float32", fill=2.0)
    saxpy = locus.Codelet(locus.kernels.saxpy(), [location, "host"])
    for step in range(4):
        offload = step % 2 == 0
        report = saxpy.call([1.0, x, y, n], launch=n, cond=offload)
        assert report["target"] == (location if offload else "host")
    np.testing.assert_array_equal(y.to_numpy(), np.full(n, 6.0, dtype=np.float32))


def test_kernel_misuse_is_a_clear_error():
    n = 8
    saxpy = locus.Codelet(locus.kernels.saxpy(), ["host"])
    x = locus.Buffer("host", n, dtype="float32")
    y = locus.Buffer("host", n, dtype="float32")
    with pytest.raises(ValueError, match="takes 4 arguments"):
        saxpy.call([1.0, x, y], launch=n)
    with pytest.raises(TypeError, match="must hold float32, this buffer holds int32"):
        saxpy.call([1.0, locus.Buffer("host", n, dtype="int32"), y, n], launch=n)
    with pytest.raises(TypeError, match="must be a locus.Buffer"):
        saxpy.call([1.0, np.ones(n, dtype=np.float32), y, n], launch=n)
    with pytest.raises(ValueError, match="already passed"):
        saxpy.call([1.0, y, y, n], launch=n)
    with pytest.raises(ValueError, match="larger than buffer"):
        saxpy.call([1.0, x, y, n], launch=n + 1)
    with pytest.raises(TypeError, match="does not fit"):
        saxpy.call([1.0, x, y, -1], launch=n)
    with pytest.raises(ValueError, match="intent must be"):
        locus.Kernel("k").buffer("x", "float32", "sideways")
    with pytest.raises(ValueError, match="no built-in kernel"):
        locus.Kernel.builtin("nope")
    with pytest.raises(ValueError, match="no target is available"):
        locus.Codelet(locus.kernels.saxpy(), ["cuda:7"])
    assert locus.kernels.saxpy().params[1] == ("x", "buffer", "float32", "in")


def served_at(buffer, location):
    """True when `buffer`'s current data is held at `location`, or code there reads a
    valid copy in place (nothing to load)."""
    valid = [l for l, ok in buffer.replicas() if ok]
    return location in valid or any(locus.route(l, location)["kind"] == "in-place" for l in valid)


def test_call_async_with_advanced_load_and_delegated_store(location):
    # Example 07's sequence, checked: advancedload moves the inputs ahead of the call,
    # the call moves nothing, delegatedstore brings the result home.
    n = 1 << 16
    saxpy = locus.Codelet(locus.kernels.saxpy(), [location, "host"])
    x = locus.Buffer.from_array(np.arange(n, dtype=np.float32) % 11)
    y = locus.Buffer.from_array(np.full(n, 2.0, dtype=np.float32))
    saxpy.advanced_load(x)
    saxpy.advanced_load(y)
    assert served_at(x, location) and served_at(y, location)
    pending = saxpy.call_async([3.0, x, y, n], launch=n)
    assert pending.target == location
    report = pending.synchronize()
    assert report["target"] == location and report["bytes_moved"] == 0
    assert pending.is_complete() and pending.event.is_complete()
    assert pending.synchronize() == report  # again: the same report
    saxpy.delegated_store(y)
    assert served_at(y, "host")
    want = 3.0 * (np.arange(n, dtype=np.float32) % 11) + 2.0
    np.testing.assert_array_equal(y.to_numpy(), want)


def test_calls_in_flight_order_every_use_of_their_arguments(location):
    # Two calls on one buffer and a read, none waited for: each waits for the one before.
    n = 4096
    saxpy = locus.Codelet(locus.kernels.saxpy(), [location])
    x = locus.Buffer(location, n, dtype="float32", fill=1.0)
    y = locus.Buffer(location, n, dtype="float32", fill=2.0)
    first = saxpy.call_async([3.0, x, y, n], launch=n)
    second = saxpy.call_async([3.0, x, y, n], launch=n)
    np.testing.assert_array_equal(y.to_numpy(), np.full(n, 8.0, dtype=np.float32))
    assert first.synchronize()["target"] == location
    assert second.synchronize()["target"] == location
    # A pending call's event is a dependency of later asynchronous work.
    third = saxpy.call_async([1.0, x, y, n], launch=n)
    src = locus.Memory("host", 16)
    dst = locus.Memory(location, 16)
    src.copy_to_async(dst, 16, after=[third.event]).wait()
    assert third.is_complete()
    np.testing.assert_array_equal(y.to_numpy(), np.full(n, 9.0, dtype=np.float32))


def test_advanced_load_async_returns_the_moves_events(location):
    n = 1024
    saxpy = locus.Codelet(locus.kernels.saxpy(), [location])
    x = locus.Buffer.from_array(np.arange(n, dtype=np.float32))
    events = saxpy.advanced_load_async(x)
    for e in events:
        e.wait()
        assert e.is_complete()
    assert served_at(x, location)
    y = locus.Buffer(location, n, dtype="float32")
    saxpy.call([1.0, x, y, n], launch=n)
    saxpy.delegated_store(y, to="host")
    np.testing.assert_array_equal(y.to_numpy(), np.arange(n, dtype=np.float32))


def test_call_async_misuse_raises_at_the_call():
    n = 8
    saxpy = locus.Codelet(locus.kernels.saxpy(), ["host"])
    x = locus.Buffer("host", n, dtype="float32")
    y = locus.Buffer("host", n, dtype="float32")
    with pytest.raises(ValueError, match="takes 4 arguments"):
        saxpy.call_async([1.0, x, y], launch=n)
    with pytest.raises(ValueError, match="larger than buffer"):
        saxpy.call_async([1.0, x, y, n], launch=n + 1)
    with pytest.raises(TypeError, match="expected a locus.Buffer"):
        saxpy.advanced_load(np.ones(n))
    with pytest.raises(ValueError, match="unknown location|not a location|location"):
        saxpy.delegated_store(y, to="nowhere:0")
    # Nothing was left locked by the refused calls.
    saxpy.call([1.0, x, y, n], launch=n)


@pytest.mark.skipif(
    not [l for l in locus.available() if l.startswith("opencl")], reason="no OpenCL location here"
)
def test_a_launch_that_fails_everywhere_raises_from_call_async():
    at = [l for l in locus.available() if l.startswith("opencl")][0]
    broken = locus.Kernel("broken").buffer("x", "float32", "inout").opencl_c("this is not C", "broken")
    x = locus.Buffer(at, 4, dtype="float32", fill=1.0)
    with pytest.raises(locus.LocusError, match=at):
        locus.Codelet(broken, [at]).call_async([x], launch=4)
    np.testing.assert_array_equal(x.to_numpy(), np.ones(4, dtype=np.float32))


def test_skipped_targets_say_why():
    # OpenHMPP's target list: the first available target runs; the missing ones before
    # it are the skipped ones, each with its reason (those after it are never tried).
    targets = ["cuda:0", "hip:0", "host"]
    codelet = locus.Codelet(locus.kernels.vec_add(), targets)
    chosen = next(l for l in targets if l in locus.available())
    assert codelet.target == chosen
    before = targets[: targets.index(chosen)]
    assert [l for l, _ in codelet.skipped] == [l for l in before if l not in locus.available()]
    assert all(why for _, why in codelet.skipped)


def test_a_python_function_is_a_kernels_host_implementation(location):
    # OpenHMPP's host fallback in Python: the function runs where the target is the host
    # (or cond is false), the device source elsewhere; same data either way.
    seen = []

    def scale_on_host(args, launch):
        x, s, n = args
        seen.append((x.dtype, x.shape, x.flags.writeable, s, n, launch))
        x[:n] *= s

    n = 1000
    kernel = scale_kernel().host(scale_on_host)
    x = locus.Buffer.from_array(np.arange(n, dtype=np.float32))
    codelet = locus.Codelet(kernel, [location, "host"])
    runs_python = codelet.target == "host"
    codelet.call([x, 2.0, n], launch=n)
    codelet.call([x, 3.0, n], launch=n, cond=False)  # on the host: the function
    pending = codelet.call_async([x, 0.5, n], launch=n)
    pending.synchronize()
    np.testing.assert_array_equal(x.to_numpy(), np.arange(n, dtype=np.float32) * 3.0)
    assert len(seen) == (3 if runs_python else 1)
    assert seen[0] == (np.float32, (n,), True, 3.0 if not runs_python else 2.0, n, (n, 1))


def test_a_python_host_function_s_arrays_are_copies_and_its_errors_write_nothing():
    kept = []

    def body(args, launch):
        a, b, c, n = args
        assert not a.flags.writeable and not b.flags.writeable and c.flags.writeable
        c[:] = a + b
        kept.append(c)

    def fails(args, launch):
        args[2][:] = -1.0
        raise KeyError("the host function's own error")

    n = 64
    vec_add = locus.kernels.vec_add()
    a = locus.Buffer("host", n, dtype="float32", fill=1.0)
    b = locus.Buffer.from_array(np.arange(n, dtype=np.float32))
    c = locus.Buffer("host", n, dtype="float32")
    locus.Codelet(vec_add.host(body), ["host"]).call([a, b, c, n], launch=n)
    want = np.arange(n, dtype=np.float32) + 1.0
    np.testing.assert_array_equal(c.to_numpy(), want)
    kept[0][:] = 7.0  # a copy made for the call: the buffer does not change
    np.testing.assert_array_equal(c.to_numpy(), want)
    with pytest.raises(KeyError, match="own error"):
        locus.Codelet(vec_add.host(fails), ["host"]).call([a, b, c, n], launch=n)
    with pytest.raises(KeyError, match="own error"):
        locus.Codelet(vec_add.host(fails), ["host"]).call_async([a, b, c, n], launch=n).synchronize()
    np.testing.assert_array_equal(c.to_numpy(), want)


@pytest.mark.parametrize("how", ["call", "call_async"])
def test_a_python_host_function_may_read_its_own_arguments_properties(how):
    # Fails on the code before: the body's `x.location` waited for the lock its own call
    # held, forever (sync and async alike).
    n = 32
    x = locus.Buffer("host", n, dtype="float32", fill=1.0)
    seen = []

    def body(args, launch):
        seen.append((x.location, x.size, x.dtype, x.shape, repr(x), x.replicas()))
        # Anything that would wait for the call itself is an error naming the buffer.
        with pytest.raises(ValueError, match=r"float32 buffer \[32\] at host is an argument of the call"):
            x.to_numpy()
        with pytest.raises(ValueError, match="argument of the call"):
            x.fill(2.0)
        args[0][:n] *= args[1]

    codelet = locus.Codelet(scale_kernel().host(body), ["host"])
    if how == "call":
        codelet.call([x, 3.0, n], launch=n)
    else:
        codelet.call_async([x, 3.0, n], launch=n).synchronize()
    assert seen and seen[0][:4] == ("host", n, "float32", (n,))
    assert "at host" in seen[0][4] and seen[0][5] == [("host", True)]
    np.testing.assert_array_equal(x.to_numpy(), np.full(n, 3.0, dtype=np.float32))
