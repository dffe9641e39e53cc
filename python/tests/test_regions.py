"""`Memory.copy_region_to` with regions made from numpy views: a column face, an inner
block and a plane of a 3-D array move between every pair of locations in one call,
arriving as numpy slicing says; bad views and bad regions are refused, nothing written."""

import numpy as np
import pytest

import locus


def memory_with(location, array):
    m = locus.Memory(location, array.nbytes)
    m.write(array)
    return m


def test_numpy_views_arrive_at_every_location(location):
    grid = np.arange(64 * 48, dtype=np.float64).reshape(64, 48)
    box = np.arange(6 * 10 * 12, dtype=np.float32).reshape(6, 10, 12)
    views = [
        (grid, grid[:, 3]),
        (grid, grid[5:12, 40:47]),
        (box, box[:, :, 11]),
        (box, box[2:4, 1:9, 3:7]),
    ]
    for other in locus.available():
        for base, view in views:
            src = memory_with(other, base)
            dst = locus.Memory(location, view.nbytes)
            route = src.copy_region_to(dst, locus.Region.of(view, base))
            got = np.frombuffer(dst.read(), dtype=base.dtype).reshape(view.shape)
            np.testing.assert_array_equal(got, view, err_msg=f"{other} -> {location}: {route}")


def test_a_face_lands_in_a_halo_column_of_another_grid(location):
    # The halo exchange of a grid split in two along its columns: the first interior
    # column of the right half goes to the halo column of the left half.
    left = np.zeros((32, 18), dtype=np.float64)
    right = np.random.default_rng(1).random((32, 18))
    src, dst = memory_with(location, right), memory_with("host", left)
    face = locus.Region.of(right[:, 1], right)
    halo = locus.Region.of(left[:, 17], left)
    src.copy_region_to(dst, face, halo)
    got = np.frombuffer(dst.read(), dtype=np.float64).reshape(32, 18)
    want = left.copy()
    want[:, 17] = right[:, 1]
    np.testing.assert_array_equal(got, want)


def test_every_route_gives_the_same_bytes(location):
    grid = np.arange(40 * 24, dtype=np.int32).reshape(40, 24)
    view = grid[3:30, 2:5]
    region = locus.Region.of(view, grid)
    taken = []
    for via in ("rect", "packed", "runs"):
        src, dst = memory_with(location, grid), locus.Memory("host", view.nbytes)
        try:
            taken.append(src.copy_region_to(dst, region, via=via))
        except ValueError as e:
            assert "no rect route" in str(e), e
            continue
        got = np.frombuffer(dst.read(), dtype=np.int32).reshape(view.shape)
        np.testing.assert_array_equal(got, view, err_msg=taken[-1])
    assert len(taken) >= 2, taken


def test_bad_views_and_regions_are_refused(location):
    with pytest.raises(ValueError, match="stride -32"):
        locus.Region((4, 4), (-32, 8), itemsize=8)
    with pytest.raises(ValueError, match="1 to 3"):
        locus.Region((2, 2, 2, 2), itemsize=1)
    with pytest.raises(ValueError, match="route"):
        locus.Memory(location, 64).copy_region_to(locus.Memory(location, 64), locus.Region((8,)), via="diagonal")
    src = locus.Memory(location, 256)
    dst = locus.Memory(location, 64)
    dst.set(0)
    with pytest.raises(ValueError, match=f"{location}.*past the memory's 256 bytes"):
        src.copy_region_to(dst, locus.Region.rect((0, 15, 0), (8, 2, 1), 16))
    with pytest.raises(ValueError, match="row pitch of 4"):
        src.copy_region_to(dst, locus.Region.rect((0, 0, 0), (8, 2, 1), 4))
    assert dst.read() == bytes(64)


def test_an_asynchronous_face_copy_follows_its_event(location):
    grid = np.arange(16 * 24, dtype=np.float32).reshape(16, 24)
    src = memory_with(location, grid)
    dst = locus.Memory("host", 16 * 4)
    go, trigger = locus.Event.user()
    done = src.copy_region_to_async(dst, locus.Region.of(grid[:, 7], grid), after=[go])
    assert not done.is_complete()
    trigger.complete()
    done.wait()
    np.testing.assert_array_equal(np.frombuffer(dst.read(), dtype=np.float32), grid[:, 7])


def test_buffer_regions_index_as_numpy_does(location):
    # buf.region[...] is the region numpy's same index selects in an array of the
    # buffer's shape: compared with Region.of over a real numpy view.
    grid = np.arange(12 * 10, dtype=np.float32).reshape(12, 10)
    buf = locus.Buffer.from_array(grid).copy(location)
    for index in [(slice(None), 0), (slice(1, -1), slice(1, -1)), 4, (Ellipsis, -1), (slice(None, None, 3), slice(2, None, 4))]:
        assert buf.region[index] == locus.Region.of(grid[index], grid), index
    assert buf.region[3, 7] == locus.Region.of(grid[3, 7:8], grid)
    for bad, phrase in [((slice(None, None, -1), 0), "step -1"), ((0, 0, 0), "3 indices"), ((12, 0), "out of range"), ((slice(5, 5),), "empty")]:
        with pytest.raises(IndexError, match=phrase):
            buf.region[bad]


def test_buffer_region_copies_between_every_pair(location):
    # A column face of a grid at every location into the last column of a grid here,
    # and an inner block back: one call each, the rest of each grid untouched.
    values = np.arange(32 * 20, dtype=np.float64).reshape(32, 20)
    for other in locus.available():
        src = locus.Buffer.from_array(values).copy(other)
        dst = locus.Buffer(location, (32, 20), dtype="float64", fill=-1.0)
        route = dst.copy_region_from(src, src.region[:, 3], dst.region[:, -1])
        want = np.full((32, 20), -1.0)
        want[:, -1] = values[:, 3]
        np.testing.assert_array_equal(dst.to_numpy(), want, err_msg=f"{other} -> {location}: {route}")
        block = locus.Buffer(other, (5, 4), dtype="float64")
        dst.copy_region_to(block, dst.region[10:15, 16:20], block.region[...])
        np.testing.assert_array_equal(block.to_numpy(), want[10:15, 16:20])


def test_bad_buffer_region_copies_write_nothing(location):
    a = locus.Buffer(location, (8, 8), dtype="float32", fill=1.0)
    b = locus.Buffer(location, (8, 8), dtype="float32", fill=2.0)
    c = locus.Buffer(location, (8, 8), dtype="float64", fill=2.0)
    with pytest.raises(ValueError, match="past the memory"):
        b.copy_region_from(a, a.region[:, 0], locus.Region.rect((0, 7, 0), (4, 2, 1), 32))
    with pytest.raises(ValueError, match="splits elements"):
        b.copy_region_from(a, locus.Region.rect((2, 0, 0), (4, 8, 1), 32))
    with pytest.raises(TypeError, match="float64"):
        c.copy_region_from(a, a.region[:, 0])
    with pytest.raises(ValueError, match="within one buffer"):
        a.copy_region_from(a, a.region[:, 0], a.region[:, 1])
    assert (b.to_numpy() == 2.0).all() and (a.to_numpy() == 1.0).all()
