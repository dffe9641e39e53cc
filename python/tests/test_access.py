"""Declared access from Python: zero-copy where in place, replicas otherwise, exactly as in Rust."""

import gc

import numpy as np
import pytest

import locus

from conftest import host_addressable


def test_host_access_is_zero_copy_where_in_place(location):
    b = locus.Buffer(location, 64, dtype="float32", fill=1.0)
    h = b.access_mut("host")
    a = np.asarray(h)
    if not h.in_place:
        # Not host-addressable (WebGPU on a discrete GPU; on unified memory such as
        # lavapipe its buffers are mapped in place): a host replica serves the handle,
        # and the replica tests below show its writes coming back.
        assert h.memory_location == "host" and np.all(a == 1.0)
        return
    # numpy sees the buffer's own memory...
    assert a.ctypes.data == h.ptr
    assert h.memory_location == location
    # ... a write through numpy is read by locus (Rust) ...
    a[5] = 42.0
    assert b.bytes_moved == 0, "nothing was copied to serve the handle"
    assert b.to_list()[5] == 42.0
    # ... and a write by locus is seen by numpy, without any copy.
    b.fill(9.0)
    assert np.all(a == 9.0)


def test_replica_writes_are_never_lost(location):
    b = locus.Buffer(location, 1000, dtype="int32", fill=0)
    with b.access_mut("host") as h:
        a = np.asarray(h)
        a[:] = np.arange(1000)
    # Read back at the buffer's own location, then everywhere else.
    np.testing.assert_array_equal(np.asarray(b.copy(location).access("host")), np.arange(1000))
    for other in locus.available():
        np.testing.assert_array_equal(b.copy(other).to_numpy(), np.arange(1000))


def test_open_write_handle_holds_the_newest_data(location):
    b = locus.Buffer(location, 10, dtype="float64", fill=0.0)
    a = np.asarray(b.access_mut("host"))  # stays open while `a` lives
    a[:] = 1.0
    assert b.copy(location).to_numpy().sum() == 10.0
    a[:] = 2.0  # written after a read elsewhere: still seen
    assert b.copy(location).to_numpy().sum() == 20.0


def test_second_writer_elsewhere_is_refused_until_the_first_is_closed():
    others = [l for l in locus.available() if l != "host"]
    b = locus.Buffer("host", 8)
    h = b.access_mut("host")
    if others:
        with pytest.raises(ValueError, match="write handle at host is still open"):
            b.access_mut(others[0])
    h.close()
    if others:
        b.access_mut(others[0]).close()


def test_read_handle_is_read_only(location):
    b = locus.Buffer(location, 4, fill=2.0)
    a = np.asarray(b.access("host"))
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 1.0


def test_device_handle_has_no_array_interface_but_a_clear_error(location):
    b = locus.Buffer(location, 4, fill=2.0)
    h = b.access(location)
    if host_addressable(location):
        assert np.asarray(h).sum() == 8.0
    else:
        with pytest.raises(TypeError, match="access\\(\"host\"\\)"):
            np.asarray(h)


def test_buffer_deleted_before_the_array(location):
    b = locus.Buffer(location, 1000, dtype="float32", fill=1.5)
    a = np.asarray(b.access("host"))
    d = np.from_dlpack(b.access("host"))
    del b
    gc.collect()
    assert a.sum() == 1500.0 and d.sum() == 1500.0


def test_array_deleted_before_the_buffer(location):
    b = locus.Buffer(location, 1000, dtype="float32", fill=1.5)
    a = np.asarray(b.access_mut("host"))
    a[0] = 0.0
    del a
    gc.collect()
    assert b.to_numpy().sum() == 1498.5


def test_producer_kept_alive_by_adopting_buffer():
    src = np.arange(1000, dtype=np.int64)
    b = locus.Buffer.from_dlpack(src)
    src[0] = -1  # zero-copy: the buffer sees it
    del src
    gc.collect()
    assert b.to_list()[:2] == [-1, 1]
    c = locus.Buffer.from_array(np.ones(10))
    gc.collect()
    assert c.to_list() == [1.0] * 10


def _rss_kib():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource

    return pages * resource.getpagesize() // 1024


def _round_trip(location, i):
    b = locus.Buffer(location, 4096, dtype="float32", fill=float(i))
    a = np.from_dlpack(b.access_mut("host"))
    a[0] = -1.0
    c = locus.Buffer.from_dlpack(np.asarray(b.access("host")))
    assert c.to_numpy()[0] == -1.0
    del b
    return a


def test_ten_thousand_round_trips_keep_memory_flat():
    for i in range(1000):
        _round_trip("host", i)
    gc.collect()
    before = _rss_kib()
    for i in range(10_000):
        _round_trip("host", i)
    gc.collect()
    grown = _rss_kib() - before
    # 10^4 round trips of 16 KiB each would leak 160 MiB; allow allocator noise only.
    assert grown < 8 * 1024, f"resident memory grew by {grown} KiB over 10^4 round trips"


def test_device_round_trips_keep_memory_flat(location):
    for i in range(200):
        _round_trip(location, i)
    gc.collect()
    before = _rss_kib()
    for i in range(1000):
        _round_trip(location, i)
    gc.collect()
    grown = _rss_kib() - before
    assert grown < 8 * 1024, f"{location}: resident memory grew by {grown} KiB over 1000 round trips"


def test_a_closed_handle_kept_in_a_variable_holds_nothing_back(location):
    # The with-block pattern, the handle left bound after it. On WebGPU's unified memory
    # (lavapipe) the handle's mapping used to live as long as the variable, and GPU work
    # on the buffer waited 10 s for it and failed; a closed handle now gives it up.
    n = 256
    saxpy = locus.Codelet(locus.kernels.saxpy(), [location])
    x = locus.Buffer(location, n, dtype="float32", fill=1.0)
    y = locus.Buffer(location, n, dtype="float32", fill=2.0)
    with y.access_mut("host") as h:
        a = np.asarray(h)
        a[:] = 3.0
        assert not h.closed
    del a
    assert h.closed
    with pytest.raises(ValueError, match="closed"):
        np.asarray(h)
    with pytest.raises(ValueError, match="closed"):
        h.ptr
    with pytest.raises(ValueError, match="closed"):
        np.from_dlpack(h)
    saxpy.call([1.0, x, y, n], launch=n)  # GPU work on y, h still bound
    np.testing.assert_array_equal(y.to_numpy(), np.full(n, 4.0, dtype=np.float32))


def test_an_array_outlives_its_closed_handle(location):
    # The array holds the view (its numpy base), not the handle: reading it after the
    # handle is closed and gone is safe and sees the data.
    b = locus.Buffer(location, 100, dtype="float32", fill=1.5)
    h = b.access("host")
    a = np.asarray(h)
    assert type(a.base).__name__ == "_HostView"
    h.close()
    del h
    gc.collect()
    assert a.sum() == 150.0
    with b.access("host") as h2:
        assert np.asarray(h2, dtype=np.float64).dtype == np.float64
        copied = np.asarray(h2, copy=True)
        assert copied.ctypes.data != np.asarray(h2).ctypes.data
        with pytest.raises(ValueError, match="copy=False"):
            np.asarray(h2, dtype=np.int32, copy=False)
