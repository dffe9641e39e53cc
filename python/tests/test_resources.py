"""Memory resources from Python: a counted pool as a location's default resource."""

import numpy as np
import pytest

import locus


def test_pool_serves_new_buffers_and_counts_them(location):
    described = locus.use_pool(location, initial_size=1 << 20)
    try:
        assert "pool" in described
        stats = locus.memory_statistics(location)
        assert stats["resource"] == described
        assert stats["current_bytes"] == 0 and stats["pool_bytes"] >= 1 << 20
        a = locus.Buffer(location, 1000, dtype="float32", fill=2.0)
        b = locus.Buffer(location, 300, dtype="uint16", fill=7)
        stats = locus.memory_statistics(location)
        assert stats["current_bytes"] == 1000 * 4 + 300 * 2
        assert stats["current_count"] == 2
        # The data is right wherever it is read.
        assert a.to_list() == [2.0] * 1000
        assert np.array_equal(b.to_numpy(), np.full(300, 7, dtype=np.uint16))
        del a, b
        stats = locus.memory_statistics(location)
        assert stats["current_bytes"] == 0
        assert stats["peak_bytes"] == 1000 * 4 + 300 * 2
        assert stats["total_count"] == 2
    finally:
        locus.use_upstream(location)
    stats = locus.memory_statistics(location)
    assert stats["resource"].startswith("upstream") and "current_bytes" not in stats


def test_pool_maximum_is_a_clear_error(location):
    locus.use_pool(location, initial_size=1 << 20, maximum_size=1 << 20)
    try:
        keep = locus.Buffer(location, 1 << 18, dtype="float32")  # the whole pool
        # Out of memory is Python's MemoryError (RMM's Python does the same), with the
        # location and the reason in the message.
        with pytest.raises(
            MemoryError,
            match=rf"{location}: out of memory: pool could not provide \d+ bytes \(it cannot grow",
        ):
            locus.Buffer(location, 1 << 18, dtype="float32")
        del keep
        locus.Buffer(location, 1 << 18, dtype="float32")  # fits again
    finally:
        locus.use_upstream(location)


def test_bad_location_is_a_value_error():
    with pytest.raises(ValueError):
        locus.use_pool("nowhere:3")
