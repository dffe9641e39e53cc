"""The GPU libraries people hand memory to locus from, and take it back with: CuPy and
PyTorch, where installed and where locus has their GPU (scripts/test.sh installs CuPy
when LOCUS_REQUIRE names cuda). Elsewhere these tests skip with the reason."""

import numpy as np
import pytest

import locus


def _gpu_locations(prefix):
    return [l for l in locus.available() if l.startswith(prefix)]


def _cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    if not _gpu_locations("cuda") and not _gpu_locations("hip"):
        pytest.skip("locus has no CUDA or HIP device here")
    return cupy


def test_cupy_array_in_and_out_without_a_copy():
    cupy = _cupy()
    x = cupy.arange(1 << 20, dtype=cupy.float32)
    x *= 2  # queued on CuPy's stream: locus must see it done (DLPack stream=)
    b = locus.Buffer.from_dlpack(x)
    assert b.location in locus.available()
    np.testing.assert_array_equal(b.to_numpy(), np.arange(1 << 20, dtype=np.float32) * 2)
    with b.access_mut(b.location) as h:
        y = cupy.from_dlpack(h)  # the same memory, back in CuPy
        assert y.data.ptr == x.data.ptr
        y += 1
    np.testing.assert_array_equal(b.to_numpy(), np.arange(1 << 20, dtype=np.float32) * 2 + 1)


def test_cupy_cuda_array_interface_names_its_device_and_stream():
    cupy = _cupy()
    with cupy.cuda.Stream(non_blocking=True):
        x = cupy.full(4096, 7, dtype=cupy.int32)  # pending on a non-default stream
        b = locus.Buffer.from_array(x)
    assert b.location == f"cuda:{x.device.id}"
    assert (b.to_numpy() == 7).all()


def test_torch_tensor_in_and_out():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available() or not (_gpu_locations("cuda") or _gpu_locations("hip")):
        pytest.skip("PyTorch or locus has no GPU here")
    t = torch.arange(1000, dtype=torch.float64, device="cuda")
    t.mul_(3)
    b = locus.Buffer.from_dlpack(t)
    np.testing.assert_array_equal(b.to_numpy(), np.arange(1000) * 3.0)
    back = torch.from_dlpack(b.access(b.location))
    assert back.data_ptr() == t.data_ptr()


def test_jax_gpu_arrays_in_and_out_without_a_copy():
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    jnp = pytest.importorskip("jax.numpy")
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus or not _gpu_locations("cuda"):
        pytest.skip("JAX or locus has no CUDA GPU here")
    n = 1 << 16
    want = np.arange(n, dtype=np.float32) * 2
    x = jax.device_put(jnp.arange(n, dtype=jnp.float32), gpus[0]) * 2
    b = locus.Buffer.from_dlpack(x)  # JAX's CUDA memory, adopted in place
    assert b.location == f"cuda:{gpus[0].id}"
    with b.access(b.location) as h:
        assert h.__cuda_array_interface__["data"][0] == x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(b.to_numpy(), want)
    # And back: JAX views locus's CUDA memory.
    c = locus.Buffer(b.location, n, dtype="float32", fill=3.0)
    with c.access(c.location) as h:
        y = jnp.from_dlpack(h)
        assert y.unsafe_buffer_pointer() == h.__cuda_array_interface__["data"][0]
        assert float(jnp.sum(y)) == 3.0 * n


def test_cupy_on_its_own_stream_adopted_writes_before_locus_reads():
    """Issue 41: CuPy's kernel writes a locus buffer in place on the user's own stream,
    adopted by locus; no synchronize in user code; 20 runs, none stale."""
    cupy = _cupy()
    at = (_gpu_locations("cuda") or _gpu_locations("hip"))[0]
    stream = cupy.cuda.Stream(non_blocking=True)
    lq = locus.Queue.from_external(stream)
    assert lq.native(at) == stream.ptr
    n = 1 << 22
    want = np.arange(n, dtype=np.float32) * 3 + 1
    stale = 0
    for _ in range(20):
        b = locus.Buffer(at, n, dtype="float32", queue=lq)
        with b.access_mut(at) as h, stream:
            x = cupy.asarray(h)
            x[:] = cupy.arange(n, dtype=cupy.float32) * 3 + 1
            del x
        stale += not np.array_equal(b.to_numpy(), want)
    assert stale == 0, f"{at}: {stale} of 20 reads were stale"


def test_torch_on_its_own_stream_adopted_writes_before_locus_reads():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available() or not _gpu_locations("cuda"):
        pytest.skip("no CUDA device for PyTorch and locus here")
    at = "cuda:0"
    stream = torch.cuda.Stream()
    lq = locus.Queue.from_external(stream)
    n = 1 << 22
    b = locus.Buffer(at, n, dtype="float32", queue=lq)
    with b.access_mut(at) as h, torch.cuda.stream(stream):
        x = torch.from_dlpack(h)
        x.copy_(torch.arange(n, dtype=torch.float32, device="cuda") * 3 + 1)
        del x
    np.testing.assert_array_equal(b.to_numpy(), np.arange(n, dtype=np.float32) * 3 + 1)


def _stale_reads(at, write_through, runs=20):
    """A GPU library writes a new locus buffer in place through a write handle, its
    kernels queued and not finished; the handle closes and locus reads. No synchronize
    anywhere in user code, as users write it. Returns how many of `runs` reads were
    stale."""
    n = 1 << 22
    want = np.arange(n, dtype=np.float32) + 10
    stale = 0
    for _ in range(runs):
        b = locus.Buffer(at, n, dtype="float32")
        write_through(b, n)
        stale += not np.array_equal(b.to_numpy(), want)
    return stale


@pytest.mark.parametrize("how", ["from_dlpack", "from_dlpack on its own stream", "asarray"])
def test_cupy_writes_through_a_handle_land_before_locus_reads(how):
    """Issue 41: CuPy takes a write handle (DLPack, naming its current stream; or the
    CUDA array interface, on its default stream) and writes; locus's next read sees it."""
    cupy = _cupy()
    at = (_gpu_locations("cuda") or _gpu_locations("hip"))[0]

    def write(b, n):
        own = "own stream" in how
        stream = cupy.cuda.Stream(non_blocking=True) if own else cupy.cuda.Stream.null
        with stream, b.access_mut(at) as h:
            x = cupy.asarray(h) if how == "asarray" else cupy.from_dlpack(h)
            x[:] = cupy.arange(n, dtype=cupy.float32)
            for _ in range(10):
                x += 1
            del x

    stale = _stale_reads(at, write)
    assert stale == 0, f"{at}: {stale} of 20 reads after CuPy's {how} writes were stale"


@pytest.mark.parametrize("own_stream", [False, True], ids=["default stream", "own stream"])
def test_torch_writes_through_a_handle_land_before_locus_reads(own_stream):
    """Issue 41: PyTorch writes a write handle it took with torch.from_dlpack (which names
    its current stream to __dlpack__) on its default stream or its own; locus's next read
    sees the writes."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available() or not _gpu_locations("cuda"):
        pytest.skip("no CUDA device for PyTorch and locus here")
    at = "cuda:0"

    def write(b, n):
        stream = torch.cuda.Stream() if own_stream else torch.cuda.default_stream()
        with torch.cuda.stream(stream), b.access_mut(at) as h:
            x = torch.from_dlpack(h)
            x.copy_(torch.arange(n, dtype=torch.float32, device="cuda"))
            for _ in range(10):
                x.add_(1)
            del x

    stale = _stale_reads(at, write)
    assert stale == 0, f"{at}: {stale} of 20 reads after PyTorch's writes were stale"
