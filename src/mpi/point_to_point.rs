//! Sends and receives of whole buffers between two ranks, blocking and not.
//!
//! One message: the sender posts its header under the program's tag; the receiver
//! checks it against its own buffer and answers (go, with the piece size, or a refusal);
//! then the data moves in pieces under the sender's sequence number, each side on its
//! own wire (a staged sender and a mapped receiver meet on the piece size the answer
//! fixed). Non-blocking calls post the header (or its receive) before they return, so
//! messages between two ranks under one tag match in the order of the calls, as MPI's.

use std::sync::Arc;

use super::comm::{Comm, Inner, TAG_LIMIT, WHOLE};
use super::protocol::{dtype_code, dtype_name, Answer, Header, HEADER_BYTES};
use super::same_node;
use crate::backends::mpi::wire::{self, Small, Wire};
use crate::buffer::Buffer;
use crate::core::element::{DType, Element};
use crate::core::error::{Error, Result};
use crate::core::memory::Memory;
use crate::runtime::event::Event;

impl Comm {
    /// Sends all of `buffer` to rank `dest` under `tag` (0 to 32767), from wherever its
    /// data is current; returns once the data has left (the buffer may be written again).
    /// The receiver's buffer may be at any location; its element type and length must be
    /// the same, or both ranks get an error naming both sides.
    pub fn send<T: Element>(&self, buffer: &Buffer<T>, dest: i32, tag: i32) -> Result<()> {
        self.check_peer("send", dest, tag)?;
        let memory = buffer.hand_out_current()?;
        let posted = self
            .inner
            .post_header::<T>(&memory, buffer.len(), dest, tag)?;
        self.inner
            .send_body(&memory, buffer.len() * size_of::<T>(), dest, posted)
    }

    /// Receives a message from rank `source` under `tag` into all of `buffer` (at its
    /// home location, which becomes the only current copy). A message of another element
    /// type or length is refused before anything is written: both ranks get the error,
    /// and the buffer keeps its data.
    pub fn recv<T: Element>(&self, buffer: &mut Buffer<T>, source: i32, tag: i32) -> Result<()> {
        self.check_peer("recv", source, tag)?;
        let head = self.inner.post_header_recv(source, tag)?;
        let header = self
            .inner
            .check_header::<T>(head, buffer.len(), source, tag)?;
        let memory = buffer.hand_out_for_overwrite()?;
        let result = self
            .inner
            .recv_body(&memory, buffer.len() * size_of::<T>(), source, header);
        if let Err(e) = &result {
            buffer.mark_lost(&memory, e);
        }
        result
    }

    /// Starts sending `buffer` to `dest` (see [`Comm::send`]) and returns its event at
    /// once. Writes to the buffer wait for the event (it is kept on the buffer's memory as
    /// the buffer's own moves are).
    pub fn isend<T: Element>(&self, buffer: &Buffer<T>, dest: i32, tag: i32) -> Result<Event> {
        self.check_peer("isend", dest, tag)?;
        let memory = buffer.hand_out_current()?;
        let posted = self
            .inner
            .post_header::<T>(&memory, buffer.len(), dest, tag)?;
        let bytes = buffer.len() * size_of::<T>();
        let inner = Arc::clone(&self.inner);
        let work_memory = Arc::clone(&memory);
        let event = spawn("isend", move || {
            inner.send_body(&work_memory, bytes, dest, posted)
        })?;
        buffer.keep_pending(&memory, event.clone(), false);
        Ok(event)
    }

    /// Starts receiving into `buffer` from `source` (see [`Comm::recv`]) and returns its
    /// event at once; reads of the buffer wait for it. If it fails, the data the buffer
    /// held before is gone only where the message had started to arrive.
    pub fn irecv<T: Element>(
        &self,
        buffer: &mut Buffer<T>,
        source: i32,
        tag: i32,
    ) -> Result<Event> {
        self.check_peer("irecv", source, tag)?;
        let head = self.inner.post_header_recv(source, tag)?;
        let memory = buffer.hand_out_for_overwrite()?;
        let (len, bytes) = (buffer.len(), buffer.len() * size_of::<T>());
        let inner = Arc::clone(&self.inner);
        let work_memory = Arc::clone(&memory);
        let event = spawn("irecv", move || {
            let header = inner.check_header::<T>(head, len, source, tag)?;
            inner.recv_body(&work_memory, bytes, source, header)
        })?;
        buffer.keep_pending(&memory, event.clone(), true);
        Ok(event)
    }

    pub(super) fn check_peer(&self, call: &'static str, peer: i32, tag: i32) -> Result<()> {
        if peer < 0 || peer >= self.size() || peer == self.rank() {
            return Err(Error::Mpi {
                rank: self.rank(),
                call,
                message: format!(
                    "rank {peer} is not another rank of this communicator (ranks 0 to {})",
                    self.size() - 1
                ),
                hint: "name another rank; a buffer goes to its own rank with Buffer::copy_from"
                    .into(),
            });
        }
        if tag < 0 || tag as u32 > TAG_LIMIT {
            return Err(Error::Mpi {
                rank: self.rank(),
                call,
                message: format!("tag {tag} is outside 0..={TAG_LIMIT}"),
                hint: "use a tag every MPI library accepts (0 to 32767)".into(),
            });
        }
        Ok(())
    }
}

/// Runs `work` at once on a worker thread of its own (kept for reuse); its event.
pub(super) fn spawn(
    call: &'static str,
    work: impl FnOnce() -> Result<()> + Send + 'static,
) -> Result<Event> {
    let (event, trigger) = Event::user();
    super::workers::run(Box::new(move || match work() {
        Ok(()) => trigger.complete(),
        Err(e) => trigger.fail_with(e),
    }))
    .map_err(|e| Error::Invalid(format!("MPI {call}: could not start its thread: {e}")))?;
    Ok(event)
}

/// A header posted, waiting for its answer.
pub(super) struct Posted {
    header: Small,
    answer: Small,
    seq: u32,
    dtype: DType,
    count: usize,
    /// This rank's wire for the memory (chosen once, for the header's piece size).
    wire: Wire,
    /// The same-node path, where the header offered it.
    offer: Option<same_node::Offer>,
}

impl Inner {
    /// The piece size this rank wants on `wire`: its chunk when staged or mapped (pieces
    /// of a few MiB, all posted at once, measured faster over shared memory than one
    /// message of hundreds of MiB), whole messages for device pointers.
    fn piece_for(&self, wire: Wire) -> usize {
        match wire {
            Wire::Staged | Wire::Mapped => self.chunk,
            Wire::DeviceAware => WHOLE,
        }
    }

    pub(super) fn post_header<T: Element>(
        &self,
        memory: &Memory,
        count: usize,
        dest: i32,
        tag: i32,
    ) -> Result<Posted> {
        let seq = self.next_seq();
        let wire = self.route_of(memory).wire;
        // Staged through host chunks (not a device's own lent staging buffers, which MPI
        // reads in place): the same-node path saves a copy.
        let bytes = count * size_of::<T>();
        let staged = wire == Wire::Staged && !wire::lends(memory, bytes, self.piece_for(wire));
        let offer = self.same_node.offer(dest, memory, bytes, staged);
        let header = Header {
            dtype: dtype_code(T::DTYPE),
            count: count as u64,
            seq,
            piece: match offer {
                Some(_) => same_node::OFFER,
                None => self.piece_for(wire) as u64,
            },
        };
        let limit = self.limit();
        let answer = wire::post_small_recv(&self.answer, HEADER_BYTES, dest, seq as i32, limit)?;
        let header = wire::post_small_send(&self.head, header.encode(), dest, tag, limit)?;
        Ok(Posted {
            header,
            answer,
            seq,
            dtype: T::DTYPE,
            count,
            wire,
            offer,
        })
    }

    pub(super) fn send_body(
        &self,
        memory: &Arc<Memory>,
        bytes: usize,
        dest: i32,
        posted: Posted,
    ) -> Result<()> {
        posted.header.finish()?;
        let answer = posted.answer.finish()?;
        let piece = match Answer::decode(&answer) {
            Some(Answer::Go { piece }) => piece as usize,
            Some(Answer::Refuse { dtype, count }) => {
                return Err(Error::Mpi {
                    rank: self.head.rank(),
                    call: "send",
                    message: format!(
                        "rank {dest} refused the message: it receives {count} x {} and this rank sent {} x {}",
                        dtype_name(dtype),
                        posted.count,
                        posted.dtype.name()
                    ),
                    hint: "make the two buffers the same element type and length (Buffer::convert, Buffer::resize)".into(),
                })
            }
            None => return Err(garbled(self.head.rank(), dest, "answer")),
        };
        // Accepted (the receiver answered with the offer's piece size), or declined.
        if let (Some(offer), true) = (posted.offer, piece as u64 == same_node::OFFER) {
            let comms = (&self.data, &self.answer);
            let (sizes, seq) = ((bytes, self.chunk), posted.seq as i32);
            return self
                .same_node
                .send(comms, memory, offer, sizes, dest, seq, self.limit());
        }
        let piece = piece.clamp(1, WHOLE);
        self.with_chunks(memory, posted.wire, (bytes, piece), |chunks| {
            wire::send(
                &self.data,
                memory,
                bytes,
                posted.wire,
                piece,
                chunks,
                dest,
                posted.seq as i32,
                self.limit(),
            )
        })
    }

    /// Runs `work` with two host staging chunks for `memory` when `wire` is staged and
    /// the device lends no staging views of its own for these pieces, and keeps them for
    /// the next message after it succeeds (after a failure MPI may still use them; `wire`
    /// keeps them for the life of the process).
    fn with_chunks(
        &self,
        memory: &Memory,
        wire: Wire,
        (bytes, piece): (usize, usize),
        work: impl FnOnce(Option<[Arc<Memory>; 2]>) -> Result<()>,
    ) -> Result<()> {
        if wire != Wire::Staged || wire::lends(memory, bytes, piece) {
            return work(None);
        }
        let chunks = self.take_chunks(memory.location())?;
        work(Some(chunks.clone()))?;
        self.return_chunks(memory.location(), chunks);
        Ok(())
    }

    /// Posts the receive of the header `source` sends under `tag`.
    pub(super) fn post_header_recv(&self, source: i32, tag: i32) -> Result<Small> {
        wire::post_small_recv(&self.head, HEADER_BYTES, source, tag, self.limit())
    }

    /// Waits for a header and checks it against this rank's buffer: a mismatch is
    /// refused (the sender hears why) and is this rank's error.
    pub(super) fn check_header<T: Element>(
        &self,
        head: Small,
        count: usize,
        source: i32,
        tag: i32,
    ) -> Result<Header> {
        let bytes = head.finish()?;
        let header =
            Header::decode(&bytes).ok_or_else(|| garbled(self.head.rank(), source, "header"))?;
        if header.dtype == dtype_code(T::DTYPE) && header.count == count as u64 {
            return Ok(header);
        }
        let refusal = Answer::Refuse {
            dtype: dtype_code(T::DTYPE),
            count: count as u64,
        };
        wire::post_small_send(
            &self.answer,
            refusal.encode(),
            source,
            header.seq as i32,
            self.limit(),
        )?
        .finish()?;
        Err(Error::Mpi {
            rank: self.head.rank(),
            call: "recv",
            message: format!(
                "rank {source} sent {} x {} under tag {tag}, and this rank receives {count} x {}; nothing was written",
                header.count,
                dtype_name(header.dtype),
                T::DTYPE.name()
            ),
            hint: "make the two buffers the same element type and length (Buffer::convert, Buffer::resize)".into(),
        })
    }

    pub(super) fn recv_body(
        &self,
        memory: &Arc<Memory>,
        bytes: usize,
        source: i32,
        header: Header,
    ) -> Result<()> {
        let limit = self.limit();
        let seq = header.seq as i32;
        let offered = header.piece == same_node::OFFER;
        if offered && self.same_node.with(source) {
            let go = Answer::Go {
                piece: same_node::OFFER,
            };
            wire::post_small_send(&self.answer, go.encode(), source, seq, limit)?.finish()?;
            let comms = (&self.data, &self.answer);
            return self
                .same_node
                .recv(comms, memory, bytes, source, seq, limit);
        }
        let wire = self.route_of(memory).wire;
        // Declined (or never offered): the usual wires, in pieces both can take.
        let wanted = if offered {
            WHOLE
        } else {
            header.piece as usize
        };
        let piece = wanted.min(self.piece_for(wire)).clamp(1, WHOLE);
        let answer = Answer::Go {
            piece: piece as u64,
        }
        .encode();
        self.with_chunks(memory, wire, (bytes, piece), |chunks| {
            wire::recv(
                &self.data,
                memory,
                bytes,
                wire,
                piece,
                chunks,
                source,
                seq,
                limit,
                || {
                    wire::post_small_send(&self.answer, answer, source, seq, limit)?
                        .finish()
                        .map(drop)
                },
            )
        })
    }
}

fn garbled(rank: i32, peer: i32, what: &str) -> Error {
    Error::Mpi {
        rank,
        call: "recv",
        message: format!("the {what} from rank {peer} is not a locus message"),
        hint: "the two ranks disagree on which message comes next: is one rank sending raw MPI on the same \
               communicator and tag, or calling recv where the other calls something else?"
            .into(),
    }
}
