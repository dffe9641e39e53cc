"""Buffers from Python: construction by name, dtypes, copies, moves, numpy round trips."""

import numpy as np
import pytest

import locus


def test_available_and_info():
    avail = locus.available()
    assert avail[0] == "host"
    info = locus.info()
    assert set(info) == {"host", "cuda", "hip", "openmp", "opencl", "sycl", "webgpu"}
    for technology, entry in info.items():
        if entry["locations"]:
            assert entry["missing"] is None
            assert all(l in avail for l in entry["locations"])
        else:
            assert isinstance(entry["missing"], str) and entry["missing"], technology


@pytest.mark.parametrize("dtype", locus.dtypes())
def test_every_dtype_fills_and_round_trips(location, dtype):
    value = True if dtype == "bool" else 3
    b = locus.Buffer(location, 257, dtype=dtype, fill=value)
    a = b.to_numpy()
    assert a.dtype == np.dtype(dtype)
    assert a.shape == (257,)
    assert np.all(a == np.asarray(value, dtype=dtype))
    # and back: numpy -> locus at this location -> numpy
    src = (np.arange(257) % 2).astype(dtype) if dtype == "bool" else np.arange(257).astype(dtype)
    c = locus.Buffer.from_dlpack(src).copy(location)
    assert c.location == location
    np.testing.assert_array_equal(c.to_numpy(), src)


def test_dtype_spellings():
    assert locus.Buffer("host", 2, dtype=np.float64).dtype == "float64"
    assert locus.Buffer("host", 2, dtype=np.dtype("int16")).dtype == "int16"
    assert locus.Buffer("host", 2, dtype=float).dtype == "float64"
    assert locus.Buffer("host", 2).dtype == "float32"


def test_float16_fill_is_rounded_like_numpy():
    b = locus.Buffer("host", 4, dtype="float16", fill=3.1415)
    assert b.to_numpy()[0] == np.float16(3.1415)


def test_shapes(location):
    b = locus.Buffer(location, (4, 5), dtype="int32", fill=7)
    assert b.shape == (4, 5) and b.size == 20 and b.nbytes == 80 and len(b) == 4
    a = b.to_numpy()
    assert a.shape == (4, 5) and np.all(a == 7)


def test_numpy_round_trip_both_ways(location):
    src = np.linspace(0, 1, 10_001, dtype=np.float64)
    b = locus.Buffer.from_dlpack(src).copy(location)  # numpy -> locus
    np.testing.assert_array_equal(b.to_numpy(), src)  # locus -> numpy
    np.testing.assert_array_equal(np.asarray(b.access("host")), src)
    np.testing.assert_array_equal(np.array(b.to_list()), src)


def test_copy_and_move_between_every_pair(location):
    src = np.arange(1000, dtype=np.uint32)
    b = locus.Buffer.from_dlpack(src).copy(location)
    for other in locus.available():
        c = b.copy(other)
        assert c.location == other
        np.testing.assert_array_equal(c.to_numpy(), src)
        c.move_to(location)
        assert c.location == location
        assert [l for l, valid in c.replicas() if valid] == [location]
        np.testing.assert_array_equal(c.to_numpy(), src)


def test_fill_writes_where_the_data_is(location):
    b = locus.Buffer(location, 100, dtype="int64", fill=1)
    b.fill(-5)
    assert b.to_list() == [-5] * 100


def test_repr_names_location_and_replicas(location):
    b = locus.Buffer(location, 3)
    assert location in repr(b)
    assert "Handle" in repr(b.access("host"))
