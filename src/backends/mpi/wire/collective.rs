//! Small control messages (headers and answers, posted and finished later) and the
//! collectives between ranks (barrier, all-gather of small messages, broadcast, gather,
//! all-reduce), each wait bounded by the communicator's time limit.

use super::*;

/// A small control message posted, not yet finished.
pub struct Small {
    flight: Flight,
    what: String,
}

impl Small {
    /// Waits for it within its limit; the bytes received (empty for a send).
    pub fn finish(mut self) -> Result<Vec<u8>> {
        let got = self.flight.wait(0, &self.what)?.map_or(0, |s| s.bytes);
        let data = self
            .flight
            .keep
            .pop()
            .and_then(|b| b.downcast::<Vec<u8>>().ok());
        let mut data = data.map(|d| *d).unwrap_or_default();
        data.truncate(got);
        Ok(data)
    }
}

/// Posts a small control message to `dest` (owned, so a late send reads nothing freed).
pub fn post_small_send(
    comm: &RawComm,
    data: Vec<u8>,
    dest: i32,
    tag: i32,
    limit: Limit,
) -> Result<Small> {
    let mut flight = Flight::new(1, limit);
    let len = data.len();
    // SAFETY: `data` is moved into `flight` (a Vec's heap block does not move), which
    // keeps it until the send finishes or buries it.
    flight.slots[0] = Some(unsafe { comm.isend(data.as_ptr(), len, dest, tag)? });
    flight.keep(data);
    Ok(Small {
        flight,
        what: format!("a {len}-byte control message to rank {dest} (tag {tag})"),
    })
}

/// Posts the receive of a small control message of at most `max` bytes.
pub fn post_small_recv(
    comm: &RawComm,
    max: usize,
    source: i32,
    tag: i32,
    limit: Limit,
) -> Result<Small> {
    let mut data = vec![0u8; max];
    let mut flight = Flight::new(1, limit);
    // SAFETY: as in `post_small_send`: `data` lives in `flight` until the receive finishes.
    flight.slots[0] = Some(unsafe { comm.irecv(data.as_mut_ptr(), max, source, tag)? });
    flight.keep(data);
    Ok(Small {
        flight,
        what: format!("a message from rank {source} (tag {tag})"),
    })
}

/// Waits until every rank has reached it (`MPI_Ibarrier`), within the limit.
pub fn barrier(comm: &RawComm, limit: Limit) -> Result<()> {
    let mut flight = Flight::new(1, limit);
    flight.slots[0] = Some(comm.ibarrier()?);
    flight.wait_all("a barrier (a rank died or skipped the call?)")
}

/// Every rank's `mine` (all the same length), concatenated in rank order.
pub fn allgather_small(comm: &RawComm, mine: Vec<u8>, limit: Limit, what: &str) -> Result<Vec<u8>> {
    let n = comm.size() as usize;
    let len = mine.len();
    let counts = vec![len as i32; n];
    let displs: Vec<i32> = (0..n).map(|i| (i * len) as i32).collect();
    let mut all = vec![0u8; len * n];
    let mut flight = Flight::new(1, limit);
    // SAFETY: `mine`, `all`, `counts` and `displs` are moved into `flight` (their heap
    // blocks stay put) and kept until the gather finishes or buried.
    flight.slots[0] = Some(unsafe {
        comm.igatherv(mine.as_ptr(), len, all.as_mut_ptr(), &counts, &displs, None)?
    });
    let all_ptr = all.as_ptr();
    flight.keep((mine, counts, displs));
    flight.keep(all);
    flight.wait(0, what)?;
    // SAFETY: the gather finished; `all` (kept in `flight`) holds len * n bytes.
    Ok(unsafe { std::slice::from_raw_parts(all_ptr, len * n) }.to_vec())
}

/// Host bytes of `memory` for a collective: in place (mapped), at its device address,
/// or a host copy (staged; `load` reads the memory into it first).
fn collective_address(
    memory: &Arc<Memory>,
    bytes: usize,
    wire: Wire,
    write: bool,
    load: bool,
    flight: &mut Flight,
) -> Result<*mut u8> {
    if wire == Wire::Staged {
        let mut host = vec![0u8; bytes];
        if load {
            memory.read(0, &mut host)?;
        }
        let ptr = host.as_mut_ptr();
        flight.keep(host);
        return Ok(ptr);
    }
    let (ptr, keep) = address(memory, bytes, wire, write)?;
    flight.keep.push(keep);
    Ok(ptr)
}

/// Writes a staged collective's result back into `memory`.
fn store(memory: &Memory, ptr: *const u8, bytes: usize, wire: Wire) -> Result<()> {
    if wire != Wire::Staged || bytes == 0 {
        return Ok(());
    }
    // SAFETY: `ptr` is the staged host copy of `bytes` bytes, kept alive by the caller's
    // flight, and the collective that wrote it finished.
    memory.write(0, unsafe { std::slice::from_raw_parts(ptr, bytes) })
}

/// Broadcasts `bytes` of `memory` from `root` (read there, written elsewhere).
pub fn bcast(
    comm: &RawComm,
    memory: &Arc<Memory>,
    bytes: usize,
    wire: Wire,
    root: i32,
    limit: Limit,
) -> Result<()> {
    let root_here = comm.rank() == root;
    let mut flight = Flight::new(1, limit);
    let ptr = collective_address(memory, bytes, wire, !root_here, root_here, &mut flight)?;
    for (at, len) in pieces(bytes, 1 << 30) {
        // SAFETY: `ptr` addresses `bytes` bytes kept valid by `flight`.
        flight.slots[0] = Some(unsafe { comm.ibcast(ptr.wrapping_add(at), len, root)? });
        flight.wait(0, &format!("broadcasting {bytes} bytes from rank {root}"))?;
    }
    if !root_here {
        store(memory, ptr, bytes, wire)?;
    }
    Ok(())
}

/// Gathers every rank's `send_bytes` of `send` into `recv` (at `root`, or everywhere when
/// `root` is `None`): rank i's bytes at `displs[i]`.
#[allow(clippy::too_many_arguments)]
pub fn gatherv(
    comm: &RawComm,
    send: (&Arc<Memory>, usize, Wire),
    recv: Option<(&Arc<Memory>, Wire)>,
    counts: Vec<i32>,
    displs: Vec<i32>,
    root: Option<i32>,
    limit: Limit,
) -> Result<()> {
    let total: usize = counts.iter().map(|&c| c.max(0) as usize).sum();
    let mut flight = Flight::new(1, limit);
    let send_ptr = collective_address(send.0, send.1, send.2, false, true, &mut flight)?;
    let recv_ptr = match recv {
        Some((memory, wire)) => collective_address(memory, total, wire, true, false, &mut flight)?,
        None => std::ptr::null_mut(),
    };
    // SAFETY: both addresses are kept valid by `flight`, as are `counts` and `displs`
    // (moved into it below, their heap blocks unmoved).
    flight.slots[0] =
        Some(unsafe { comm.igatherv(send_ptr, send.1, recv_ptr, &counts, &displs, root)? });
    flight.keep((counts, displs));
    flight.wait(0, &format!("gathering {total} bytes"))?;
    if let Some((memory, wire)) = recv {
        store(memory, recv_ptr, total, wire)?;
    }
    Ok(())
}

/// Sums `count` elements of `dtype` in `memory` across ranks, into `memory` on every rank.
pub fn allreduce_sum(
    comm: &RawComm,
    memory: &Arc<Memory>,
    count: usize,
    dtype: DType,
    wire: Wire,
    limit: Limit,
) -> Result<()> {
    let bytes = count * dtype.size();
    let mut flight = Flight::new(1, limit);
    // MPI_IN_PLACE is a different address in every MPI library, so the send side is a
    // host copy of the data.
    let mut mine = vec![0u8; bytes];
    memory.read(0, &mut mine)?;
    let mine_ptr = mine.as_ptr();
    flight.keep(mine);
    let recv = collective_address(memory, bytes, wire, true, false, &mut flight)?;
    let step = (1usize << 30) / dtype.size();
    for (at, n) in pieces(count, step) {
        let off = at * dtype.size();
        // SAFETY: `mine` (its heap block unmoved) and `recv` are kept valid by `flight`.
        flight.slots[0] = Some(unsafe {
            comm.iallreduce_sum(mine_ptr.wrapping_add(off), recv.wrapping_add(off), n, dtype)?
        });
        flight.wait(0, &format!("summing {count} {} elements", dtype.name()))?;
    }
    store(memory, recv, bytes, wire)
}
