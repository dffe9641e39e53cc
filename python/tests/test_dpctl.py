"""dpctl, a client nobody here wrote (installed with the SYCL runtime), reads and writes a
locus SYCL buffer in place through `__sycl_usm_array_interface__`: the handle's USM
pointer, shape and type, and a `dpctl.SyclQueue` on locus's own queue (the context that
owns the allocation). Zero-copy is proven by dpctl's pointer being the handle's.
dpnp, built on dpctl, has its own tests (`test_dpnp.py`)."""

import gc

import numpy as np
import pytest

import locus

dpctl = pytest.importorskip("dpctl", reason="dpctl is not installed (scripts/test.sh installs it)")
dpm = pytest.importorskip("dpctl.memory")

SYCL = [l for l in locus.available() if l.startswith("sycl:")]


@pytest.mark.parametrize("sycl_location", SYCL)
def test_dpctl_reads_and_writes_a_locus_buffer_in_place(sycl_location):
    n = 1000
    b = locus.Buffer.from_array(np.arange(n, dtype=np.float32)).copy(sycl_location)
    with b.access(sycl_location) as h:
        iface = h.__sycl_usm_array_interface__
        assert iface["shape"] == (n,) and iface["typestr"] == "<f4" and iface["data"][1] is True
        assert isinstance(iface["syclobj"], dpctl.SyclQueue)
        m = dpm.as_usm_memory(h)
        assert m._pointer == iface["data"][0], "dpctl wraps locus's allocation, no copy"
        assert m.get_usm_type() in ("device", "shared", "host")
        got = np.frombuffer(m.copy_to_host(), dtype=np.float32)
        np.testing.assert_array_equal(got, np.arange(n, dtype=np.float32))
    # dpctl writes through the interface of a write access; locus sees it.
    new = (np.arange(n, dtype=np.float32) * -2.0).tobytes()
    with b.access_mut(sycl_location) as h:
        m = dpm.as_usm_memory(h)
        assert h.__sycl_usm_array_interface__["data"][1] is False
        m.copy_from_host(new)
        del m
    np.testing.assert_array_equal(b.to_numpy(), np.arange(n, dtype=np.float32) * -2.0)
    gc.collect()


def test_other_memory_has_no_sycl_interface(location):
    b = locus.Buffer(location, 4, dtype="float32")
    with b.access(location) as h:
        if location.startswith("sycl:"):
            assert "syclobj" in h.__sycl_usm_array_interface__
        else:
            with pytest.raises(AttributeError, match="not SYCL USM"):
                h.__sycl_usm_array_interface__
