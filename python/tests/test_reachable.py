"""`locus.Memory.reachable_from` (issue 67, item 1): memory asked for by the locations
that must use it in place. Each pair of this machine's locations gets memory both use in
place, which numpy then reads in place where the host is one of them, or a ValueError
naming the pair."""

import itertools

import numpy as np
import pytest

import locus

from conftest import LOCATIONS


@pytest.mark.parametrize("pair", list(itertools.combinations(LOCATIONS, 2)), ids="+".join)
def test_a_pair_gets_memory_both_use_or_an_error_naming_it(pair):
    try:
        m = locus.Memory.reachable_from(list(pair), 4096)
    except ValueError as e:
        text = str(e)
        assert all(at in text for at in pair), text
        with pytest.raises(ValueError):
            locus.reachable_kind(list(pair))
        return
    for at in pair:
        assert m.is_accessible_from(at), (pair, at)
    reach = locus.reachable_kind(list(pair))
    assert reach["location"] == m.location and reach["location"] in pair
    m.write(bytes(range(256)) * 16)
    assert m.read(4096) == bytes(range(256)) * 16


def test_the_host_and_a_cpu_device_share_memory_numpy_reads_in_place():
    cpu_devices = [at for at in LOCATIONS if at.split(":")[0] in ("openmp", "sycl")]
    for at in cpu_devices:
        m = locus.Memory.reachable_from(["host", at], 64)
        m.write(b"\x07" * 64)
        assert np.frombuffer(m.read(64), dtype=np.uint8).sum() == 7 * 64


def test_bad_requests_say_what_to_do():
    with pytest.raises(ValueError, match="no locations given"):
        locus.Memory.reachable_from([], 64)
    with pytest.raises(ValueError):
        locus.Memory.reachable_from(["host", "nowhere:3"], 64)


def test_prefetch_moves_usm_shared_memory_and_says_why_not_elsewhere():
    for at in LOCATIONS:
        m = locus.Memory(at, 4096)
        m.write(b"\x05" * 4096)
        event, moved, why = m.prefetch(at)
        event.wait()
        assert not moved and at in why, (at, why)   # default memory does not migrate
        assert m.read(4096) == b"\x05" * 4096
    for at in [a for a in LOCATIONS if a.startswith("sycl")]:
        shared = locus.Memory.from_resource(locus.mr.UpstreamMemoryResource(at, "usm-shared"), 4096)
        shared.write(b"\x06" * 4096)
        event, moved, why = shared.prefetch(at, 1024, offset=1024)
        event.wait()
        assert moved, why
        assert shared.read(4096) == b"\x06" * 4096
        _, moved, why = shared.prefetch("host")
        assert not moved and "to its device only" in why
