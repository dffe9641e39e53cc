"""HAMR's Python module over locus (``locus.hamr``): HAMR's own numpy test unchanged, and
HAMR's buffers at every allocator this machine has, shared with numpy as HAMR users do."""

import os
import subprocess
import sys

import numpy as np
import pytest

import locus
import locus.hamr as hamr

from conftest import LOCATIONS

HERE = os.path.dirname(os.path.abspath(__file__))

# The allocator of each technology present here (HAMR's values, then locus's).
ALLOCATORS = {
    "host": hamr.buffer_allocator_malloc,
    "openmp": hamr.buffer_allocator_openmp,
    "opencl": hamr.buffer_allocator_opencl,
    "sycl": hamr.buffer_allocator_sycl,
    "webgpu": hamr.buffer_allocator_webgpu,
    "cuda": hamr.buffer_allocator_cuda,
    "hip": hamr.buffer_allocator_hip,
}
PRESENT = sorted({l.split(":")[0] for l in LOCATIONS} & set(ALLOCATORS))


def test_hamr_s_own_numpy_test_runs_unchanged():
    # `from hamr import *` as HAMR's test writes it: the module is locus.hamr.
    script = os.path.join(HERE, "hamr_upstream", "test_hamr_buffer_numpy_host.py")
    run = (
        "import sys, runpy, locus.hamr; sys.modules['hamr'] = locus.hamr; "
        f"runpy.run_path({script!r}, run_name='__main__')"
    )
    # Run from this directory: `python -c` puts the working directory first on the path,
    # and python/ holds locus's sources without the built extension.
    done = subprocess.run(
        [sys.executable, "-c", run], capture_output=True, text=True, timeout=300, cwd=HERE
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "TEST 1: Verify the result ... OK" in done.stderr
    assert "TEST 2: display the modified hamr::buffer ... OK" in done.stderr
    # Test 2's numpy writes reached the buffer sharing the array (31415 = 3.1415 * 10000),
    # printed as HAMR's C++ prints a double (`31415`).
    assert "31415" in done.stderr.split("TEST 2: display")[1]


@pytest.mark.parametrize("technology", PRESENT)
def test_buffers_at_every_allocator_are_shared_with_numpy(technology):
    alloc = ALLOCATORS[technology]
    buf = hamr.buffer_double(alloc, 100, 2.5)
    assert buf.size() == 100 and buf.get_allocator() == alloc
    h = buf.get_host_accessible()
    arr = np.array(h, copy=False)
    assert arr.dtype == np.float64 and np.all(arr == 2.5)
    arr *= 4  # writes through the host view reach the buffer
    del h, arr
    assert buf.locus_buffer().to_numpy().tolist() == [10.0] * 100
    assert str(buf).startswith("{10, 10")  # as HAMR's C++ prints a double
    # the data outlives the buffer while an array made from a handle holds it
    arr = np.array(buf.get_host_accessible(), copy=False)
    buf = None
    assert np.all(arr == 10.0)


@pytest.mark.parametrize("technology", PRESENT)
def test_a_buffer_moves_between_allocators(technology):
    buf = hamr.buffer_int(hamr.buffer_allocator_malloc, 16, 7)
    assert buf.move(ALLOCATORS[technology]) == 0
    assert buf.get_allocator() == ALLOCATORS[technology]
    assert np.array(buf.get_host_accessible(), copy=False).tolist() == [7] * 16


def test_zero_copy_from_numpy_shares_the_memory():
    arr = np.arange(10, dtype=np.float32)
    buf = hamr.buffer(arr)
    arr[3] = 42
    assert buf.locus_buffer().to_numpy()[3] == 42
    with pytest.raises(AttributeError, match="array interface"):
        hamr.buffer([1, 2, 3])
    with pytest.raises(TypeError, match="complex"):
        hamr.buffer(np.zeros(3, dtype=np.complex64))


def test_bad_allocators_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="invalid allocator 42"):
        hamr.buffer_float(42, 10)
    if "cuda" not in PRESENT:
        with pytest.raises(locus.LocusError, match="cuda:0"):
            hamr.buffer_float(hamr.buffer_allocator_cuda, 10, 1.0)
    assert hamr.get_allocator_name(hamr.buffer_allocator_openmp) == "openmp_allocator"


def test_the_guides_cupy_example_needs_a_gpu():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed (the guide's Python example needs a CUDA GPU)")
    buf = hamr.buffer_float(hamr.buffer_allocator_cuda, 16, 3.1415)
    arr = cupy.array(buf.get_cuda_accessible())
    assert float(arr.sum()) == pytest.approx(16 * 3.1415, rel=1e-5)


def test_a_hamr_buffer_made_with_a_pyopencl_queue_moves_on_it():
    """HAMR's stream form with a user's queue (issue 41.4): the buffer's moves go on the
    adopted queue, `async` by default, and `synchronize` waits for it."""
    cl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")
    if "opencl:0" not in locus.available():
        pytest.skip("no opencl:0 here")
    ours = locus.Queue().to_external("opencl:0")
    queue = cl.CommandQueue(ours.context)
    b = hamr.buffer_float(hamr.buffer_allocator_opencl, queue, 0, 100, 2.0)
    adopted = b.locus_buffer().queue
    assert adopted is not None and adopted.native("opencl:0") == queue.int_ptr
    assert b.locus_buffer().transfer == "async"
    b.move(hamr.buffer_allocator_malloc)
    b.move(hamr.buffer_allocator_opencl)
    assert b.synchronize() == 0
    np.testing.assert_array_equal(b.locus_buffer().to_numpy(), np.full(100, 2.0, np.float32))


def test_a_fortran_ordered_array_is_shared_not_copied():
    """The code before flattened in C order, which copies an F-ordered array: writes
    through the buffer never reached it."""
    a = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    buf = hamr.buffer(a)
    h = buf.get_host_accessible()
    v = np.array(h, copy=False)
    v[:] = 7.0
    del h, v
    assert np.all(a == 7.0)
    with pytest.raises(ValueError, match="not contiguous"):
        hamr.buffer(np.arange(10.0)[::2])


def test_str_prints_elements_as_hamr_s_cpp_does():
    """The code before printed a float32 as the double it widens to (3.1414999961853027)."""
    b = hamr.buffer_float(hamr.buffer_allocator_malloc, 3, 3.1415)
    assert str(b) == "{3.1415, 3.1415, 3.1415}"
    assert str(hamr.buffer_int(hamr.buffer_allocator_malloc, 2, 7)) == "{7, 7}"


@pytest.mark.parametrize("technology", PRESENT)
def test_hamr_s_storage_stream_and_access_members(technology, capfd):
    """The members HAMR's SWIG module exports from hamr_buffer.h (the code before lacked
    them: AttributeError)."""
    alloc = ALLOCATORS[technology]
    b = hamr.buffer_int(alloc, 4, 1)
    assert b.reserve(100) == 0 and b.size() == 4
    assert b.resize(6, 9) == 0 and b.locus_buffer().to_list() == [1, 1, 1, 1, 9, 9]
    other = hamr.buffer_int(hamr.buffer_allocator_malloc, 2, 5)
    b.swap(other)
    assert b.size() == 2 and other.size() == 6
    assert b.get_allocator() == hamr.buffer_allocator_malloc and other.get_allocator() == alloc
    assert other.print() == 0
    assert "m_size = 6" in capfd.readouterr().err
    for asked in (b.cuda_accessible, b.hip_accessible, b.openmp_accessible, b.device_accessible):
        assert asked() in (True, False)
    assert b.cuda_accessible() == ("cuda" in PRESENT) or not b.cuda_accessible()
    assert b.get_stream() is None
    b.set_transfer_asynchronous()
    assert b.get_transfer_mode() == hamr.buffer_transfer_async
    b.set_transfer_sycnhronous_host()
    assert b.get_transfer_mode() == hamr.buffer_transfer_sync_host
    assert np.all(np.array(b.get_cpu_accessible(), copy=False) == 5)
    assert b.cpu_accessible() is True
    assert b.free() == 0 and b.size() == 0
