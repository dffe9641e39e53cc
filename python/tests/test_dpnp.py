"""dpnp, a client nobody here wrote (installed from PyPI by scripts/test.sh), on a locus
SYCL buffer in place, both ways:

- `dpnp.from_dlpack(handle)` (DLPack's oneAPI device type) and `dpnp.asarray(handle)`
  (the handle's `__usm_ndarray__` and `sycl_queue`) view locus's USM allocation: dpnp's
  data pointer is the handle's, its values are the buffer's, and dpnp's own kernels
  write it;
- `locus.Buffer.from_dlpack(dpnp_array)` adopts dpnp's allocation, same address.

No test waits on dpnp's queue: a user does not, and locus orders its next use of the
buffer after what was queued through a write handle (locus's own queue, which
`asarray` computes on, and dpctl's cached queue of the device, which `from_dlpack`
uses).

`asarray` failed on the code before `__usm_ndarray__`: dpnp copied, because the queue
dpctl makes from `__sycl_usm_array_interface__` is a new object each time and dpnp
compares queues by identity. `from_dlpack` crashed the interpreter on the code before
the export spelled out its strides (dpnp reads `strides[i]` without a null check)."""

import gc

import numpy as np
import pytest

import locus

dpnp = pytest.importorskip("dpnp", reason="dpnp is not installed (scripts/test.sh installs it)")

SYCL = [l for l in locus.available() if l.startswith("sycl:")]


def dpnp_pointer(x):
    """The USM address of a dpnp array's first element."""
    return x.get_array().usm_data._pointer + x.get_array()._element_offset * x.itemsize


@pytest.mark.parametrize("sycl_location", SYCL)
@pytest.mark.parametrize("protocol", ["from_dlpack", "asarray"])
def test_dpnp_reads_and_writes_a_locus_buffer_in_place(sycl_location, protocol):
    n = 1000
    want = np.arange(n, dtype=np.float32)
    b = locus.Buffer.from_array(want).copy(sycl_location)
    take = dpnp.from_dlpack if protocol == "from_dlpack" else dpnp.asarray
    with b.access(sycl_location) as h:
        address = h.__sycl_usm_array_interface__["data"][0]
        x = take(h)
        assert dpnp_pointer(x) == address, "dpnp views locus's allocation, no copy"
        assert x.shape == (n,) and x.dtype == np.float32
        np.testing.assert_array_equal(dpnp.asnumpy(x), want)
        assert float(dpnp.sum(x)) == float(want.sum())
        del x
    with b.access_mut(sycl_location) as h:
        x = take(h)
        assert dpnp_pointer(x) == address
        x *= 3.0  # dpnp's own kernel, on locus's memory
        x += dpnp.arange(n, dtype=dpnp.float32, sycl_queue=x.sycl_queue)
        del x
    np.testing.assert_array_equal(b.to_numpy(), want * 3.0 + want)
    gc.collect()


@pytest.mark.parametrize("sycl_location", SYCL)
@pytest.mark.parametrize("protocol", ["from_dlpack", "asarray"])
def test_a_read_access_is_read_only_in_dpnp(sycl_location, protocol):
    take = dpnp.from_dlpack if protocol == "from_dlpack" else dpnp.asarray
    b = locus.Buffer(sycl_location, 8, dtype="float32", fill=1.0)
    with b.access(sycl_location) as h:
        x = take(h)
        assert not x.flags.writable, "the read-only flag reaches dpnp"
        with pytest.raises(ValueError):
            x[0] = 2.0
        del x
    with b.access_mut(sycl_location) as h:
        x = take(h)
        assert x.flags.writable
        del x
    np.testing.assert_array_equal(b.to_numpy(), np.ones(8, dtype=np.float32))


@pytest.mark.parametrize("sycl_location", SYCL)
def test_asarray_computes_on_locus_queue(sycl_location):
    """Compute follows data: the array `asarray` makes is on the handle's queue (one
    object per handle), which is locus's queue of the device."""
    b = locus.Buffer(sycl_location, 16, dtype="int32", fill=4)
    with b.access_mut(sycl_location) as h:
        assert h.__usm_ndarray__ is h.__usm_ndarray__
        x = dpnp.asarray(h)
        assert x.sycl_queue is h.sycl_queue
        assert x.sycl_device == h.__sycl_usm_array_interface__["syclobj"].sycl_device
        x += 1
        del x
    np.testing.assert_array_equal(b.to_numpy(), np.full(16, 5, dtype=np.int32))


@pytest.mark.parametrize("sycl_location", SYCL)
def test_dpnp_tensor_takes_the_handle_without_a_copy(sycl_location):
    """dpnp.tensor, the array-API layer under dpnp (dpctl.tensor before dpctl 0.22):
    `asarray` returns the handle's usm_ndarray itself, `from_dlpack` a view of it."""
    import dpnp.tensor as dpt

    b = locus.Buffer.from_array(np.arange(64, dtype=np.int64)).copy(sycl_location)
    with b.access(sycl_location) as h:
        address = h.__sycl_usm_array_interface__["data"][0]
        assert dpt.asarray(h) is h.__usm_ndarray__
        for t in (dpt.asarray(h), dpt.from_dlpack(h)):
            assert t.usm_data._pointer + t._element_offset * t.itemsize == address
            np.testing.assert_array_equal(dpt.asnumpy(t), np.arange(64, dtype=np.int64))
            del t


@pytest.mark.parametrize("sycl_location", SYCL)
def test_a_usm_ndarray_keeps_the_memory_after_handle_and_buffer_go(sycl_location):
    b = locus.Buffer(sycl_location, 32, dtype="float32", fill=5.0)
    h = b.access(sycl_location)
    u = h.__usm_ndarray__
    h.close()
    del h, b
    gc.collect()
    np.testing.assert_array_equal(dpnp.asnumpy(dpnp.asarray(u)), np.full(32, 5.0, dtype=np.float32))


@pytest.mark.parametrize("sycl_location", SYCL)
def test_read_handles_of_one_allocation_share_dpctl_s_memory_object(sycl_location):
    """Read handles of one allocation hand dpctl one memory object (made once per buffer:
    `dpctl.memory.as_usm_memory` was about 6 us of the 17 of `dpnp.asarray(handle)`);
    write handles make their own, which keeps the write declared while the array lives;
    a resize lets it go. Each read handle made its own on the code before."""
    b = locus.Buffer(sycl_location, 16, dtype="float32", fill=1.0)
    first = b.access(sycl_location).__usm_ndarray__
    second = b.access(sycl_location).__usm_ndarray__
    assert first is not second and first.usm_data is second.usm_data
    assert not second.flags.writable
    with b.access_mut("host") as h:
        np.asarray(h)[:] = 7.0
    third = b.access(sycl_location).__usm_ndarray__
    assert third.usm_data is first.usm_data
    np.testing.assert_array_equal(dpnp.asnumpy(dpnp.asarray(third)), np.full(16, 7.0, np.float32))
    with b.access_mut(sycl_location) as h:
        w = h.__usm_ndarray__
        assert w.usm_data is not first.usm_data and w.flags.writable
        del w
    b.resize(32, 2.0)
    fourth = b.access(sycl_location).__usm_ndarray__
    assert fourth.usm_data is not first.usm_data and fourth.shape == (32,)
    want = np.concatenate([np.full(16, 7.0, np.float32), np.full(16, 2.0, np.float32)])
    np.testing.assert_array_equal(dpnp.asnumpy(dpnp.asarray(fourth)), want)
    del b
    gc.collect()
    # The arrays made before the resize keep the old allocation and its data.
    np.testing.assert_array_equal(dpnp.asnumpy(dpnp.asarray(first)), np.full(16, 7.0, np.float32))


def test_a_handle_elsewhere_has_no_sycl_queue():
    b = locus.Buffer("host", 4, dtype="float32")
    with b.access("host") as h:
        assert not hasattr(h, "sycl_queue")
        assert not hasattr(h, "__usm_ndarray__")
        assert not hasattr(h, "__sycl_usm_array_interface__")


@pytest.mark.parametrize("shape", [(6, 5), (2, 3, 4)])
def test_dpnp_sees_the_shape_of_a_locus_view(shape):
    location = SYCL[0] if SYCL else pytest.skip("no SYCL location")
    want = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    b = locus.Buffer.from_array(want).copy(location)
    with b.access(location) as h:
        x = dpnp.from_dlpack(h)
        assert x.shape == shape
        np.testing.assert_array_equal(dpnp.asnumpy(x), want)
        del x


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8"])
def test_locus_adopts_a_dpnp_array_in_place(dtype):
    if not SYCL:
        pytest.skip("no SYCL location")
    x = dpnp.arange(100, dtype=dtype)
    if x.sycl_device.has_aspect_fp64 is False and dtype == "float64":
        pytest.skip("the SYCL device has no f64")
    b = locus.Buffer.from_dlpack(x)
    assert b.location.startswith("sycl:"), b.location
    with b.access(b.location) as h:
        assert h.__sycl_usm_array_interface__["data"][0] == dpnp_pointer(x), "no copy"
    np.testing.assert_array_equal(b.to_numpy(), np.arange(100, dtype=dtype))
    # A locus write is seen by dpnp (same memory).
    with b.access_mut("host") as h:
        np.asarray(h)[:] = 7
    np.testing.assert_array_equal(dpnp.asnumpy(x), np.full(100, 7, dtype=dtype))


def test_adopting_a_dpnp_array_waits_for_its_pending_kernels():
    """dpnp's kernels are asynchronous: `Buffer.from_dlpack` hands dpnp locus's queue as
    DLPack's `stream`, dpnp makes it wait for them, and what locus reads is finished.
    Failed on the code before (the CI run of 2026-11-25 read a dpnp.arange still being
    written; here twenty queued in-place adds, read back half done)."""
    if not SYCL:
        pytest.skip("no SYCL location")
    n = 1 << 22
    x = dpnp.zeros(n, dtype=dpnp.float32)
    for _ in range(20):
        x += 1.0
    b = locus.Buffer.from_dlpack(x)
    np.testing.assert_array_equal(b.to_numpy(), np.full(n, 20.0, dtype=np.float32))


@pytest.mark.parametrize("sycl_location", SYCL)
@pytest.mark.parametrize("protocol", ["asarray", "from_dlpack"])
def test_dpnp_writes_through_a_handle_land_before_locus_reads(sycl_location, protocol):
    # As a dpnp user writes it: no wait of their own, the handle closed, then a read.
    # On the code before, 1 Mi floats, 20 runs: 16-18 stale reads after `asarray`,
    # 7-13 after `from_dlpack`.
    take = dpnp.asarray if protocol == "asarray" else dpnp.from_dlpack
    n = 1 << 20
    stale = 0
    for _ in range(20):
        b = locus.Buffer(sycl_location, n, dtype="float32", fill=1.0)
        with b.access_mut(sycl_location) as h:
            x = take(h)
            x *= 3.0
            del x
        if not (b.to_numpy() == 3.0).all():
            stale += 1
    assert stale == 0, f"{stale} of 20 reads were stale"
