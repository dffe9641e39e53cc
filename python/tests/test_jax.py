"""JAX on the CPU as a client nobody here wrote: DLPack both ways, zero-copy, on every
location whose data the host can see (a host access serves it in place or from a host
replica). JAX is installed by scripts/test.sh; where it is missing the tests skip,
saying so (pytest -rs). Arrays are made on JAX's CPU device even where JAX has a GPU
(its default device there); test_gpu_clients.py covers JAX's CUDA arrays."""

import gc

import numpy as np
import pytest

import locus

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install jax)")
jnp = pytest.importorskip("jax.numpy")


def test_jax_reads_a_locus_buffer_zero_copy(location):
    data = np.arange(4096, dtype=np.float32) * 0.5
    b = locus.Buffer.from_array(data.copy()).copy(location)
    h = b.access("host")
    a = jnp.from_dlpack(h)
    assert a.dtype == jnp.float32 and a.shape == (4096,)
    assert a.unsafe_buffer_pointer() == h.ptr, "JAX views locus's memory, no copy"
    np.testing.assert_array_equal(np.asarray(a), data)
    # JAX computes on it; the array outlives the handle and the buffer (the capsule
    # keeps the memory).
    total = float(jnp.sum(a * 2.0))
    del h, b
    gc.collect()
    np.testing.assert_array_equal(np.asarray(a), data)
    assert total == pytest.approx(float(np.sum(data * 2.0)))


def test_locus_adopts_a_jax_array_zero_copy(location):
    with jax.default_device(jax.devices("cpu")[0]):
        x = jnp.arange(1000, dtype=jnp.int32) * 3
    b = locus.Buffer.from_dlpack(x)
    assert b.location == "host" and b.dtype == "int32"
    with b.access("host") as h:
        assert h.ptr == x.unsafe_buffer_pointer(), "locus adopts JAX's memory, no copy"
    want = np.arange(1000, dtype=np.int32) * 3
    del x
    gc.collect()
    # Moved to `location` and read back: the data went through locus's routes.
    c = b.copy(location)
    np.testing.assert_array_equal(c.to_numpy(), want)
    np.testing.assert_array_equal(b.to_numpy(), want)
