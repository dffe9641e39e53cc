"""HAMR's Python module over locus: ``from locus.hamr import *``.

HAMR's names (``buffer_float``, ``buffer_allocator_malloc``, ``buffer(array)``,
``get_host_accessible()``, ...) over :class:`locus.Buffer`, so a HAMR Python program runs
unchanged (``import locus.hamr as hamr``, or ``sys.modules["hamr"] = locus.hamr``) and its
buffers may also live at OpenCL, SYCL and WebGPU locations
(``buffer_allocator_opencl``, ``buffer_allocator_sycl``, ``buffer_allocator_webgpu``).

As in HAMR, ``get_host_accessible()`` / ``get_cuda_accessible()`` return a handle numpy or
CuPy take without a copy (``np.array(h, copy=False)``, ``cupy.asarray(h)``); the handle,
and the arrays made from it, keep the data alive after the buffer goes. Writes through it
reach the buffer: the access is declared read-write, so that copy becomes the buffer's
current data (HAMR: writes are seen when no temporary was needed; locus makes the copy
current instead of dropping it). ``buffer(obj)`` shares a numpy array's memory, zero-copy,
and keeps the array alive.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import Buffer, Handle, Queue

__all__ = [
    "buffer",
    "buffer_handle",
    "get_allocator_name",
    "set_active_device",
]

# HAMR's allocator values, and locus's technologies after them.
buffer_allocator_same = -2
buffer_allocator_none = -1
buffer_allocator_cpp = 0
buffer_allocator_malloc = 1
buffer_allocator_cuda = 2
buffer_allocator_cuda_async = 3
buffer_allocator_cuda_uva = 4
buffer_allocator_cuda_host = 5
buffer_allocator_hip = 6
buffer_allocator_hip_uva = 7
buffer_allocator_openmp = 8
buffer_allocator_opencl = 9
buffer_allocator_sycl = 10
buffer_allocator_webgpu = 11

# HAMR's transfer modes.
buffer_transfer_async = 0
buffer_transfer_sync_host = 1
buffer_transfer_sync = 2
_TRANSFER = {0: "async", 1: "sync_host", 2: "sync"}

_NAMES = {
    0: "cpp", 1: "malloc", 2: "cuda_malloc_allocator", 3: "cuda_malloc_async_allocator",
    4: "cuda_malloc_uva_allocator", 5: "cuda_malloc_host_allocator",
    6: "hip_malloc_allocator", 7: "hip_malloc_uva_allocator", 8: "openmp_allocator",
    9: "opencl_allocator", 10: "sycl_allocator", 11: "webgpu_allocator",
}
_TECHNOLOGY = {0: "host", 1: "host", 2: "cuda", 3: "cuda", 4: "cuda", 5: "cuda", 6: "hip",
               7: "hip", 8: "openmp", 9: "opencl", 10: "sycl", 11: "webgpu"}
_DEVICE = {t: 0 for t in set(_TECHNOLOGY.values())}

__all__ += [n for n in dict(globals()) if n.startswith(("buffer_allocator_", "buffer_transfer_"))]


def get_allocator_name(alloc: int) -> str:
    """HAMR's name of an allocator."""
    return _NAMES.get(alloc, "the allocator name is not known")


def set_active_device(alloc: int, device: int) -> None:
    """The device number the allocators of ``alloc``'s technology use from now on."""
    _DEVICE[_TECHNOLOGY[alloc]] = device


def _location(alloc: int) -> str:
    if alloc not in _TECHNOLOGY:
        raise ValueError(f"invalid allocator {alloc}: use one of the buffer_allocator_* values")
    tech = _TECHNOLOGY[alloc]
    return "host" if tech == "host" else f"{tech}:{_DEVICE[tech]}"


class buffer_handle:
    """Data of a buffer usable at one place, for numpy (``__array__``,
    ``__array_interface__``) and CuPy (``__cuda_array_interface__``); it keeps the data
    alive while it, or an array made from it, lives."""

    def __init__(self, handle: Handle):
        self._handle = handle

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> Any:
        return self._handle.__array__(dtype=dtype, copy=copy)

    @property
    def __array_interface__(self) -> dict:
        return np.asarray(self._handle).__array_interface__

    @property
    def __cuda_array_interface__(self) -> dict:
        return self._handle.__cuda_array_interface__

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._handle.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._handle.__dlpack_device__()


class _buffer:
    """``hamr::buffer<T>``: a typed array made where its allocator says."""

    _dtype = "float32"

    def __init__(self, alloc: int, *args: Any) -> None:
        # HAMR's forms: (alloc, n), (alloc, n, value), (alloc, stream, sync, n[, value]),
        # and the zero-copy form buffer() builds: (alloc, stream, sync, n, owner, ptr, obj).
        self._alloc = alloc
        stream, sync, rest = None, 0, list(args)
        if len(rest) >= 3 and len(rest) != 2:
            stream, sync, rest = rest[0], rest[1], rest[2:]
        if len(rest) == 4:
            n, _owner, _ptr, obj = rest
            self._b = Buffer.from_array(_flat_view(obj), copy=False)
        else:
            n = int(rest[0]) if rest else 0
            fill = rest[1] if len(rest) > 1 else None
            self._b = Buffer(_location(alloc), n, self._dtype, fill=fill,
                             transfer=_TRANSFER.get(sync, "async"))
        self._stream = stream
        if stream is not None and stream != 0:
            # HAMR's stream form: the buffer's moves on the user's stream or queue (a
            # locus.Queue, or any object Queue.from_external adopts).
            queue = stream if isinstance(stream, Queue) else Queue.from_external(stream)
            self._b.set_queue(queue)

    def size(self) -> int:
        return len(self._b)

    # HAMR's storage calls (hamr_buffer.h): 0 on success, as HAMR returns.

    def resize(self, n_elem: int, val: Any = None) -> int:
        """New size; the first elements kept, new ones ``val`` (zero when not given)."""
        self._b.resize(int(n_elem), fill=val)
        return 0

    def reserve(self, n_elem: int, val: Any = None) -> int:
        """Room for ``n_elem`` elements; the size is unchanged (HAMR's ``reserve``). HAMR's
        second form also initialises the room to ``val``; here the room is filled when a
        later ``resize(n, val)`` takes it (pass ``val`` there)."""
        self._b.reserve(int(n_elem))
        return 0

    def free(self) -> int:
        """Lets go of the storage: the buffer is empty."""
        self._b.resize(0)
        return 0

    def swap(self, other: "_buffer") -> None:
        """Exchanges the contents (and allocators) of two buffers of one type."""
        if type(other) is not type(self):
            raise TypeError(f"swap: a {type(self).__name__} swaps with another, not {type(other).__name__}")
        self._b.swap(other._b)
        self._alloc, other._alloc = other._alloc, self._alloc

    def print(self) -> int:
        """Prints the buffer's allocator, size, capacity and elements on stderr (HAMR's
        ``print``)."""
        import sys

        print(
            f"m_alloc = {get_allocator_name(self._alloc)}, m_owner = 0, m_size = {len(self._b)}, "
            f"m_capacity = {self._b.capacity}, m_data = "
            + ", ".join(_element_text(v) for v in self._b.to_list()),
            file=sys.stderr,
        )
        return 0

    def get_owner(self) -> int:
        """The device number the memory was allocated on (HAMR's owner)."""
        return _DEVICE.get(_TECHNOLOGY.get(self._alloc, "host"), 0) if self._alloc > 1 else -1

    def get_stream(self) -> Any:
        """The stream or queue the buffer's moves are ordered on (None: locus's own)."""
        return self._stream

    def set_stream(self, stream: Any, sync: int = buffer_transfer_async) -> None:
        """Orders the buffer's moves on ``stream`` with transfer mode ``sync``."""
        self._stream = stream
        if stream is not None and stream != 0:
            queue = stream if isinstance(stream, Queue) else Queue.from_external(stream)
            self._b.set_queue(queue)
        else:
            self._b.set_queue(None)
        self._b.set_transfer(_TRANSFER.get(sync, "async"))

    def set_transfer_asynchronous(self) -> None:
        self._b.set_transfer("async")

    def set_transfer_sycnhronous_host(self) -> None:  # HAMR's spelling
        self._b.set_transfer("sync_host")

    def set_transfer_sycnhronous(self) -> None:  # HAMR's spelling
        self._b.set_transfer("sync")

    def get_transfer_mode(self) -> int:
        return {v: k for k, v in _TRANSFER.items()}[self._b.transfer]

    def _reaches(self, tech: str) -> bool:
        from . import available, route

        at = "host" if tech == "host" else f"{tech}:{_DEVICE[tech]}"
        if at != "host" and at not in available():
            return False
        return self._b.location == at or route(self._b.location, at)["kind"] == "in-place"

    def cuda_accessible(self) -> bool:
        """Whether CUDA code uses the buffer's memory in place (asks, moves nothing)."""
        return self._reaches("cuda")

    def hip_accessible(self) -> bool:
        return self._reaches("hip")

    def openmp_accessible(self) -> bool:
        return self._reaches("openmp")

    def device_accessible(self) -> bool:
        """Whether the technology HAMR was built for (CUDA, else HIP, else OpenMP) uses
        the memory in place: here, any of them present."""
        return any(self._reaches(t) for t in ("cuda", "hip", "openmp"))

    def get_hip_accessible(self) -> buffer_handle:
        return buffer_handle(self._b.access_mut(_location(buffer_allocator_hip)))

    def get_cpu_accessible(self) -> buffer_handle:
        """HAMR's older name of ``get_host_accessible``."""
        return self.get_host_accessible()

    def cpu_accessible(self) -> bool:
        """HAMR's older name of ``host_accessible``."""
        return self.host_accessible()

    def get_allocator(self) -> int:
        return self._alloc

    def get_host_accessible(self) -> buffer_handle:
        return buffer_handle(self._b.access_mut("host"))

    def get_cuda_accessible(self) -> buffer_handle:
        return buffer_handle(self._b.access_mut(_location(buffer_allocator_cuda)))

    def get_openmp_accessible(self) -> buffer_handle:
        return buffer_handle(self._b.access_mut(_location(buffer_allocator_openmp)))

    def get_sycl_accessible(self) -> buffer_handle:
        return buffer_handle(self._b.access_mut(_location(buffer_allocator_sycl)))

    def host_accessible(self) -> bool:
        """Whether host code uses the buffer's own memory in place (asks, moves nothing)."""
        from . import route

        return route(self._b.location, "host")["kind"] == "in-place"

    def move(self, alloc: int) -> int:
        self._b.move_to(_location(alloc))
        self._alloc = alloc
        return 0

    def synchronize(self) -> int:
        self._b.synchronize()
        return 0

    def locus_buffer(self) -> Buffer:
        """The :class:`locus.Buffer` underneath."""
        return self._b

    def __len__(self) -> int:
        return len(self._b)

    def __str__(self) -> str:
        vals = self._b.to_list()
        parts = []
        for i, v in enumerate(vals):
            if i:
                # HAMR's `oss << ", "; if (i % 8 == 0) oss << std::endl;`
                parts.append(", \n" if i % 8 == 0 else ", ")
            parts.append(_element_text(v))
        return "{" + "".join(parts) + "}"


def _element_text(v: Any) -> str:
    """An element as C++'s ``ostream <<`` writes it by default (6 significant digits for
    floating point: ``3.1415`` for the float 3.1415, not the double's 3.1414999961853027)."""
    return f"{v:g}" if isinstance(v, float) else str(v)


def _flat_view(obj: Any) -> Any:
    """The elements of ``obj`` in memory order, sharing its memory (HAMR takes the data
    pointer and the element count). A C- or Fortran-ordered array of any rank is viewed as
    it lies; an array that is neither (a strided slice) has no such view: refused, since
    a copy would silently lose every write through the buffer."""
    arr = np.asarray(obj)
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        raise ValueError(
            "hamr.buffer shares the array's memory, but this array is not contiguous (a "
            "strided view): pass np.ascontiguousarray(a) to work on a copy, knowing writes "
            "will not reach the original"
        )
    flat = arr.ravel(order="K")
    assert np.shares_memory(flat, arr) or arr.size == 0
    return flat


def _typed(name: str, dtype: str) -> type:
    cls = type(name, (_buffer,), {"_dtype": dtype, "__doc__": f"hamr::buffer of {dtype}"})
    globals()[name] = cls
    __all__.append(name)
    return cls


for _name, _dtype in [
    ("buffer_float", "float32"), ("buffer_double", "float64"), ("buffer_char", "int8"),
    ("buffer_signed_char", "int8"), ("buffer_short", "int16"), ("buffer_int", "int32"),
    ("buffer_long", "int64"), ("buffer_long_long", "int64"), ("buffer_unsigned_char", "uint8"),
    ("buffer_unsigned_short", "uint16"), ("buffer_unsigned_int", "uint32"),
    ("buffer_unsigned_long", "uint64"), ("buffer_unsigned_long_long", "uint64"),
]:
    _typed(_name, _dtype)

_BY_DTYPE = {"float32": "buffer_float", "float64": "buffer_double", "int8": "buffer_char",
             "int16": "buffer_short", "int32": "buffer_int", "int64": "buffer_long",
             "uint8": "buffer_unsigned_char", "uint16": "buffer_unsigned_short",
             "uint32": "buffer_unsigned_int", "uint64": "buffer_unsigned_long"}


def buffer(obj: Any, **kwargs: Any) -> _buffer:
    """Zero-copy construct a buffer sharing the memory of an object with the numpy array
    interface (HAMR's ``buffer(arr)``); the object is kept alive while the buffer uses it.
    ``sync`` takes a transfer mode (HAMR's default here: ``buffer_transfer_sync_host``)."""
    if not hasattr(obj, "__array_interface__"):
        raise AttributeError(
            "Failed to zero-copy construct the hamr::buffer because the object providing "
            "the data does not implement the array interface protocol"
        )
    arr = np.asarray(obj)
    name = _BY_DTYPE.get(arr.dtype.name)
    if name is None:
        raise TypeError(f"unsupported element type {arr.dtype}")
    cls = globals()[name]
    sync = kwargs.get("sync", buffer_transfer_sync_host)
    return cls(buffer_allocator_malloc, kwargs.get("stream"), sync, arr.size, -1,
               arr.__array_interface__["data"][0], obj)
