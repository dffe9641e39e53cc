"""Bad input gets a clear error naming what is wrong and what to do."""

import numpy as np
import pytest

import locus


def test_unknown_dtype():
    with pytest.raises(TypeError, match="supported dtypes are float16, float32"):
        locus.Buffer("host", 4, dtype="complex64")
    with pytest.raises(TypeError, match="do not hold"):
        locus.Buffer.from_dlpack(np.zeros(3, dtype=np.complex64))
    with pytest.raises(TypeError, match="do not hold"):
        locus.Buffer.from_array(np.zeros(3, dtype=">f4"))


def test_fill_out_of_range():
    with pytest.raises(TypeError, match="does not fit dtype int8"):
        locus.Buffer("host", 3, dtype="int8", fill=1000)


def test_unknown_location_names():
    with pytest.raises(ValueError, match="gpu"):
        locus.Buffer("gpu:0", 3)
    with pytest.raises(locus.LocusError, match="opencl"):
        locus.Buffer("opencl:99", 3)
    if "cuda:0" not in locus.available():
        with pytest.raises(locus.LocusError, match="cuda"):
            locus.Buffer("cuda:0", 3)


def test_non_contiguous_needs_an_explicit_copy():
    a = np.arange(20.0)[::2]
    with pytest.raises(BufferError, match="non-contiguous.*copy=True"):
        locus.Buffer.from_dlpack(a)
    with pytest.raises(BufferError, match="non-contiguous"):
        locus.Buffer.from_array(a)
    b = locus.Buffer.from_dlpack(a, copy=True)
    np.testing.assert_array_equal(b.to_numpy(), a)
    t = np.arange(12, dtype=np.int32).reshape(3, 4).T
    c = locus.Buffer.from_array(t, copy=True)
    assert c.shape == (4, 3)
    np.testing.assert_array_equal(c.to_numpy(), t)


def test_copy_false_is_honoured():
    a = np.arange(4.0)
    b = locus.Buffer.from_dlpack(a, copy=False)
    a[0] = 9.0
    assert b.to_list()[0] == 9.0
    c = locus.Buffer.from_dlpack(a, copy=True)
    a[1] = 9.0
    assert c.to_list()[1] == 1.0


def test_read_only_producers_stay_read_only():
    a = np.arange(4.0)
    a.flags.writeable = False
    b = locus.Buffer.from_array(a)
    assert b.readonly
    with pytest.raises(ValueError, match="read-only"):
        b.access_mut("host")
    with pytest.raises(ValueError, match="read-only"):
        b.fill(1.0)
    assert b.copy().readonly is False


def test_not_an_array():
    with pytest.raises(TypeError, match="neither __dlpack__ nor an array interface"):
        locus.Buffer.from_dlpack(object())
    with pytest.raises(TypeError):
        locus.Buffer("host", "ten")


def test_a_shape_whose_size_overflows_is_refused():
    # Before: accepted, with size 0 and len 2**32.
    for shape, dtype in [((1 << 32, 1 << 32), "uint8"), ((1 << 62,), "float64"), ((1 << 40,) * 3, "int8")]:
        with pytest.raises(ValueError, match="more bytes than memory can address"):
            locus.Buffer("host", shape, dtype=dtype)


class _Interface:
    def __init__(self, data, shape):
        self.__array_interface__ = {"data": (data, False), "shape": shape, "typestr": "<f4", "version": 3}


def test_a_null_data_pointer_is_refused():
    # Before: a segmentation fault (numpy itself refuses such an interface).
    with pytest.raises(BufferError, match="null data pointer"):
        locus.Buffer.from_array(_Interface(0, (4,)))
    empty = locus.Buffer.from_array(_Interface(0, (0,)))
    assert empty.size == 0 and empty.to_numpy().shape == (0,)


def test_huge_requests_through_a_pool_are_errors_not_panics(location):
    # Before: pyo3_runtime.PanicException (a BaseException) from the pool's size classes.
    locus.use_pool(location, 1 << 20, 1 << 26)
    try:
        for n in [(1 << 62) - 1, 1 << 61, (1 << 63) // 4 - 1]:
            with pytest.raises((MemoryError, ValueError, locus.LocusError)):
                locus.Buffer(location, n, dtype="uint8")
        b = locus.Buffer(location, 1000, dtype="uint8", fill=7)
        assert int(b.to_numpy().sum()) == 7000
    finally:
        locus.use_upstream(location)


def test_a_panic_is_a_locus_error():
    # Every entry point runs inside the guard this goes through: a bug that panics is an
    # ordinary exception that `except Exception` catches, not a PanicException.
    from locus import _locus

    with pytest.raises(locus.LocusError, match="internal error in locus: boom"):
        _locus._panic_for_tests("boom")
