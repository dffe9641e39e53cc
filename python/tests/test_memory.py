"""`locus.Memory` / `locus.Mirror`: umem's allocations and connections from Python, on
every location."""

import numpy as np
import pytest

import locus


def test_aligned_allocations_of_any_power_of_two(location):
    for alignment in (1, 64, 128, 4096, 1 << 20):
        m = locus.Memory(location, 1000, alignment)
        assert m.nbytes == 1000 and m.location == location
        assert m.address % alignment == 0, (alignment, hex(m.address))
        assert m.aligned_origin <= m.address  # the allocation the aligned part is in
        m.write(bytes(range(200)) * 5)
        assert m.read() == bytes(range(200)) * 5
    with pytest.raises(ValueError, match="power of two"):
        locus.Memory(location, 10, 3)


def test_calloc_set_read_and_write(location):
    m = locus.Memory.calloc(location, 8, 10)
    assert m.nbytes == 80 and m.read() == bytes(80)
    m.set(7, 16, offset=8)
    assert m.read() == bytes(8) + bytes([7]) * 16 + bytes(56)
    m.write(np.arange(4, dtype=np.uint8), offset=76)
    assert m.read(4, offset=76) == bytes([0, 1, 2, 3])
    with pytest.raises(ValueError, match=location):
        m.write(b"12345", offset=78)
    with pytest.raises(ValueError):
        m.set(1, 100)


def test_write_takes_any_array_contiguous_or_not(location):
    """A C-contiguous array is read in place (no bytes() copy first); a strided view, a
    structured dtype and a zero-length array are written as their bytes."""
    m = locus.Memory(location, 4096)
    a = np.arange(1024, dtype=np.float32)
    m.write(a)
    assert np.frombuffer(m.read(), dtype=np.float32).tolist() == a.tolist()
    strided = np.arange(2048, dtype=np.int16)[::2]  # 1024 elements, not contiguous
    m.write(strided, offset=2048)
    assert np.frombuffer(m.read(2048, offset=2048), dtype=np.int16).tolist() == strided.tolist()
    pairs = np.zeros(4, dtype=[("a", "<u2"), ("b", "<u2")])
    pairs["a"], pairs["b"] = 1, 2
    m.write(pairs)
    assert m.read(16) == pairs.tobytes()
    m.write(np.empty(0, dtype=np.float64), offset=4096)
    with pytest.raises(ValueError, match=location):
        m.write(np.zeros(1025, dtype=np.float32))


def test_copies_between_every_pair(location):
    data = bytes((i * 7) % 256 for i in range(4096))
    src = locus.Memory(location, 4096)
    src.write(data)
    for other in locus.available():
        dst = locus.Memory(other, 8192)
        dst.set(0)
        route = src.copy_to(dst, 1000, offset=10, dst_offset=100)
        assert route, (location, other)
        assert dst.read(1000, offset=100) == data[10:1010], (location, other)
        assert dst.read(100) == bytes(100)
        back = locus.Memory(location, 4096)
        back.copy_from(dst, 1000, offset=0, src_offset=100)
        assert back.read(1000) == data[10:1010]
        assert src.is_same_context(back) and (location == other) == src.is_same_context(dst)


def test_mirrors_move_the_way_umem_says(location):
    data = np.arange(10, dtype=np.float64)
    device = locus.Memory(location, 80, 128)
    device.write(np.full(10, -1.0))
    mirror = device.connect(80, "host", 64)
    assert mirror.nbytes == 80 and mirror.location == "host"
    assert mirror.in_place == device.is_accessible_from("host")  # 128-aligned: 64 holds
    host = np.asarray(mirror.memory).view(np.float64)
    assert host.tolist() == [-1.0] * 10  # connect fills the paired memory from the source
    host[:] = data
    mirror.sync(40)  # pushes only 40 bytes of the paired memory to the source
    got = np.frombuffer(device.read(), dtype=np.float64)
    if mirror.in_place:
        assert got.tolist() == data.tolist()
    else:
        assert got.tolist() == data[:5].tolist() + [-1.0] * 5
    mirror.sync()
    device.write(data ** 2)
    mirror.update()  # pulls the source into the paired memory
    assert host.tolist() == (data ** 2).tolist()
    with pytest.raises(ValueError, match="connected"):
        mirror.sync(81)
    del host
    mirror.disconnect()
    with pytest.raises(ValueError, match="disconnected"):
        mirror.update()


def test_numpy_views_memory_the_host_reaches_in_place(location):
    m = locus.Memory(location, 64)
    if m.host_access == "none":
        with pytest.raises(AttributeError, match="not reachable from the host"):
            m.__array_interface__
        return
    view = np.asarray(m)
    assert view.dtype == np.uint8 and view.shape == (64,)
    view[:] = 5
    del view
    assert m.read() == bytes([5]) * 64


def test_a_forced_route_and_the_process_counters(location):
    n = 1 << 16
    src, dst = locus.Memory(location, n), locus.Memory("host", n)
    src.set(5)
    before = locus.transfer_totals().get("staged", {"calls": 0, "bytes": 0})
    route = src.copy_to(dst, n, via="staged")
    assert "staged" in route, route
    assert dst.read() == bytes([5]) * n
    after = locus.transfer_totals()["staged"]
    assert after["calls"] >= before["calls"] + 1 and after["bytes"] >= before["bytes"] + n
    assert "moved" in locus.transfer_totals_text()
    with pytest.raises(ValueError, match="the kinds are"):
        src.copy_to(dst, n, via="teleport")
    assert all(len(p) == 3 for p in locus.registered_paths())


def test_mirrors_at_pairs_that_are_not_in_place_move_the_way_umem_says():
    # The test above connects to the host only, where every location here is reached in
    # place, so a mirror whose sync and update ran the wrong way would still pass. Here:
    # every pair whose paired memory is a real copy (OpenCL devices in separate
    # contexts, WebGPU and the rest where they do not reach each other).
    data = np.arange(10, dtype=np.float64)
    pairs = [
        (a, b)
        for a in locus.available()
        for b in locus.available()
        if a != b and not locus.Memory(a, 8).is_accessible_from(b)
    ]
    assert pairs, "no pair of locations here that is not in place"
    for a, b in pairs:
        source = locus.Memory(a, 80)
        source.write(np.full(10, -1.0))
        mirror = source.connect(80, b, 0)
        assert not mirror.in_place and mirror.location == b, (a, b)
        paired = lambda: np.frombuffer(mirror.memory.read(), dtype=np.float64).tolist()  # noqa: E731
        assert paired() == [-1.0] * 10, (a, b, "connect fills the paired memory from the source")
        mirror.memory.write(data)
        mirror.sync(40)  # pushes 40 bytes of the paired memory to the source, not back
        assert np.frombuffer(source.read(), dtype=np.float64).tolist() == data[:5].tolist() + [-1.0] * 5, (a, b)
        assert paired() == data.tolist(), (a, b, "sync left the paired memory as it was")
        source.write(data**2)
        mirror.update()  # pulls the source into the paired memory
        assert paired() == (data**2).tolist(), (a, b)
        mirror.disconnect()
