"""`Buffer.astype`: converting copies (numpy's `astype`, HAMR's converting copy) from every
location to every location, checked element by element against Rust's `as` semantics
written out in numpy: float to integer toward zero, saturating, NaN 0; integer to a
narrower integer wrapping; to a float rounding to nearest."""

import numpy as np
import pytest

import locus

LOCATIONS = locus.available()

FLOATS = np.array(
    [0.0, -0.0, 1.5, -2.5, 0.1, 255.5, -129.0, 1e10, -1e10, 3e38, 1e300, 1e-40,
     65504.0, 4294967296.0, 9.3e18, 1.9e19, np.nan, np.inf, -np.inf],
    dtype=np.float64,
)
INTS = np.array(
    [0, 1, -1, 127, 128, 255, 256, -129, 32767, 32768, 2**31 - 1, -(2**31), 2**32 - 1,
     2**53 + 1, 2**63 - 1, -(2**63), 16777217, -7_777_777_777_777],
    dtype=np.int64,
)

with np.errstate(over="ignore"):
    FLOATS32 = FLOATS.astype(np.float32)  # 1e300 and 3e38 become inf


def as_int(x, dtype):
    """Rust's `float as int`: toward zero, saturating at the type's bounds, NaN 0."""
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        t = np.trunc(x.astype(np.float64))
        t = np.where(np.isnan(t), 0.0, np.clip(t, float(info.min), float(info.max)))
    out = np.empty(len(x), dtype=dtype)
    for i, v in enumerate(t):  # exact for the bounds (float(2**63-1) rounds up)
        out[i] = info.max if v >= float(info.max) else info.min if v <= float(info.min) else int(v)
    return out


CASES = [
    ("float64", FLOATS, "float32", lambda x: x.astype(np.float32)),
    ("float32", FLOATS32, "float64", lambda x: x.astype(np.float64)),
    ("float64", FLOATS, "int32", lambda x: as_int(x, np.int32)),
    ("float32", FLOATS32, "uint8", lambda x: as_int(x, np.uint8)),
    ("float64", FLOATS, "uint64", lambda x: as_int(x, np.uint64)),
    ("int64", INTS, "int32", lambda x: x.astype(np.int32)),
    ("int64", INTS, "float32", lambda x: x.astype(np.float32)),
    ("int64", INTS, "float64", lambda x: x.astype(np.float64)),
    ("int64", INTS, "uint16", lambda x: x.astype(np.uint16)),
]


@pytest.mark.parametrize("src_location", LOCATIONS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}")
def test_astype_follows_as_everywhere(src_location, case):
    src_dtype, data, dst_dtype, reference = case
    with np.errstate(over="ignore", invalid="ignore"):
        want = reference(np.asarray(data, dtype=src_dtype))
    b = locus.Buffer.from_array(np.asarray(data, dtype=src_dtype)).copy(src_location)
    for dst_location in [None] + LOCATIONS:
        out = b.astype(dst_dtype, dst_location)
        assert out.dtype == dst_dtype
        assert out.location == (dst_location or src_location)
        got = out.to_numpy()
        assert got.tobytes() == want.tobytes(), (src_location, dst_location, got, want)
    np.testing.assert_array_equal(b.to_numpy(), np.asarray(data, dtype=src_dtype))


def test_astype_keeps_the_shape_and_sees_an_open_write():
    b = locus.Buffer("host", 6, dtype="float32", fill=1.0)
    b.resize(6)
    with b.access_mut("host") as h:
        np.asarray(h)[:] = np.arange(6, dtype=np.float32) + 0.75
        out = b.astype("int16")  # the open write handle's data is the newest
    np.testing.assert_array_equal(out.to_numpy(), np.arange(6, dtype=np.int16))


def test_astype_to_the_same_dtype_is_a_copy():
    b = locus.Buffer("host", 3, dtype="int32", fill=7)
    c = b.astype("int32")
    c.fill(1)
    np.testing.assert_array_equal(b.to_numpy(), [7, 7, 7])


def test_astype_refuses_bool_and_unknown_types_clearly():
    b = locus.Buffer("host", 3, dtype="float32")
    with pytest.raises(ValueError, match="bool"):
        b.astype("bool")
    with pytest.raises(TypeError, match="complex64"):
        b.astype("complex64")
    with pytest.raises(ValueError):
        b.astype("float64", "nowhere:0")
