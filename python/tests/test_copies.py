"""Range copies between buffers at any two locations (umem's copy_from), and prefetch."""

import numpy as np
import pytest

import locus


def test_range_copies_to_and_from_every_location(location):
    n = 1000
    src_data = np.arange(n, dtype=np.int32)
    for other in locus.available():
        src = locus.Buffer.from_array(src_data.copy()).copy(other)
        dst = locus.Buffer(location, n, dtype="int32", fill=-1)
        route = dst.copy_from(src, src_start=100, count=250, dst_start=10)
        assert isinstance(route, str) and route
        want = np.full(n, -1, dtype=np.int32)
        want[10:260] = src_data[100:350]
        np.testing.assert_array_equal(dst.to_numpy(), want, err_msg=f"{other} -> {location}")
        # The default count: the rest of the source.
        dst.copy_from(src, src_start=n - 5)
        want[:5] = src_data[n - 5 :]
        np.testing.assert_array_equal(dst.to_numpy(), want)


def test_out_of_range_copies_write_nothing(location):
    src = locus.Buffer(location, 10, dtype="float32", fill=1.0)
    dst = locus.Buffer(location, 10, dtype="float32", fill=2.0)
    for kwargs in ({"src_start": 5, "count": 6}, {"dst_start": 8, "count": 3}, {"src_start": 11}):
        with pytest.raises(ValueError):
            dst.copy_from(src, **kwargs)
    np.testing.assert_array_equal(dst.to_numpy(), np.full(10, 2.0, dtype=np.float32))
    with pytest.raises(TypeError, match="holds float32, the source int32"):
        dst.copy_from(locus.Buffer(location, 10, dtype="int32"))
    with pytest.raises(ValueError, match="within one buffer"):
        dst.copy_from(dst)


def test_prefetch_makes_the_next_access_free(location):
    b = locus.Buffer.from_array(np.arange(4096, dtype=np.float64))
    b.prefetch(location)
    moved = b.bytes_moved
    with b.access(location) as h:
        assert h is not None
    assert b.bytes_moved == moved, "nothing moves after the prefetch"


def test_routes_and_transfer_counters(location):
    r = locus.route(location, "host")
    assert r["kind"] in ("in-place", "direct", "mapped", "peer", "staged") and r["reason"]
    assert locus.route(location, location)["kind"] == "in-place"
    b = locus.Buffer.from_array(np.arange(1024, dtype=np.float32))
    assert b.transfers == {} or set(b.transfers) <= {"in-place"}
    c = locus.Buffer(location, 1024, dtype="float32")
    c.copy_from(b)
    c.to_numpy()
    moved = c.transfers
    assert sum(v["bytes"] for k, v in moved.items() if k != "in-place") == c.bytes_moved
    assert all(v["calls"] >= 1 for v in moved.values())


def test_copy_batch_equals_the_copies_one_by_one(location):
    # 64 scattered copies from the host into `location` and back, as one batch each way.
    n, slot = 64 * 1024, 1024
    src = locus.Memory("host", n)
    data = bytes((i * 31 + 7) % 256 for i in range(n))
    src.write(data)
    mid, back = locus.Memory(location, n), locus.Memory("host", n)
    mid.set(0)
    back.set(0)
    order = [(i * 37) % 64 for i in range(64)]
    locus.copy_batch([(src, i * slot, mid, j * slot, slot) for i, j in enumerate(order)])
    locus.copy_batch([(mid, j * slot, back, j * slot, slot) for j in order])
    want = bytearray(n)
    for i, j in enumerate(order):
        want[j * slot : (j + 1) * slot] = data[i * slot : (i + 1) * slot]
    assert back.read() == bytes(want)
    with pytest.raises(ValueError, match="nothing was copied"):
        locus.copy_batch([(src, 0, mid, 0, 100), (src, 0, mid, 50, 100)])
