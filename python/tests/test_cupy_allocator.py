"""CuPy allocating from a locus pool (``locus.cupy_allocator``, issue 64 item 4), as a
CuPy user writes code: no waits of their own. Runs where CuPy and a CUDA device are;
elsewhere it skips with the reason."""

import numpy as np
import pytest

import locus


@pytest.fixture
def cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        cupy.cuda.runtime.getDeviceCount()
        cupy.zeros(1)
    except Exception as e:
        pytest.skip(f"CuPy has no GPU here: {e}")
    if not [l for l in locus.available() if l.split(":")[0] in ("cuda", "hip")]:
        pytest.skip("locus has no CUDA or HIP device here")
    previous = cupy.cuda.get_allocator()
    cupy.cuda.set_allocator(locus.cupy_allocator())
    yield cupy
    cupy.cuda.set_allocator(previous)


def test_cupy_arrays_come_from_locus_s_pool(cupy):
    x = cupy.arange(1 << 20, dtype=cupy.float32)
    x *= 2
    info = locus.lookup(x.data.ptr + 4)
    assert info["known_to_locus"] and info["location"] == f"cuda:{x.device.id}", info
    assert info["resource"], info
    np.testing.assert_array_equal(cupy.asnumpy(x), np.arange(1 << 20, dtype=np.float32) * 2)


def test_memory_freed_on_one_stream_is_not_another_s_until_its_work_is_done(cupy):
    """A block CuPy frees while its kernels still run on stream 1 is not handed to an
    array of stream 2 before they end: stream 2's data is never overwritten by them."""
    n = 1 << 24
    s1 = cupy.cuda.Stream(non_blocking=True)
    s2 = cupy.cuda.Stream(non_blocking=True)
    for _ in range(5):
        with s1:
            a = cupy.zeros(n, dtype=cupy.float32)
            for _ in range(20):
                a += 1  # long work on s1, still queued when `a` is freed
            del a
        with s2:
            b = cupy.full(n, 7, dtype=cupy.float32)
            total = float(b.sum())  # CuPy's own read, on s2
        assert total == 7.0 * n

