"""locus buffers between MPI ranks, through mpi4py.

Each rank's buffer may live at any location (``"opencl:0"`` on one rank, ``"webgpu:0"``
on the next); :class:`Comm` moves the current data of a :class:`locus.Buffer` over an
mpi4py communicator, on the route that needs the fewest copies::

    from mpi4py import MPI
    import locus
    from locus.mpi import Comm

    comm = Comm(MPI.COMM_WORLD)               # collective: every rank makes its Comm
    b = locus.Buffer("opencl:0" if comm.rank == 0 else "webgpu:0", 1 << 20, dtype="float32")
    if comm.rank == 0:
        b.fill(1.5)
        comm.send(b, dest=1, tag=7)
    else:
        comm.recv(b, source=0, tag=7)         # b stays at webgpu:0, with rank 0's data
    comm.all_reduce_sum(b)

Run it with ``mpirun -np 2 python program.py``. The route of a buffer
(:meth:`Comm.route`) is one of:

``mapped``
    the current data is host-visible in place (host, OpenMP on the initial device, a
    host-unified OpenCL device, SYCL shared USM, a WebGPU adapter that shares memory with
    the host): mpi4py reads or writes it through the buffer protocol, no copy.
``device-aware``
    a CUDA or HIP buffer, and the MPI library takes that technology's device pointers
    (``MPIX_Query_cuda_support()`` / ``MPIX_Query_rocm_support()``, or
    ``LOCUS_MPI_DEVICE_AWARE=1``): the device pointer goes to MPI.
``staged``
    otherwise: the data passes through two reused host chunks
    (``LOCUS_MPI_CHUNK``, 4 MiB unless set), the device copy of one chunk overlapping the
    network transfer of the other. ``LOCUS_MPI_ROUTE=staged`` (or ``Comm(policy="staged")``)
    takes this route for every buffer.

A message is the whole buffer. The sender first tells the receiver its element type and
length; a receiver whose buffer differs refuses before anything is written, and both
ranks raise :class:`MpiError` naming both sides. Collectives first agree that every rank
can take part (see :meth:`Comm.agree`). Every wait is bounded by ``LOCUS_MPI_TIMEOUT_S``
seconds (300 unless set, 0 for none, or ``Comm(timeout=...)``): a silent or dead peer is
an error, not a hang.

A buffer can also go to mpi4py directly, through a handle: ``comm.Send(b.access("host"),
dest=1)`` and ``with b.access_mut("host") as h: comm.Recv(h, source=0)``. That is in
place where the host reaches the data and through a whole-buffer host replica otherwise,
with mpi4py's own (unchecked) matching. :class:`Comm` adds the checks, the chunked
staging and the time limit. The messages of :class:`Comm` are its own (it duplicates the
communicator): they do not match mpi4py calls, nor ``locus::mpi`` in Rust.
"""

import ctypes
import ctypes.util
import os
import struct
import threading
import time

import numpy as np

from . import _locus
from ._mpi_collectives import Collectives, _bytes
from ._mpi_regions import Regions

__all__ = ["Comm", "MpiError", "Request"]

#: The highest tag every MPI library accepts (the standard's lower bound for MPI_TAG_UB).
TAG_LIMIT = 32767
_MAGIC = b"LCS1"
# A message's header: magic, element count, element size, the sender's staging chunk
# (elements), sequence number, whether the sender stages, element type.
_HEADER = struct.Struct("<4sQQQQQ16s")
# The receiver's answer: its count, go (0) or refuse (1), the piece size (elements) both
# sides use, its element type.
_ANSWER = struct.Struct("<4sQQQ16s")
# The largest piece: whole messages where neither side stages, below MPI's int counts.
_WHOLE = 1 << 30
_DEFAULT_CHUNK = 4 << 20
# Memory that abandoned MPI requests may still touch: kept for the life of the process.
_buried = []


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "locus.mpi needs mpi4py and an MPI library: pip install mpi4py "
            "(and apt install openmpi-bin, or another MPI)"
        ) from e
    return MPI


class MpiError(_locus.LocusError):
    """An MPI call, or the agreement between ranks that :class:`Comm` checks before it
    moves data, failed. ``rank`` is the rank that raises it, ``call`` the step."""

    def __init__(self, rank, call, message, hint):
        super().__init__(f"MPI rank {rank}: {call} failed: {message}; {hint}")
        self.rank = rank
        self.call = call
        self.message = message
        self.hint = hint


def _env_size(name, default):
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    units = {"": 1, "b": 1, "kib": 1 << 10, "kb": 1000, "mib": 1 << 20, "mb": 10**6, "gib": 1 << 30, "gb": 10**9}
    number = text.rstrip("aAbBgGiIkKmM")
    unit = text[len(number) :].strip().lower()
    try:
        value = int(float(number) * units[unit])
    except (ValueError, KeyError):
        raise ValueError(f"{name}={text!r} is not a size (e.g. 4MiB, 65536)") from None
    if value <= 0:
        raise ValueError(f"{name}={text!r} must be above zero")
    return value


def _env_flag(name):
    text = os.environ.get(name, "").strip().lower()
    if text in ("1", "yes", "true"):
        return True
    if text in ("0", "no", "false"):
        return False
    return None


def _device_support():
    """What the loaded MPI library says of CUDA and ROCm device pointers (None: no query)."""
    out = {"cuda": None, "hip": None}
    name = ctypes.util.find_library("mpi")
    try:
        lib = ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL) if name else ctypes.CDLL(None)
    except OSError:
        lib = ctypes.CDLL(None)
    for tech, query in (("cuda", "MPIX_Query_cuda_support"), ("hip", "MPIX_Query_rocm_support")):
        fn = getattr(lib, query, None)
        if fn is not None:
            fn.restype = ctypes.c_int
            out[tech] = bool(fn())
    return out


class Request:
    """A non-blocking send or receive (:meth:`Comm.isend`, :meth:`Comm.irecv`): it runs
    on a thread of its own. :meth:`wait` returns when it is done, or raises its error."""

    def __init__(self, call, work):
        self.call = call
        self._error = None
        self._done = threading.Event()

        def run():
            try:
                work()
            except BaseException as e:  # noqa: BLE001 - handed to wait()
                self._error = e
            finally:
                self._done.set()

        self._thread = threading.Thread(target=run, name=f"locus-mpi-{call}", daemon=True)
        self._thread.start()

    def test(self):
        """True once the operation has finished (successfully or not)."""
        return self._done.is_set()

    @property
    def done(self):
        """True once the operation has finished."""
        return self._done.is_set()

    def wait(self):
        """Waits for the operation (its own time limit bounds it) and raises its error."""
        while not self._done.wait(0.05):
            pass
        self._thread.join()
        if self._error is not None:
            raise self._error


class Comm(Collectives, Regions):
    """A communicator for locus buffers over an mpi4py communicator (default
    ``MPI.COMM_WORLD``). Making one is collective: it duplicates the communicator, so its
    messages never meet the program's own.

    ``timeout`` (seconds, 0 for none) bounds every wait (default ``LOCUS_MPI_TIMEOUT_S``
    or 300); ``chunk`` is the staging piece size in bytes (default ``LOCUS_MPI_CHUNK`` or
    4 MiB); ``policy`` is ``"auto"`` (default) or ``"staged"`` (``LOCUS_MPI_ROUTE=staged``).
    """

    def __init__(self, comm=None, *, timeout=None, chunk=None, policy=None):
        MPI = _mpi()
        self._MPI = MPI
        base = MPI.COMM_WORLD if comm is None else comm
        self.rank = base.Get_rank()
        self.size = base.Get_size()
        if timeout is None:
            text = os.environ.get("LOCUS_MPI_TIMEOUT_S", "").strip()
            timeout = float(text) if text else 300.0
        self.timeout = float(timeout) if timeout and timeout > 0 else None
        self.chunk = int(chunk) if chunk is not None else _env_size("LOCUS_MPI_CHUNK", _DEFAULT_CHUNK)
        if self.chunk <= 0:
            raise ValueError(f"chunk={chunk} must be above zero")
        policy = policy or os.environ.get("LOCUS_MPI_ROUTE", "auto").strip().lower() or "auto"
        if policy not in ("auto", "staged"):
            raise ValueError(f"policy {policy!r} is not 'auto' or 'staged'")
        self.policy = policy
        self._head, self._answer, self._data, self._coll = (base.Dup() for _ in range(4))
        for c in (self._head, self._answer, self._data, self._coll):
            c.Set_errhandler(MPI.ERRORS_RETURN)
        self._seq = 0
        self._lock = threading.Lock()
        self._stages = {}
        self._forced = _env_flag("LOCUS_MPI_DEVICE_AWARE")
        self._support = _device_support()
        self.library = MPI.Get_library_version().strip().splitlines()[0]

    # --- bookkeeping ------------------------------------------------------------

    def free(self):
        """Frees the duplicated communicators (collective). The Comm is unusable after."""
        for c in (self._head, self._answer, self._data, self._coll):
            if c != self._MPI.COMM_NULL:
                c.Free()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.free()

    def _error(self, call, message, hint):
        return MpiError(self.rank, call, message, hint)

    def _next_seq(self):
        with self._lock:
            seq = self._seq
            self._seq = (self._seq + 1) % (TAG_LIMIT + 1)
            return seq

    def _take_stages(self, dtype, elements):
        key = (dtype, elements)
        with self._lock:
            free = self._stages.setdefault(key, [])
            pair = [free.pop() if free else None for _ in range(2)]
        return [s if s is not None else _locus.Buffer("host", elements, dtype=dtype) for s in pair]

    def _give_stages(self, dtype, elements, pair):
        with self._lock:
            free = self._stages.setdefault((dtype, elements), [])
            if len(free) < 8:
                free.extend(pair)

    def _wait(self, request, call, peer=None, status=None):
        """Polls `request` until done or past the time limit (then abandons it)."""
        if request.Test(status):
            return
        start = time.monotonic()
        deadline = None if self.timeout is None else start + self.timeout
        spins, slow = 0, False
        while not request.Test(status):
            # Spin as MPI's own wait does for the first 20 ms (mpi4py's Test lets other
            # threads take the GIL; a sleep(0) would cost tens of microseconds), then
            # sleep a little between tests: a long wait costs no core.
            if slow:
                time.sleep(1e-4)
            spins += 1
            if spins % 256:
                continue
            now = time.monotonic()
            slow = now - start > 0.02
            if deadline is not None and now > deadline:
                try:
                    request.Cancel()
                    request.Free()
                except self._MPI.Exception:
                    pass
                who = f"rank {peer}" if peer is not None else "the other ranks"
                raise self._error(
                    call,
                    f"{who} did not answer within {self.timeout:g} s",
                    "check that the other rank makes the matching call and is alive; "
                    "LOCUS_MPI_TIMEOUT_S sets the limit (0: none)",
                )

    def _wait_all(self, requests, call, peer=None):
        for r in requests:
            self._wait(r, call, peer)

    def _check_peer(self, call, peer, tag):
        if not isinstance(peer, int) or peer < 0 or peer >= self.size or peer == self.rank:
            raise self._error(
                call,
                f"rank {peer} is not another rank of this communicator (ranks 0 to {self.size - 1})",
                "name another rank; a buffer goes to its own rank with Buffer.copy_from",
            )
        if not isinstance(tag, int) or tag < 0 or tag > TAG_LIMIT:
            raise self._error(call, f"tag {tag} is outside 0..={TAG_LIMIT}", "use a tag every MPI library accepts (0 to 32767)")

    # --- routes -----------------------------------------------------------------

    def route(self, buffer):
        """How `buffer`'s current data reaches MPI on this rank:
        ``{"location", "wire", "reason"}`` with wire ``mapped``, ``device-aware`` or ``staged``."""
        valid = [loc for loc, ok in buffer.replicas() if ok] or [buffer.location]
        if self.policy == "staged":
            return {"location": valid[0], "wire": "staged", "reason": "LOCUS_MPI_ROUTE=staged (or policy='staged')"}
        for loc in valid:
            r = _locus.route(loc, "host")
            if r["kind"] == "in-place":
                return {"location": loc, "wire": "mapped", "reason": r["reason"]}
        loc = valid[0]
        tech = loc.split(":")[0]
        if tech in ("cuda", "hip"):
            query = "MPIX_Query_cuda_support" if tech == "cuda" else "MPIX_Query_rocm_support"
            if self._forced is not None:
                aware, why = self._forced, f"LOCUS_MPI_DEVICE_AWARE={int(self._forced)}"
            elif self._support[tech] is not None:
                aware, why = self._support[tech], f"{query}() = {int(self._support[tech])}"
            else:
                aware, why = False, f"the MPI library has no {query}"
            if aware:
                return {"location": loc, "wire": "device-aware", "reason": why}
            return {"location": loc, "wire": "staged", "reason": f"{why}: through host chunks"}
        return {"location": loc, "wire": "staged", "reason": f"MPI takes no {tech} device pointers; {_locus.route(loc, 'host')['reason']}"}

    # --- point to point ---------------------------------------------------------

    def send(self, buffer, dest, tag=0):
        """Sends all of `buffer` to rank `dest` under `tag` (0 to 32767), from wherever its
        data is current; returns once the data has left. The receiver's buffer may be at
        any location; its element type and length must be the same, or both ranks raise."""
        self._post_send("send", buffer, dest, tag)()

    def isend(self, buffer, dest, tag=0):
        """Starts :meth:`send` and returns its :class:`Request`. Messages between two ranks
        under one tag match in the order of the calls. Do not write `buffer` until the
        request is done (MPI's own rule)."""
        self._need_threads("isend")
        return Request("isend", self._post_send("isend", buffer, dest, tag))

    def recv(self, buffer, source, tag=0):
        """Receives a message from rank `source` under `tag` into all of `buffer` (which
        keeps its location). A message of another element type or length is refused before
        anything is written: both ranks raise, and the buffer keeps its data."""
        self._post_recv("recv", buffer, source, tag)()

    def irecv(self, buffer, source, tag=0):
        """Starts :meth:`recv` and returns its :class:`Request`. Do not use `buffer` until
        the request is done."""
        self._need_threads("irecv")
        return Request("irecv", self._post_recv("irecv", buffer, source, tag))

    def _need_threads(self, call):
        MPI = self._MPI
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise self._error(
                call,
                "MPI was initialized without MPI_THREAD_MULTIPLE, and non-blocking calls run on threads",
                "keep mpi4py's default (mpi4py.rc.thread_level = 'multiple') or use send / recv",
            )

    def _post_send(self, call, buffer, dest, tag):
        """Posts the header now (so order between two ranks is the order of the calls);
        the rest of the send is the returned function."""
        MPI = self._MPI
        self._check_peer(call, dest, tag)
        seq = self._next_seq()
        itemsize = np.dtype(buffer.dtype).itemsize
        route = self.route(buffer)
        staged = route["wire"] == "staged"
        chunk = max(1, self.chunk // itemsize)
        header = np.frombuffer(
            bytearray(_HEADER.pack(_MAGIC, buffer.size, itemsize, chunk, seq, staged, buffer.dtype.encode())),
            np.uint8,
        )
        answer = np.zeros(_ANSWER.size, np.uint8)
        try:
            head = self._head.Isend([header, MPI.BYTE], dest, tag)
            reply = self._answer.Irecv([answer, MPI.BYTE], dest, seq)
        except MPI.Exception as e:
            raise self._error(call, f"posting the header to rank {dest}: {e}", "check the communicator") from None

        def body():
            self._wait(head, f"{call} (header)", dest)
            self._wait(reply, f"{call} (answer)", dest)
            _, count, refused, piece, their_dtype = _ANSWER.unpack(answer.tobytes())
            if refused:
                raise self._error(
                    call,
                    f"rank {dest} expects {count} {their_dtype.rstrip(bytes(1)).decode()} elements and "
                    f"this rank sent {buffer.size} {buffer.dtype} (tag {tag}); nothing was moved",
                    "both ranks use buffers of one element type and length",
                )
            self._send_body(call, buffer, dest, seq, piece, route)

        return body

    def _post_recv(self, call, buffer, source, tag):
        MPI = self._MPI
        self._check_peer(call, source, tag)
        header = np.zeros(_HEADER.size, np.uint8)
        try:
            head = self._head.Irecv([header, MPI.BYTE], source, tag)
        except MPI.Exception as e:
            raise self._error(call, f"posting the header receive from rank {source}: {e}", "check the communicator") from None

        def body():
            self._wait(head, f"{call} (header)", source)
            magic, count, itemsize, chunk, seq, staged, dtype = _HEADER.unpack(header.tobytes())
            dtype = dtype.rstrip(bytes(1)).decode()
            if magic != _MAGIC:
                raise self._error(call, f"rank {source} sent no locus header under tag {tag}", "both ranks use locus.mpi.Comm")
            go = count == buffer.size and dtype == buffer.dtype
            # Whole messages where neither side stages; else the smaller staging chunk.
            route = self.route(buffer)
            piece = max(1, _WHOLE // itemsize)
            if staged:
                piece = min(piece, chunk)
            if route["wire"] == "staged":
                piece = min(piece, max(1, self.chunk // itemsize))
            answer = np.frombuffer(
                bytearray(_ANSWER.pack(_MAGIC, buffer.size, 0 if go else 1, piece, buffer.dtype.encode())), np.uint8
            )
            self._wait(self._answer.Isend([answer, MPI.BYTE], source, seq), f"{call} (answer)", source)
            if not go:
                raise self._error(
                    call,
                    f"rank {source} sent {count} {dtype} elements and this buffer holds "
                    f"{buffer.size} {buffer.dtype} (tag {tag}); nothing was moved",
                    "both ranks use buffers of one element type and length",
                )
            self._recv_body(call, buffer, source, seq, piece, route)

        return body

    def _pieces(self, count, piece):
        return [(off, min(piece, count - off)) for off in range(0, count, piece)]

    def _send_body(self, call, buffer, dest, seq, piece, route):
        MPI = self._MPI
        pieces = self._pieces(buffer.size, piece)
        if route["wire"] == "staged":
            def post(view, off, n):
                return self._data.Isend([_bytes(view), MPI.BYTE], dest, seq)

            def fill(stage, off, n):
                stage.copy_from(buffer, off, n, 0)

            self._staged(call, buffer.dtype, pieces, piece, fill, post, None, dest)
            return
        with buffer.access(route["location"] if route["wire"] == "device-aware" else "host") as h:
            reqs = [self._data.Isend(part, dest, seq) for part in self._parts_of(h, route, buffer, pieces)]
            self._wait_all(reqs, f"{call} (data)", dest)

    def _recv_body(self, call, buffer, source, seq, piece, route):
        MPI = self._MPI
        pieces = self._pieces(buffer.size, piece)
        if route["wire"] == "staged":
            def post(view, off, n):
                return self._data.Irecv([_bytes(view), MPI.BYTE], source, seq)

            def drain(stage, off, n):
                buffer.copy_from(stage, 0, n, off)

            self._staged(call, buffer.dtype, pieces, piece, None, post, drain, source)
            return
        with buffer.access_mut(route["location"] if route["wire"] == "device-aware" else "host") as h:
            reqs = [self._data.Irecv(part, source, seq) for part in self._parts_of(h, route, buffer, pieces)]
            try:
                self._wait_all(reqs, f"{call} (data)", source)
            except MpiError:
                _buried.append(h)  # MPI may still write there
                raise

    def _parts_of(self, handle, route, buffer, pieces):
        """Each piece of the data behind `handle` as an MPI byte buffer: a view of the host
        mapping, or, device-aware, a range at the device address (the MPI library tells
        device pointers from host ones itself)."""
        MPI = self._MPI
        if route["wire"] == "device-aware":
            ptr = handle.__cuda_array_interface__["data"][0]
            itemsize = np.dtype(buffer.dtype).itemsize
            return [[MPI.buffer.fromaddress(ptr + off * itemsize, n * itemsize), MPI.BYTE] for off, n in pieces]
        flat = np.asarray(handle).reshape(-1)
        return [[_bytes(flat[off : off + n]), MPI.BYTE] for off, n in pieces]

    def _staged(self, call, dtype, pieces, piece, fill, post, drain, peer):
        """Moves `pieces` through two reused host chunks: `fill` (device to chunk) of piece
        k+1 overlaps the MPI transfer (`post`) of piece k; `drain` (chunk to device) runs
        once a piece has arrived."""
        stages = self._take_stages(dtype, piece)
        slots = [None, None]

        def finish(slot):
            req, handle, off, n = slots[slot]
            slots[slot] = None
            try:
                self._wait(req, f"{call} (data)", peer)
            except MpiError:
                _buried.extend([stages[slot], handle])
                stages[slot] = None
                raise
            handle.close()
            if drain is not None:
                drain(stages[slot], off, n)

        try:
            for k, (off, n) in enumerate(pieces):
                slot = k % 2
                if slots[slot] is not None:
                    finish(slot)
                if fill is not None:
                    fill(stages[slot], off, n)
                handle = stages[slot].access_mut("host")
                view = np.asarray(handle).reshape(-1)[:n]
                slots[slot] = (post(view, off, n), handle, off, n)
            for k in range(len(pieces), len(pieces) + 2):
                if slots[k % 2] is not None:
                    finish(k % 2)
        finally:
            for s in slots:
                if s is not None:  # an error left this one posted: it may still complete
                    _buried.append(s)
            if all(s is None for s in slots) and all(s is not None for s in stages):
                self._give_stages(dtype, piece, stages)

    # --- agreement and collectives ---------------------------------------------
