"""Foreign arrays as a hostile or careless producer makes them: every case a clean Python
exception, never a crash, never silently wrong data. Each test fails on the code before
(named in its comment)."""

import ctypes
import random
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import locus

# DLTensor's fields (DLPack's dlpack.h, 64-bit): data, device, ndim, dtype, shape,
# strides, byte_offset.
NDIM, DTYPE, SHAPE, STRIDES, BYTE_OFFSET = 16, 20, 24, 32, 40


def _tensor(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get(capsule, b"dltensor")


def _forged(array=None, **fields):
    """A legacy capsule of a numpy array with some DLTensor fields overwritten."""
    array = np.arange(64, dtype=np.float64) if array is None else array
    capsule = array.__dlpack__()
    t = _tensor(capsule)
    for name, value in fields.items():
        if name == "ndim":
            ctypes.c_int32.from_address(t + NDIM).value = value
        elif name == "shape":
            ctypes.c_void_p.from_address(t + SHAPE).value = value
        elif name == "strides":
            ctypes.c_void_p.from_address(t + STRIDES).value = value
        elif name == "byte_offset":
            ctypes.c_uint64.from_address(t + BYTE_OFFSET).value = value
        elif name == "dtype":
            code, bits, lanes = value
            ctypes.c_uint8.from_address(t + DTYPE).value = code
            ctypes.c_uint8.from_address(t + DTYPE + 1).value = bits
            ctypes.c_uint16.from_address(t + DTYPE + 2).value = lanes
        elif name == "device":
            ctypes.c_int32.from_address(t + 8).value = value[0]
            ctypes.c_int32.from_address(t + 12).value = value[1]
    return array, capsule


# Each case segfaulted or was accepted on the code before (issue: nothing crashed):
# a null shape with ndim > 0, ndim = 2^31-1 (read 2^31 extents), ndim = -1 (taken as a
# scalar), a byte_offset that wraps the address space (accepted), lanes of a vector type.
@pytest.mark.parametrize(
    "fields, error, match",
    [
        ({"ndim": 2, "shape": None}, ValueError, "null shape"),
        ({"ndim": 2**31 - 1}, ValueError, "ndim = 2147483647"),
        ({"ndim": -1}, ValueError, "ndim = -1"),
        ({"ndim": 65}, ValueError, "ndim = 65"),
        ({"byte_offset": 2**64 - 8}, ValueError, "wraps"),
        ({"dtype": (2, 32, 4)}, TypeError, "4 lanes"),
        ({"dtype": (9, 64, 1)}, TypeError, "code 9"),
    ],
)
def test_a_malformed_capsule_is_a_clean_error(fields, error, match):
    array, capsule = _forged(**fields)
    with pytest.raises(error, match=match):
        locus.Buffer.from_dlpack(capsule)
    assert array.sum() == sum(range(64)), "the producer's array is untouched"


def test_a_capsule_labelled_opencl_whose_data_is_not_a_cl_mem_is_refused_before_any_opencl_call():
    # On the code before: a segfault inside the ICD loader, in clGetMemObjectInfo, the
    # very check meant to refuse foreign memory.
    opencl = [l for l in locus.available() if l.startswith("opencl:")]
    if not opencl:
        print("SKIPPED: no OpenCL location here")
        return
    for location in opencl:
        _, capsule = _forged(device=(4, int(location.split(":")[1])))
        with pytest.raises(BufferError, match="not a buffer locus made"):
            locus.Buffer.from_dlpack(capsule)


def test_random_capsule_fields_never_crash():
    # A property test over what a consumer can check without trusting the memory: ndim,
    # shape and strides pointers (null or real), extents (negative, zero, within the
    # array), byte_offset (in range or wrapping), dtype triples. The seed is fixed and
    # printed; LOCUS_CAPSULE_SEED replays another.
    import os

    seed = int(os.environ.get("LOCUS_CAPSULE_SEED", "20261126"))
    print(f"capsule seed {seed}")
    rng = random.Random(seed)
    extents = (ctypes.c_int64 * 80)()
    strides = (ctypes.c_int64 * 80)()
    outcomes = {}
    for _ in range(400):
        ndim = rng.choice([-(2**31), -1, 0, 1, 2, 3, 64, 65, 2**31 - 1, rng.randrange(-5, 70)])
        # Extents whose product stays within the array's 64 elements (or negative).
        for i in range(80):
            extents[i] = 1
            strides[i] = rng.choice([1, 0, -1, 64])
        if 0 < ndim <= 80:
            extents[rng.randrange(ndim)] = rng.choice([0, 1, 8, 64, -1, -(2**40)])
        fields = {
            "ndim": ndim,
            "shape": rng.choice([None, ctypes.addressof(extents)]),
            "strides": rng.choice([None, None, ctypes.addressof(strides)]),
            "byte_offset": rng.choice([0, 0, 2**64 - 1, 2**63, 2**64 - 8]),
            "dtype": rng.choice([(2, 64, 1), (2, 32, 1), (0, 8, 1), (2, 64, 2), (5, 128, 1), (1, 0, 1)]),
        }
        array, capsule = _forged(**fields)
        try:
            b = locus.Buffer.from_dlpack(capsule)
            # Accepted: only a compact layout within the array's own bytes.
            assert b.nbytes <= array.nbytes
            b.to_list()
            outcome = "adopted"
        except (ValueError, TypeError, BufferError) as e:
            outcome = type(e).__name__
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print("outcomes", outcomes)
    assert outcomes.get("ValueError", 0) > 0 and outcomes.get("TypeError", 0) > 0


class _Interface:
    def __init__(self, **iface):
        self.__array_interface__ = iface


def test_array_interface_strides_of_the_wrong_length_are_refused():
    # The code before returned [0,0,0,0,4,4,4,4,...] for strides (16,) on shape (4, 4).
    a = np.repeat(np.arange(4, dtype=np.float32), 4)
    iface = dict(a.__array_interface__, shape=(4, 4), strides=(16,))
    with pytest.raises(ValueError, match="1 strides .* for its 2 dimensions"):
        locus.Buffer.from_array(_Interface(**iface), copy=True)


@pytest.mark.parametrize("typestr", ["xf4", "<f+4", "<f04", "|f4", ">f4", "<f", "f4", "<f4 ", "=f4"])
def test_type_strings_follow_numpy_s_grammar(typestr):
    # Each was accepted on the code before (any byte-order character, a sign, a
    # leading zero, '|' on a multi-byte type).
    a = np.arange(4, dtype=np.float32)
    with pytest.raises(TypeError, match="array-interface type"):
        locus.Buffer.from_array(_Interface(**dict(a.__array_interface__, typestr=typestr)))
    ok = locus.Buffer.from_array(_Interface(**dict(a.__array_interface__, typestr="<f4")))
    assert ok.to_list() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("raised", [MemoryError, KeyboardInterrupt, RuntimeError])
def test_an_interface_property_that_raises_is_that_error_not_a_missing_attribute(raised):
    # The code before reported each as "has no __array_interface__" (a TypeError).
    class Raises:
        @property
        def __array_interface__(self):
            raise raised("the producer's own error")

    with pytest.raises(raised, match="own error"):
        locus.Buffer.from_array(Raises())

    class RaisesDevice:
        def __dlpack__(self, **kwargs):
            return np.arange(4.0).__dlpack__()

        @property
        def __dlpack_device__(self):
            raise raised("the producer's own error")

    with pytest.raises(raised, match="own error"):
        locus.Buffer.from_dlpack(RaisesDevice())


def test_to_list_beyond_host_memory_is_a_memory_error_not_an_abort():
    # The code before aborted the process (SIGABRT, "memory allocation of ... failed").
    # Run in a child with an address-space limit, so that the list cannot fit.
    child = textwrap.dedent(
        """
        import resource, locus
        b = locus.Buffer("host", 48 << 20, dtype="uint8", fill=1)  # 48 MiB: a 384 MiB list
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (160 << 20), hard))
        try:
            b.to_list()
        except MemoryError as e:
            print("MemoryError:", e)
        """
    )
    # From another directory: the source tree's `locus` must not shadow the installed one.
    run = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120, cwd=tempfile.gettempdir()
    )
    assert run.returncode == 0, (run.returncode, run.stdout, run.stderr[-2000:])
    assert "MemoryError:" in run.stdout, run.stdout


def test_to_list_under_memory_pressure_is_a_memory_error_at_every_point():
    # The code before built the items, then the list with pyo3's PyList::new, which panics
    # when PyList_New fails: "internal error in locus ... a bug". Limits between "nothing
    # fits" and "everything fits" reach each allocation of to_list in turn; every one must
    # end in a list or a MemoryError. uint8 items are Python's cached small ints, so the
    # list's own storage (8 bytes an element) is what runs out.
    child = textwrap.dedent(
        """
        import resource, sys, locus
        b = locus.Buffer("host", 16 << 20, dtype="uint8", fill=1)
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (int(sys.argv[1]) << 20), hard))
        try:
            n = len(b.to_list())
            print("list", n)
        except MemoryError as e:
            print("MemoryError:", e)
        """
    )
    seen = set()
    for extra_mib in (48, 96, 144, 176, 208, 240, 288, 352, 448):
        run = subprocess.run(
            [sys.executable, "-c", child, str(extra_mib)],
            capture_output=True, text=True, timeout=120, cwd=tempfile.gettempdir(),
            env={**__import__("os").environ, "LOCUS_BACKENDS": "host"},
        )
        assert run.returncode == 0, (extra_mib, run.returncode, run.stdout, run.stderr[-2000:])
        assert "internal error" not in run.stdout + run.stderr, (extra_mib, run.stderr[-2000:])
        seen.add(run.stdout.split()[0] if run.stdout else "nothing")
    assert "MemoryError:" in seen, seen
