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


def _read_at_home(b, home):
    """Reads of the buffer at its home, as a user makes them between two writes."""
    return {
        "access": lambda: b.access(home).close(),
        "prefetch": lambda: b.prefetch(home),
        "to_numpy": lambda: b.to_numpy(),
        "copy_home": lambda: b.copy(home),
    }


def _writer_pairs():
    """(home, handle location) pairs of different locations where numpy can write
    through the handle in place; fails when there are none (no pair to test)."""
    pairs = []
    for home in locus.available():
        for at in locus.available():
            if home == at:
                continue
            with locus.Buffer(home, 4, dtype="float32").access_mut(at) as h:
                try:
                    np.asarray(h)
                except TypeError:
                    continue  # host code cannot address it: no numpy view
                # A WebGPU buffer mapped in place runs no GPU work while numpy holds it
                # (documented): the reads in between would wait for the array to go.
                if not h.memory_location.startswith("webgpu"):
                    pairs.append((home, at))
    assert pairs, "no pair of locations with a host-addressable write handle here"
    return pairs


@pytest.mark.parametrize("between", ["access", "prefetch", "to_numpy", "copy_home"])
@pytest.mark.parametrize("export", ["asarray", "from_dlpack"])
def test_writes_through_an_open_handle_after_a_read_elsewhere_are_kept(between, export):
    # The user's order: write half through an open handle, something reads the buffer at
    # its home, write the other half, close, read back. Every pair of home and a handle
    # location numpy can write in place. Fails on the code before: the read made the
    # home copy current again and nothing re-declared the write, so the second half
    # was lost (to_numpy returned only the first eight).
    ran = 0
    for home, at in _writer_pairs():
        b = locus.Buffer(home, 16, dtype="float32", fill=0.0)
        h = b.access_mut(at)
        if export == "from_dlpack" and h.__dlpack_device__()[0] != 1:
            h.close()  # numpy takes DLPack from the CPU only (a SYCL handle is oneAPI's)
            continue
        ran += 1
        a = np.asarray(h) if export == "asarray" else np.from_dlpack(h)
        a[0:8] = 1.0
        _read_at_home(b, home)[between]()
        a[8:16] = 2.0
        # While the handle is open, its memory is the newest copy for every reader.
        assert b.copy(home).to_list() == [1.0] * 8 + [2.0] * 8, (home, at, "open")
        h.close()
        assert b.to_list() == [1.0] * 8 + [2.0] * 8, (home, at, between, export)
        assert np.asarray(b.access("host")).tolist() == [1.0] * 8 + [2.0] * 8, (home, at)
    assert ran, "no pair exported to numpy"


def test_writes_through_a_handle_dropped_unclosed_after_a_read_elsewhere_are_kept():
    for home, at in _writer_pairs():
        b = locus.Buffer(home, 16, dtype="int32", fill=0)
        h = b.access_mut(at)
        a = np.asarray(h)
        a[0:8] = 1
        b.prefetch(home)
        a[8:16] = 2
        del a, h
        gc.collect()
        assert b.to_list() == [1] * 8 + [2] * 8, (home, at)


def test_a_codelet_call_at_home_reads_an_open_handle_s_newest_data_and_a_write_waits():
    saxpy = {home: locus.Codelet(locus.kernels.saxpy(), [home]) for home in locus.available()}
    for home, at in _writer_pairs():
        x = locus.Buffer(home, 16, dtype="float32", fill=0.0)
        y = locus.Buffer(home, 16, dtype="float32", fill=0.0)
        h = x.access_mut(at)
        a = np.asarray(h)
        a[0:8] = 1.0
        # y = 1 * x + y at the home reads x there: the handle's newest data.
        saxpy[home].call([1.0, x, y, 16], launch=16)
        assert y.to_list() == [1.0] * 8 + [0.0] * 8, (home, at)
        a[8:16] = 2.0
        # A call that writes x while the handle is open would lose one of the writes.
        with pytest.raises(ValueError, match="write handle of it at .* is still open"):
            saxpy[home].call([1.0, y, x, 16], launch=16)
        h.close()
        assert x.to_list() == [1.0] * 8 + [2.0] * 8, (home, at)
