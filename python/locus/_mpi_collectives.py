"""The collectives of :class:`locus.mpi.Comm` (agreement, barrier, broadcast, sum,
gather), kept apart from its point-to-point messages; :class:`~locus.mpi.Comm` is the
class to use."""

import struct

import numpy as np

from . import _locus

# A rank's part in a collective: ready, count, piece size, element type, why not ready.
_PART = struct.Struct("<QQQ16s200s")
# MPI's predefined types for the element types a sum is defined on (float16 and bool
# have none every MPI library sums).
_SUMMABLE = {
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "int8": "INT8_T",
    "int16": "INT16_T",
    "int32": "INT32_T",
    "int64": "INT64_T",
    "uint8": "UINT8_T",
    "uint16": "UINT16_T",
    "uint32": "UINT32_T",
    "uint64": "UINT64_T",
}

def _bytes(array):
    """A flat byte view of a contiguous array (no copy)."""
    return array.reshape(-1).view(np.uint8)



class Collectives:
    """The collective calls of :class:`~locus.mpi.Comm` (a mixin: it uses the
    communicator's waits, errors and staging)."""

    def agree(self, error=None):
        """Collective: raises :class:`MpiError` on every rank when any rank passes an
        error (an exception, or a message), naming the ranks and their errors; returns
        None when no rank does. Use it before a collective step that a rank may be
        unable to take (a location missing there)."""
        self._parts("agree", None, error)

    def _parts(self, call, buffer, error=None):
        MPI = self._MPI
        dtype = buffer.dtype if buffer is not None else ""
        count = buffer.size if buffer is not None else 0
        itemsize = np.dtype(dtype).itemsize if buffer is not None else 1
        why = "" if error is None else str(error)
        if error is not None and not why:
            why = type(error).__name__
        mine = np.frombuffer(
            bytearray(_PART.pack(0 if error is None else 1, count, max(1, self.chunk // itemsize), dtype.encode(), why.encode()[:200])),
            np.uint8,
        )
        every = np.zeros(_PART.size * self.size, np.uint8)
        self._wait(self._coll.Iallgather([mine, MPI.BYTE], [every, MPI.BYTE]), f"{call} (agreement)")
        parts = [_PART.unpack(every[i * _PART.size : (i + 1) * _PART.size].tobytes()) for i in range(self.size)]
        failed = [(r, p[4].rstrip(bytes(1)).decode(errors="replace")) for r, p in enumerate(parts) if p[0]]
        if failed:
            raise self._error(
                call,
                "; ".join(f"rank {r}: {m}" for r, m in failed),
                "every rank stopped here; fix the rank named",
            )
        if buffer is None:
            return []
        types = {p[3].rstrip(bytes(1)).decode() for p in parts}
        if len(types) > 1:
            first = next(r for r, p in enumerate(parts) if p[3].rstrip(bytes(1)).decode() != dtype)
            raise self._error(
                call,
                f"rank {first} has {parts[first][3].rstrip(bytes(1)).decode()} elements and this rank "
                f"{dtype}; nothing was moved",
                "every rank calls the collective with buffers of one element type",
            )
        return [(p[1], p[2]) for p in parts]

    def _same_length(self, call, parts, buffer):
        other = next((r for r, p in enumerate(parts) if p[0] != buffer.size), None)
        if other is not None:
            raise self._error(
                call,
                f"rank {other} has {parts[other][0]} elements and this rank {buffer.size}; nothing was moved",
                "every rank calls the collective with buffers of one length",
            )

    def _check_root(self, call, root):
        if not isinstance(root, int) or root < 0 or root >= self.size:
            return f"root {root} is not a rank of this communicator (0 to {self.size - 1})"
        return None

    def barrier(self):
        """Collective: returns once every rank has called it (bounded by the time limit)."""
        self._wait(self._coll.Ibarrier(), "barrier")

    def broadcast(self, buffer, root=0):
        """Collective: `root`'s data into every other rank's `buffer` (one element type and
        length on every rank), each at its own location."""
        MPI = self._MPI
        parts = self._parts("broadcast", buffer, self._check_root("broadcast", root))
        self._same_length("broadcast", parts, buffer)
        piece = parts[root][1]
        pieces = self._pieces(buffer.size, piece)
        route = self.route(buffer)
        mine = self.rank == root

        def post(view, off, n):
            return self._coll.Ibcast([_bytes(view), MPI.BYTE], root)

        if route["wire"] == "mapped":
            with (buffer.access("host") if mine else buffer.access_mut("host")) as h:
                flat = np.asarray(h).reshape(-1)
                for off, n in pieces:
                    self._wait(post(flat[off : off + n], off, n), "broadcast (data)")
            return
        fill = (lambda stage, off, n: stage.copy_from(buffer, off, n, 0)) if mine else None
        drain = None if mine else (lambda stage, off, n: buffer.copy_from(stage, 0, n, off))
        self._staged("broadcast", buffer.dtype, pieces, piece, fill, post, drain, None)

    def all_reduce_sum(self, buffer):
        """Collective: every rank's `buffer` becomes the element-wise sum over the ranks
        (numeric element types; not float16 or bool: an error on every rank)."""
        MPI = self._MPI
        name = _SUMMABLE.get(buffer.dtype)
        datatype = getattr(MPI, name) if name else None
        why = None if datatype is not None else f"MPI has no portable sum of {buffer.dtype}"
        parts = self._parts("all_reduce_sum", buffer, why)
        self._same_length("all_reduce_sum", parts, buffer)
        piece = parts[0][1]
        pieces = self._pieces(buffer.size, piece)

        def post(view, off, n):
            return self._coll.Iallreduce(MPI.IN_PLACE, [view, n, datatype], MPI.SUM)

        if self.route(buffer)["wire"] == "mapped":
            with buffer.access_mut("host") as h:
                flat = np.asarray(h).reshape(-1)
                for off, n in pieces:
                    self._wait(post(flat[off : off + n], off, n), "all_reduce_sum (data)")
            return
        self._staged(
            "all_reduce_sum",
            buffer.dtype,
            pieces,
            piece,
            lambda stage, off, n: stage.copy_from(buffer, off, n, 0),
            post,
            lambda stage, off, n: buffer.copy_from(stage, 0, n, off),
            None,
        )

    def gather(self, buffer, root=0, at="host"):
        """Collective: every rank's `buffer` (lengths may differ), in rank order, into one
        new buffer at `at` on `root`, which gets it; the other ranks get None."""
        return self._gather("gather", buffer, root, at)

    def all_gather(self, buffer, at="host"):
        """Collective: every rank's `buffer` (lengths may differ), in rank order, into one
        new buffer at `at` on every rank."""
        return self._gather("all_gather", buffer, None, at)

    def _gather(self, call, buffer, root, at):
        MPI = self._MPI
        why = self._check_root(call, root) if root is not None else None
        if why is None and (root is None or root == self.rank) and at not in _locus.available():
            why = f"{at} is not a location of this rank (it has {', '.join(_locus.available())})"
        parts = self._parts(call, buffer, why)
        counts = [p[0] for p in parts]
        total = sum(counts)
        if total >= 1 << 31:
            raise self._error(call, f"{total} elements in all are past MPI's int counts", "gather in parts")
        itemsize = np.dtype(buffer.dtype).itemsize
        unit = MPI.BYTE.Create_contiguous(itemsize).Commit()
        displs = [sum(counts[:r]) for r in range(self.size)]
        receiving = root is None or root == self.rank
        out = None
        if receiving:
            direct = _locus.route(at, "host")["kind"] == "in-place"
            out = _locus.Buffer(at if direct else "host", total, dtype=buffer.dtype)
        try:
            with buffer.access("host") as mine:
                send = [_bytes(np.asarray(mine).reshape(-1)), buffer.size, unit]
                if out is not None:
                    with out.access_mut("host") as h:
                        recv = [_bytes(np.asarray(h).reshape(-1)), (counts, displs), unit]
                        req = (
                            self._coll.Iallgatherv(send, recv)
                            if root is None
                            else self._coll.Igatherv(send, recv, root)
                        )
                        self._wait(req, f"{call} (data)")
                else:
                    self._wait(self._coll.Igatherv(send, None, root), f"{call} (data)")
        finally:
            unit.Free()
        if out is not None and out.location != at:
            out.move_to(at)
        return out

