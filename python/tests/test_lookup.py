"""`locus.lookup(address)` (issue 45, item 3) as a user calls it: an address locus handed
out — a Memory's, a numpy view's data pointer inside a host Buffer, an adopted array's —
names its location, allocation, offset and kind; freed or foreign memory is a ValueError
naming the address. OpenCL and WebGPU buffers are objects, not addresses."""

import numpy as np
import pytest

import locus


def test_every_address_of_a_memory_names_it(location):
    m = locus.Memory(location, 10_000)
    if location.split(":")[0] in ("opencl", "webgpu"):
        pytest.skip(f"{location}: buffer objects, no addresses to look up")
    for offset in (0, 1, 4096, 9_999):
        info = locus.lookup(m.address + offset)
        assert info["location"] == location
        assert (info["base"], info["nbytes"], info["offset"]) == (m.address, 10_000, offset)
        assert info["resource"] is None
    kind = "usm-device" if location.startswith("sycl") else "default"
    assert locus.lookup(m.address)["kind"] == kind
    base = m.address
    del m
    try:
        info = locus.lookup(base + 1)
    except ValueError as e:
        assert hex(base + 1) in str(e)
    else:  # another allocation made since may hold it: not the freed one
        assert (info["base"], info["nbytes"]) != (base, 10_000)


def test_a_numpy_array_over_a_host_buffer_points_into_it():
    b = locus.Buffer("host", 1000, dtype="float32", fill=1.0)
    a = np.from_dlpack(b)  # in place at the host
    pointer = a.__array_interface__["data"][0]
    info = locus.lookup(pointer + 4 * 10)
    assert info["location"] == "host"
    assert info["offset"] == pointer + 40 - info["base"]
    assert info["nbytes"] >= 4000


def test_a_registered_array_is_looked_up_where_it_lies():
    a = np.zeros(1 << 16, dtype=np.uint8)
    b = locus.Buffer.from_array(a, register=True)
    pointer = a.__array_interface__["data"][0]
    info = locus.lookup(pointer + 100)
    assert (info["location"], info["base"], info["offset"]) == ("host", pointer, 100)
    del b


def test_memory_from_a_pool_names_the_pool(location):
    if location.split(":")[0] in ("opencl", "webgpu"):
        pytest.skip(f"{location}: buffer objects, no addresses to look up")
    pool = locus.mr.PoolMemoryResource(
        locus.mr.UpstreamMemoryResource(location), initial_pool_size=1 << 20
    )
    m = locus.Memory.from_resource(pool, 3000)
    info = locus.lookup(m.address + 2999)
    assert (info["location"], info["nbytes"], info["offset"]) == (location, 3000, 2999)
    assert "pool" in info["resource"]


def test_an_address_locus_never_handed_out_is_a_value_error():
    a = np.zeros(16)
    pointer = a.__array_interface__["data"][0]
    with pytest.raises(ValueError, match="no live allocation"):
        locus.lookup(pointer)


SYCL = [l for l in locus.available() if l.startswith("sycl:")]


@pytest.mark.parametrize("sycl_location", SYCL)
def test_a_dpctl_allocation_is_asked_of_the_sycl_runtime(sycl_location):
    """USM dpctl allocated on a queue of its own (issue 64, item 3): locus never saw it,
    the SYCL runtime names its location and kind; SYCL gives no range."""
    dpctl = pytest.importorskip("dpctl", reason="dpctl is not installed")
    dpm = pytest.importorskip("dpctl.memory")
    b = locus.Buffer(sycl_location, 4, dtype="float32")
    with b.access(sycl_location) as h:
        device = h.__sycl_usm_array_interface__["syclobj"].sycl_device
    queue = dpctl.SyclQueue(device)  # the application's own queue, dpctl's default context
    for make, kind in (
        (dpm.MemoryUSMDevice, "usm-device"),
        (dpm.MemoryUSMShared, "usm-shared"),
        (dpm.MemoryUSMHost, "usm-host"),
    ):
        theirs = make(4096, queue=queue)
        info = locus.lookup(theirs._pointer + 100)
        assert info["location"] == sycl_location, (kind, info)
        assert info["kind"] == kind
        assert info["known_to_locus"] is False
        assert (info["base"], info["nbytes"], info["offset"]) == (None, None, None)
        del theirs


def _cuda_location_of(device_id):
    at = f"cuda:{device_id}"
    if at not in locus.available():
        pytest.skip(f"locus has no {at} here")
    return at


def test_a_cupy_allocation_is_asked_of_the_cuda_driver():
    """CuPy's device and pinned memory (its pools' blocks, which locus never saw): the
    driver names the device, the range that holds the block, and the kind."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        x = cupy.arange(1000, dtype=cupy.float64)
    except Exception as e:  # CuPy installed, no GPU
        pytest.skip(f"CuPy has no GPU here: {e}")
    at = _cuda_location_of(x.device.id)
    info = locus.lookup(x.data.ptr + 8)
    assert (info["location"], info["kind"], info["known_to_locus"]) == (at, "default", False)
    assert info["base"] <= x.data.ptr and x.data.ptr + 8000 <= info["base"] + info["nbytes"]
    assert info["offset"] == x.data.ptr + 8 - info["base"]
    pinned = cupy.cuda.alloc_pinned_memory(4096)
    info = locus.lookup(pinned.ptr)
    assert (info["location"], info["kind"]) == (at, "pinned-host")


def test_a_torch_tensor_is_asked_of_the_cuda_driver():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no GPU here")
    t = torch.zeros(1 << 16, device="cuda")
    at = _cuda_location_of(t.device.index)
    info = locus.lookup(t.data_ptr() + 4)
    assert (info["location"], info["kind"], info["known_to_locus"]) == (at, "default", False)
    assert info["base"] <= t.data_ptr() < info["base"] + info["nbytes"]
