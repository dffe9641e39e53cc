//! Collectives on buffers: broadcast, gather, all-gather and a sum all-reduce. Every
//! rank first tells every other its element type and length (and whether it could take
//! part at all), so a mismatch, or a rank that failed before the call, is an error on
//! every rank instead of a hang or a truncated message.

use super::comm::Comm;
use super::protocol::{dtype_code, dtype_name};
use crate::backends::mpi::{result, wire};
use crate::buffer::Buffer;
use crate::core::element::Element;
use crate::core::error::{Error, Result};
use crate::core::location::Location;

/// One rank's part in a collective, as every rank sees it.
#[derive(Debug, Clone, Copy)]
struct Part {
    dtype: u8,
    count: u64,
}

impl Comm {
    /// Every rank's element type and count, after an agreement that every rank could
    /// take part (`local` is this rank's readiness).
    fn parts<T: Element>(
        &self,
        call: &'static str,
        count: usize,
        local: Result<()>,
    ) -> Result<Vec<Part>> {
        self.agree(local)?;
        let mut mine = vec![0u8; 16];
        mine[0] = dtype_code(T::DTYPE);
        mine[8..16].copy_from_slice(&(count as u64).to_le_bytes());
        let all = wire::allgather_small(&self.inner.coll, mine, self.inner.limit(), call)?;
        let parts: Vec<Part> = all
            .chunks(16)
            .map(|r| Part {
                dtype: r[0],
                count: u64::from_le_bytes(r[8..16].try_into().unwrap_or([0; 8])),
            })
            .collect();
        if let Some((rank, p)) = parts
            .iter()
            .enumerate()
            .find(|(_, p)| p.dtype != dtype_code(T::DTYPE))
        {
            return Err(self.mismatch(
                call,
                format!(
                    "rank {rank} has {} elements and this rank {}",
                    dtype_name(p.dtype),
                    T::DTYPE.name()
                ),
            ));
        }
        Ok(parts)
    }

    fn mismatch(&self, call: &'static str, message: String) -> Error {
        Error::Mpi {
            rank: self.rank(),
            call,
            message: format!("{message}; nothing was moved"),
            hint: "every rank calls the collective with buffers of one element type (and, where it needs it, one length)".into(),
        }
    }

    fn check_root(&self, call: &'static str, root: i32) -> Result<()> {
        if root < 0 || root >= self.size() {
            return Err(Error::Mpi {
                rank: self.rank(),
                call,
                message: format!(
                    "root {root} is not a rank of this communicator (0 to {})",
                    self.size() - 1
                ),
                hint: "name a root every rank agrees on".into(),
            });
        }
        Ok(())
    }

    /// Broadcasts `root`'s buffer into every other rank's (all the same element type and
    /// length), each at its own location. Collective.
    pub fn broadcast<T: Element>(&self, buffer: &mut Buffer<T>, root: i32) -> Result<()> {
        let call = "broadcast";
        let ready = self.check_root(call, root);
        let parts = self.parts::<T>(call, buffer.len(), ready)?;
        same_length(self, call, &parts, buffer.len())?;
        let bytes = buffer.len() * size_of::<T>();
        let limit = self.inner.limit();
        if self.rank() == root {
            let memory = buffer.hand_out_current()?;
            let route = self.inner.route_of(&memory);
            return wire::bcast(&self.inner.coll, &memory, bytes, route.wire, root, limit);
        }
        let memory = buffer.hand_out_for_overwrite()?;
        let route = self.inner.route_of(&memory);
        let result = wire::bcast(&self.inner.coll, &memory, bytes, route.wire, root, limit);
        if let Err(e) = &result {
            buffer.mark_lost(&memory, e);
        }
        result
    }

    /// Gathers every rank's buffer (lengths may differ) into one buffer at `at` on
    /// `root`, in rank order: `Some` there, `None` on the other ranks. Collective.
    pub fn gather<T: Element>(
        &self,
        buffer: &Buffer<T>,
        root: i32,
        at: Location,
    ) -> Result<Option<Buffer<T>>> {
        let ready = self.check_root("gather", root);
        self.gather_into(buffer, Some(root), at, ready)
    }

    /// Gathers every rank's buffer (lengths may differ) into one buffer at `at` on every
    /// rank, in rank order. Collective.
    pub fn all_gather<T: Element>(&self, buffer: &Buffer<T>, at: Location) -> Result<Buffer<T>> {
        self.gather_into(buffer, None, at, Ok(()))?
            .ok_or_else(|| Error::Invalid("internal: all_gather gathered nothing".into()))
    }

    fn gather_into<T: Element>(
        &self,
        buffer: &Buffer<T>,
        root: Option<i32>,
        at: Location,
        ready: Result<()>,
    ) -> Result<Option<Buffer<T>>> {
        let call = if root.is_some() {
            "gather"
        } else {
            "all_gather"
        };
        let receives = root.is_none_or(|r| r == self.rank());
        // Everything that can fail on one rank alone happens before the agreement.
        let (local, memory) = match ready.and_then(|()| buffer.hand_out_current()) {
            Ok(memory) => (Ok(()), Some(memory)),
            Err(e) => (Err(e), None),
        };
        let parts = self.parts::<T>(call, buffer.len(), local)?;
        // `parts` failed unless every rank, this one too, had its memory.
        let memory = memory
            .ok_or_else(|| Error::Invalid(format!("internal: {call} went on without memory")))?;
        let size = size_of::<T>();
        let mut counts = Vec::with_capacity(parts.len());
        let mut displs = Vec::with_capacity(parts.len());
        let mut total = 0usize;
        for p in &parts {
            let bytes = (p.count as usize)
                .checked_mul(size)
                .filter(|&b| b <= result::MAX_COUNT);
            let start = i32::try_from(total).ok();
            match (bytes, start) {
                (Some(b), Some(s)) => {
                    counts.push(b as i32);
                    displs.push(s);
                    total += b;
                }
                _ => {
                    return Err(self.mismatch(
                        call,
                        "the gathered data passes 2^31 bytes, more than one MPI gather moves"
                            .into(),
                    ))
                }
            }
        }
        let limit = self.inner.limit();
        let send = (
            &memory,
            buffer.len() * size,
            self.inner.route_of(&memory).wire,
        );
        if !receives {
            wire::gatherv(&self.inner.coll, send, None, counts, displs, root, limit)?;
            return Ok(None);
        }
        let mut out = Buffer::<T>::zeroed(at, total / size.max(1))?;
        let target = out.hand_out_for_overwrite()?;
        let wire = self.inner.route_of(&target).wire;
        wire::gatherv(
            &self.inner.coll,
            send,
            Some((&target, wire)),
            counts,
            displs,
            root,
            limit,
        )?;
        Ok(Some(out))
    }

    /// Sums every rank's buffer element by element, into every rank's buffer (all the
    /// same element type and length; not for f16 / bf16, which MPI cannot sum).
    /// Collective.
    pub fn all_reduce_sum<T: Element>(&self, buffer: &mut Buffer<T>) -> Result<()> {
        let call = "all_reduce_sum";
        let ready = match result::can_sum(T::DTYPE) {
            true => Ok(()),
            false => Err(Error::Mpi {
                rank: self.rank(),
                call,
                message: format!("MPI has no sum of {}", T::DTYPE.name()),
                hint: "convert the buffer to f32 first (Buffer::convert)".into(),
            }),
        };
        let parts = self.parts::<T>(call, buffer.len(), ready)?;
        same_length(self, call, &parts, buffer.len())?;
        let memory = buffer.hand_out_for_overwrite()?;
        let wire = self.inner.route_of(&memory).wire;
        let result = wire::allreduce_sum(
            &self.inner.coll,
            &memory,
            buffer.len(),
            T::DTYPE,
            wire,
            self.inner.limit(),
        );
        if let Err(e) = &result {
            buffer.mark_lost(&memory, e);
        }
        result
    }
}

fn same_length(comm: &Comm, call: &'static str, parts: &[Part], len: usize) -> Result<()> {
    match parts
        .iter()
        .enumerate()
        .find(|(_, p)| p.count != len as u64)
    {
        Some((rank, p)) => Err(comm.mismatch(
            call,
            format!("rank {rank} has {} elements and this rank {len}", p.count),
        )),
        None => Ok(()),
    }
}
