"""`Buffer.view`: strided views sliced as numpy slices (a view, not a copy), read and copied
in one region copy between every pair of locations, handed to numpy and dpnp through DLPack
with their strides; bad indices and transposes refused, nothing written."""

import numpy as np
import pytest

import locus

GRID = np.arange(40 * 24, dtype=np.float64).reshape(40, 24)
INDICES = [
    (slice(1, -1), 0),
    (slice(None), -1),
    (slice(1, -1), slice(1, -1)),
    (slice(2, 30, 3), slice(4, 20, 5)),
    7,
    (Ellipsis, 3),
    (5, slice(None, None, 2)),
    (39, 23),
]


def test_views_slice_as_numpy_does(location):
    buf = locus.Buffer.from_array(GRID).copy(location)
    for index in INDICES:
        view, selected = buf.view()[index], GRID[index]
        want = np.atleast_1d(selected)
        assert tuple(view.shape) == want.shape, index
        np.testing.assert_array_equal(view.to_numpy(), want, err_msg=f"{location}: {index}")
        if isinstance(selected, np.ndarray):  # numpy's view of the grid: same strides and bytes
            assert tuple(view.strides) == selected.strides, index
            assert view.region == locus.Region.of(selected, GRID), index
    # A view of a view is the view of the combined index; reshaping names the same bytes.
    inner = buf.view()[1:-1, 1:-1][::2, 3]
    np.testing.assert_array_equal(inner.to_numpy(), GRID[1:-1, 1:-1][::2, 3])
    assert buf.view((24, 40))[3, 5:9].to_numpy().tolist() == GRID.reshape(24, 40)[3, 5:9].tolist()


def test_views_copy_between_every_pair(location):
    # A column face of a grid at every location into the first column of a grid here,
    # every other row of a block into a packed tile there; the rest untouched.
    for other in locus.available():
        src = locus.Buffer.from_array(GRID).copy(other)
        dst = locus.Buffer(location, (40, 26), dtype="float64", fill=-1.0)
        dst.view()[:, 0].copy_from(src.view()[:, -1])
        want = np.full((40, 26), -1.0)
        want[:, 0] = GRID[:, -1]
        np.testing.assert_array_equal(dst.to_numpy(), want, err_msg=f"{other} -> {location}")
        tile = src.view()[1:39:2, 2:9].copy(location)
        assert tile.location == location and tile.shape == (19, 7)
        np.testing.assert_array_equal(tile.to_numpy(), GRID[1:39:2, 2:9])


def test_a_view_goes_to_numpy_through_dlpack_with_its_strides(location):
    buf = locus.Buffer.from_array(GRID).copy(location)
    view = buf.view()[2:30:3, 5:9]
    if buf.__dlpack_device__()[0] == 1:  # host memory: read in place, strides and all
        got = np.from_dlpack(view)
        assert got.strides == GRID[2:30:3, 5:9].strides and not got.flags.writeable
    else:  # device memory: numpy asks for a copy at the CPU, with the view's layout
        got = np.from_dlpack(view, device="cpu")
    np.testing.assert_array_equal(got, GRID[2:30:3, 5:9])


def test_a_sycl_view_goes_to_dpnp_in_place():
    dpnp = pytest.importorskip("dpnp", reason="dpnp is not installed (pip install dpnp)")
    if "sycl:0" not in locus.available():
        pytest.skip("SKIPPED: no sycl:0 on this machine")
    buf = locus.Buffer.from_array(GRID).copy("sycl:0")
    got = dpnp.from_dlpack(buf.view()[2:10:2, 3:7])
    assert got.strides == GRID[2:10:2, 3:7].strides  # the view's strides: read in place, not a copy
    start = buf.access("sycl:0").__sycl_usm_array_interface__["data"][0]
    theirs = got.__sycl_usm_array_interface__
    assert theirs["data"][0] + theirs.get("offset", 0) * 8 == start + (2 * 24 + 3) * 8
    np.testing.assert_array_equal(dpnp.asnumpy(got), GRID[2:10:2, 3:7])


def test_bad_views_are_refused_and_write_nothing(location):
    buf = locus.Buffer.from_array(GRID).copy(location)
    other = locus.Buffer(location, (40, 24), dtype="float64", fill=2.0)
    for index, phrase in [((slice(None, None, -1), 0), "step -1"), ((0, 0, 0), "3 indices"),
                          ((40, 0), "out of range"), ((slice(5, 5),), "empty"), (("a",), "not an integer")]:
        with pytest.raises((IndexError, TypeError), match=phrase):
            buf.view()[index]
    with pytest.raises(ValueError, match="holds 950 elements"):
        buf.view((38, 25))
    with pytest.raises(ValueError, match="shape"):
        other.view()[:, 0].copy_from(buf.view()[0, :])
    assert (other.to_numpy() == 2.0).all()
