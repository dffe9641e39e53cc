"""numpy's arrays from a locus resource (NEP 49, issue 64 item 4), as a numpy user writes
code: arrays made inside `locus.numpy_allocator(...)` live in the resource's blocks
(looked up as locus's, on loan from the pool), small ones stay with numpy's own
allocator, `np.zeros` is zeroed, a resize keeps the data, arrays outlive the `with`
block, and device memory is refused."""

import threading

import numpy as np
import pytest

import locus

try:
    from numpy._core.multiarray import get_handler_name
except ImportError:  # numpy < 2
    from numpy.core.multiarray import get_handler_name


def _pool():
    """A host pool, counted: `allocation_counts["current_count"]` is the blocks out."""
    pool = locus.mr.PoolMemoryResource(
        locus.mr.UpstreamMemoryResource("host"), initial_pool_size=8 << 20
    )
    stats = locus.mr.StatisticsResourceAdaptor(pool)
    return stats, stats


def test_arrays_inside_the_block_come_from_the_resource():
    pool, _ = _pool()
    with locus.numpy_allocator(pool, min_bytes=4096):
        big = np.ones(1 << 18)  # 2 MiB
        small = np.ones(16)
    assert get_handler_name(big).startswith("locus")
    info = locus.lookup(big.ctypes.data + 8)
    assert info["known_to_locus"] and "pool" in info["resource"]
    assert info["nbytes"] >= big.nbytes
    with pytest.raises(ValueError, match="no live allocation"):
        locus.lookup(small.ctypes.data)  # numpy's own memory: not the pool's
    after = np.ones(1 << 18)
    assert not get_handler_name(after).startswith("locus"), "the handler outlived its block"
    assert big.sum() == 1 << 18 and small.sum() == 16


def test_zeros_are_zero_in_reused_blocks_and_resize_keeps_the_data():
    pool, _ = _pool()
    with locus.numpy_allocator(pool, min_bytes=4096):
        dirty = np.full(1 << 16, 7.0)
        del dirty  # its block goes back to the pool, bytes and all
        clean = np.zeros(1 << 16)
        assert not clean.any()
        a = np.arange(1 << 16, dtype=np.float64)
        a.resize(1 << 17, refcheck=False)  # numpy's realloc
        assert (a[: 1 << 16] == np.arange(1 << 16)).all() and not a[1 << 16 :].any()
        a.resize(8, refcheck=False)  # below min_bytes: moves to numpy's allocator
        assert list(a) == list(range(8))


def test_blocks_go_back_when_arrays_die_wherever_that_is():
    pool, stats = _pool()
    with locus.numpy_allocator(pool, min_bytes=4096):
        arrays = [np.ones(1 << 15) for _ in range(8)]
    assert stats.allocation_counts["current_count"] == 8
    # Freed by another thread, after the block that made them ended.
    t = threading.Thread(target=arrays.clear)
    t.start()
    t.join()
    assert stats.allocation_counts["current_count"] == 0


def test_memory_the_host_cannot_address_is_refused(location):
    if location.split(":")[0] not in ("opencl", "webgpu"):
        pytest.skip(f"{location}: the host addresses its memory or the test needs objects")
    device = locus.mr.UpstreamMemoryResource(location)
    with pytest.raises(ValueError, match="host does not address in place"):
        with locus.numpy_allocator(device):
            pass


def test_pinned_memory_of_a_gpu_by_default_where_there_is_one():
    gpus = [l for l in locus.available() if l.split(":")[0] in ("cuda", "hip")]
    with locus.numpy_allocator():
        a = np.ones(1 << 20, dtype=np.float32)
    info = locus.lookup(a.ctypes.data)
    if gpus:
        assert (info["location"], info["kind"]) == (gpus[0], "pinned-host"), info
    else:
        assert info["location"] == "host", info
