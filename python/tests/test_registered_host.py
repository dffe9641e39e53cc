"""Host memory registered in place (issue 45, item 1): a numpy array adopted with
`Buffer.from_array(a, register=True)` is pinned where it lies for the runtimes whose
copies need page-locked memory (CUDA, HIP) while locus uses it, and is the same array:
moves to every location and back land in it. Elsewhere the same code works, the memory
used as it is."""

import numpy as np
import pytest

import locus


def test_a_registered_array_moves_to_every_location_and_back_in_place(location):
    n = 1 << 20
    a = np.arange(n, dtype=np.float32)
    b = locus.Buffer.from_array(a, register=True)
    assert b.location == "host"
    there = b.copy(location)  # from the registered array, where it lies
    np.testing.assert_array_equal(there.to_numpy(), np.arange(n, dtype=np.float32))
    c = locus.Buffer(location, n, dtype="float32", fill=2.0)
    b.copy_from(c)  # into it (asynchronous, HAMR's default: numpy reads it after a sync)
    b.synchronize()
    assert (a == 2.0).all(), "the copy did not land in the registered array itself"


def test_register_is_refused_where_there_is_nothing_to_pin():
    a = np.arange(10, dtype=np.float32)
    with pytest.raises(ValueError, match="copy=True"):
        locus.Buffer.from_array(a, copy=True, register=True)
    b = locus.Buffer.from_array(np.arange(0, dtype=np.float32), register=True)
    assert b.size == 0
