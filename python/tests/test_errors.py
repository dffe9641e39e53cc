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
