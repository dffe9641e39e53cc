"""Each technology's own handle on an access: OpenMP's device pointer and device number,
and WebGPU's honest answer (no cross-instance sharing; the path is a host access: the
buffer mapped in place on unified memory, a host copy elsewhere)."""

import numpy as np
import pytest

import locus


def test_openmp_handles_name_the_device_pointer_and_number(location):
    b = locus.Buffer.from_array(np.arange(64, dtype=np.float64)).copy(location)
    with b.access(location) as h:
        if not location.startswith("openmp:"):
            with pytest.raises(AttributeError, match="not OpenMP memory"):
                h.openmp
            return
        o = h.openmp
        assert o["size"] == 64 * 8 and isinstance(o["device"], int)
        if h.ptr is not None:  # the initial device: the device pointer is the host address
            assert o["ptr"] == h.ptr
            np.testing.assert_array_equal(np.asarray(h), np.arange(64, dtype=np.float64))


def test_webgpu_says_why_it_cannot_share_and_what_to_do(location):
    b = locus.Buffer(location, 16, dtype="float32", fill=1.5)
    with b.access(location) as h:
        with pytest.raises(AttributeError, match="cannot be shared with another WebGPU instance"):
            h.webgpu
    with b.access("host") as h:  # the documented path: a host access, zero-copy to numpy
        np.testing.assert_array_equal(np.asarray(h), np.full(16, 1.5, dtype=np.float32))
        if location.startswith("webgpu") and h.in_place:
            # Unified memory (lavapipe here): numpy reads the WebGPU buffer itself.
            assert h.memory_location == location and b.bytes_moved == 0
