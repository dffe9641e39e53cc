"""Region messages of :class:`locus.mpi.Comm` (a halo face, a column, a plane of a 3-D
box between ranks, with no face buffers of the program's), kept apart from its whole-buffer
messages; :class:`~locus.mpi.Comm` is the class to use.

The sender packs the region into a contiguous block at its buffer's location in one region
copy there (`Buffer.copy_region_from`: the runtime's rectangle copy where it has one) and
sends the block as an ordinary message; the receiver takes it into a block at its buffer's
location and unpacks it into its region the same way. A region message is a message of its
elements: a whole-buffer ``recv`` of that length takes it, and ``recv_region`` takes a
whole buffer's ``send``.
"""

import numpy as np

from . import _locus


def _request(call, work):
    from .mpi import Request  # the module that defines Comm imports this one

    return Request(call, work)


class Regions:
    """``send_region`` / ``recv_region`` and their non-blocking forms."""

    def send_region(self, buffer, region, dest, tag=0):
        """Sends `region` of `buffer` (a :class:`locus.Region`; ``buffer.region[:, -1]``
        makes one) to rank `dest` under `tag`. The region is checked first: outside the
        buffer or splitting elements raises ValueError on this rank, and nothing is sent."""
        block = self._packed("send_region", buffer, region)
        self._post_send("send_region", block, dest, tag)()

    def isend_region(self, buffer, region, dest, tag=0):
        """Starts :meth:`send_region` and returns its :class:`Request`. The region is packed
        before this returns, so the buffer may be written at once."""
        self._need_threads("isend_region")
        block = self._packed("isend_region", buffer, region)
        return _request("isend_region", self._post_send("isend_region", block, dest, tag))

    def recv_region(self, buffer, region, source, tag=0):
        """Receives a message from rank `source` under `tag` into `region` of `buffer`; the
        rest of the buffer keeps its data. The message must hold as many elements of the
        buffer's type as the region (any shape on the sender's side), or both ranks raise
        and nothing is written."""
        block = self._block("recv_region", buffer, region)
        self._post_recv("recv_region", block, source, tag)()
        buffer.copy_region_from(block, region.packed(), region)

    def irecv_region(self, buffer, region, source, tag=0):
        """Starts :meth:`recv_region` and returns its :class:`Request`. The message lands in
        a block of its own and only the unpack writes `region`: other regions of the buffer
        may be used, and sent (a halo exchange posts its receives and sends on one grid);
        do not use `region` until the request is done."""
        self._need_threads("irecv_region")
        block = self._block("irecv_region", buffer, region)
        body = self._post_recv("irecv_region", block, source, tag)

        def work():
            body()
            buffer.copy_region_from(block, region.packed(), region)

        return _request("irecv_region", work)

    def _block(self, call, buffer, region):
        """A contiguous buffer at `buffer`'s location for `region`'s elements, once the
        region is checked against `buffer`."""
        if not isinstance(region, _locus.Region):
            raise TypeError(f"{call}: region is a locus.Region (buffer.region[...] makes one), not {type(region).__name__}")
        buffer._check_region(region, f"Comm.{call}")  # ValueError naming the call and the limit
        count = region.nbytes // np.dtype(buffer.dtype).itemsize
        return _locus.Buffer(buffer.location, count, dtype=buffer.dtype)

    def _packed(self, call, buffer, region):
        """`region` of `buffer` packed into a new block at its location (one region copy)."""
        block = self._block(call, buffer, region)
        block.copy_region_from(buffer, region)
        return block
