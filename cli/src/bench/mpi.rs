//! `locus bench --mpi` (run under `mpirun -np 2`): bandwidth and latency between rank 0
//! and rank 1 for every pair of locations (rank 0's x rank 1's), through locus, against
//! MPI's own host-to-host send / receive of the same sizes in the same run, in the shape
//! of the OSU micro-benchmarks: `osu_bw` (a window of non-blocking sends, then a one-byte
//! acknowledgement) and `osu_latency` (ping-pong, half the round trip). locus's windows
//! and MPI's alternate, and each side's bandwidth is that of its median window, so that a
//! busy moment of a shared machine does not land on one side only. Rank 0 also times the
//! device-to-host copy of its location at each size, the leg a staged send pays. Where
//! the two ranks share a node, locus runs twice: with its same-node path (shared memory)
//! and without it (`no-IPC`: MPI's transport, as between nodes).

use std::time::Instant;

use ::mpi::traits::{Communicator, Destination, Source};
use serde::{Deserialize, Serialize};

use super::stats::format_size;
use locus::mpi::Comm;
use locus::{Buffer, Event, Location};
use locus::{Error, Result};

/// One pair of locations at one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MpiCell {
    /// Rank 0's location (the sender).
    pub src: String,
    /// Rank 1's location (the receiver).
    pub dst: String,
    /// The sender's wire and the receiver's (`mapped -> staged`).
    pub wires: String,
    /// Bytes per message.
    pub bytes: u64,
    /// Messages in flight per window.
    pub window: usize,
    /// Through locus, GB/s (10^9 bytes per second).
    pub locus_gbps: f64,
    /// Through locus with its same-node path off (MPI's transport, as between nodes),
    /// GB/s; `None` where the ranks are not on one node (the two are the same).
    #[serde(default)]
    pub locus_no_ipc_gbps: Option<f64>,
    /// MPI's own host-to-host send / receive of the same size and window, GB/s.
    pub mpi_gbps: f64,
    /// Rank 0's device-to-host copy of this size, GB/s (memcpy for host memory).
    pub d2h_gbps: f64,
    /// Half a ping-pong through locus, microseconds (sizes up to 1 MiB).
    pub locus_latency_us: Option<f64>,
    /// Half a ping-pong through MPI on host memory, microseconds.
    pub mpi_latency_us: Option<f64>,
}

/// The whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MpiReport {
    /// The MPI library.
    pub library: String,
    /// Ranks in the job.
    pub ranks: i32,
    /// Every cell, in order.
    pub cells: Vec<MpiCell>,
}

/// Messages per window for `bytes`-byte messages: 64 as osu_bw, fewer for large ones
/// (at most 64 MiB in flight).
fn window_for(bytes: u64) -> usize {
    ((64u64 << 20) / bytes.max(1)).clamp(1, 64) as usize
}

/// Windows timed for `bytes` (at least 5, about 1 GiB in all).
fn windows_for(bytes: u64, window: usize) -> usize {
    ((1u64 << 30) / (bytes.max(1) * window as u64)).clamp(5, 50) as usize
}

/// The median of `samples` (0 when there are none).
fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(0.0)
}

fn gbps(bytes: f64, seconds: f64) -> f64 {
    bytes / seconds.max(1e-12) / 1e9
}

/// Runs the benchmark between the job's two ranks; rank 0 gets the report, rank 1 `None`.
pub fn run(
    comm: &Comm,
    locations: &[Location],
    sizes: &[u64],
    library: String,
) -> Result<Option<MpiReport>> {
    if comm.size() != 2 {
        return Err(Error::Invalid(format!(
            "locus bench --mpi runs between exactly two ranks, and this job has {}: run it as mpirun -np 2 locus bench --mpi",
            comm.size()
        )));
    }
    let world = ::mpi::topology::SimpleCommunicator::world();
    let me = comm.rank();
    let mut cells = Vec::new();
    for &src in locations {
        for &dst in locations {
            // Rank 1's wire, as rank 0 sees it for the same location (one machine's view).
            let wire_dst = match me {
                0 => Some(wire_of(comm, dst)?),
                _ => None,
            };
            for &bytes in sizes {
                let here = if me == 0 { src } else { dst };
                let cell = measure(comm, &world, here, bytes as usize)?;
                let Some(wire_dst) = wire_dst else {
                    continue;
                };
                let (d2h, wire_src) = device_to_host(comm, src, bytes as usize)?;
                cells.push(MpiCell {
                    src: src.to_string(),
                    dst: dst.to_string(),
                    wires: format!("{wire_src} -> {wire_dst}"),
                    bytes,
                    window: cell.window,
                    locus_gbps: cell.locus_gbps,
                    locus_no_ipc_gbps: cell.locus_no_ipc_gbps,
                    mpi_gbps: cell.mpi_gbps,
                    d2h_gbps: d2h,
                    locus_latency_us: cell.locus_latency_us,
                    mpi_latency_us: cell.mpi_latency_us,
                });
            }
        }
    }
    comm.barrier()?;
    Ok((me == 0).then(|| MpiReport {
        library,
        ranks: comm.size(),
        cells,
    }))
}

struct Measured {
    window: usize,
    locus_gbps: f64,
    locus_no_ipc_gbps: Option<f64>,
    mpi_gbps: f64,
    locus_latency_us: Option<f64>,
    mpi_latency_us: Option<f64>,
}

/// One size between ranks 0 and 1, this rank's buffers at `here`.
fn measure(
    comm: &Comm,
    world: &::mpi::topology::SimpleCommunicator,
    here: Location,
    bytes: usize,
) -> Result<Measured> {
    let me = comm.rank();
    let peer = 1 - me;
    let window = window_for(bytes as u64);
    let windows = windows_for(bytes as u64, window);
    let mut bufs: Vec<Buffer<u8>> = (0..window)
        .map(|i| Buffer::filled(here, bytes, i as u8))
        .collect::<Result<_>>()?;
    let mut ack = Buffer::<u8>::zeroed(Location::Host, 1)?;
    // MPI's own, on host memory: the same window and acknowledgement. The memory is a
    // locus host buffer's, so both sides send from the same kind of pages (the host's
    // large allocations ask for transparent huge pages, which the kernel's
    // cross-process copy reads twice as fast as a plain `Vec`'s here).
    let mut pages: Vec<Buffer<u8>> = (0..window)
        .map(|_| Buffer::filled(Location::Host, bytes, 1))
        .collect::<Result<_>>()?;
    let mut guards = pages
        .iter_mut()
        .map(|b| b.access_mut(Location::Host))
        .collect::<Result<Vec<_>>>()?;
    let mut host: Vec<&mut [u8]> = guards
        .iter_mut()
        .map(|g| g.as_mut_slice())
        .collect::<Result<_>>()?;
    let other = world.process_at_rank(peer);
    // locus's windows (with its same-node path, and without it where the ranks share a
    // node) and MPI's alternate (one of each to warm up), so that all see the same state
    // of a shared machine; each side's time is the median window's.
    let same_node = comm.same_node(peer);
    let (mut ours, mut no_ipc, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for w in 0..=windows {
        let with_ipc = locus_window(comm, &mut bufs, &mut ack, peer)?;
        if same_node {
            comm.set_same_node_ipc(false);
            let without = locus_window(comm, &mut bufs, &mut ack, peer);
            comm.set_same_node_ipc(true);
            if w > 0 {
                no_ipc.push(without?);
            }
        }
        comm.barrier()?;
        let start = Instant::now();
        ::mpi::request::scope(|scope| {
            if me == 0 {
                let requests: Vec<_> = host
                    .iter()
                    .map(|b| other.immediate_send_with_tag(scope, &b[..], 21))
                    .collect();
                requests.into_iter().for_each(|r| {
                    r.wait();
                });
                let _ = other.receive_with_tag::<u8>(22);
            } else {
                let requests: Vec<_> = host
                    .iter_mut()
                    .map(|b| other.immediate_receive_into_with_tag(scope, &mut b[..], 21))
                    .collect();
                requests.into_iter().for_each(|r| {
                    r.wait();
                });
                other.send_with_tag(&0u8, 22);
            }
        });
        if w > 0 {
            ours.push(with_ipc);
            theirs.push(start.elapsed().as_secs_f64());
        }
    }
    let per_window = (window * bytes) as f64;
    let (locus_latency_us, mpi_latency_us) = if bytes <= 1 << 20 {
        let (a, b) = latency(comm, world, &mut bufs[0], host[0], peer)?;
        (Some(a), Some(b))
    } else {
        (None, None)
    };
    Ok(Measured {
        window,
        locus_gbps: gbps(per_window, median(&mut ours)),
        locus_no_ipc_gbps: same_node.then(|| gbps(per_window, median(&mut no_ipc))),
        mpi_gbps: gbps(per_window, median(&mut theirs)),
        locus_latency_us,
        mpi_latency_us,
    })
}

/// One window through locus: `bufs.len()` non-blocking messages from rank 0 to rank 1,
/// then a one-byte acknowledgement; seconds.
fn locus_window(
    comm: &Comm,
    bufs: &mut [Buffer<u8>],
    ack: &mut Buffer<u8>,
    peer: i32,
) -> Result<f64> {
    comm.barrier()?;
    let start = Instant::now();
    if comm.rank() == 0 {
        let events: Vec<Event> = bufs
            .iter()
            .map(|b| comm.isend(b, peer, 11))
            .collect::<Result<_>>()?;
        events.iter().try_for_each(Event::wait)?;
        comm.recv(ack, peer, 12)?;
    } else {
        let events: Vec<Event> = bufs
            .iter_mut()
            .map(|b| comm.irecv(b, peer, 11))
            .collect::<Result<_>>()?;
        events.iter().try_for_each(Event::wait)?;
        comm.send(ack, peer, 12)?;
    }
    Ok(start.elapsed().as_secs_f64())
}

/// Half a ping-pong, through locus and through MPI on host memory, microseconds.
fn latency(
    comm: &Comm,
    world: &::mpi::topology::SimpleCommunicator,
    buf: &mut Buffer<u8>,
    host: &mut [u8],
    peer: i32,
) -> Result<(f64, f64)> {
    let rounds = 200;
    let me = comm.rank();
    comm.barrier()?;
    let start = Instant::now();
    for _ in 0..rounds {
        if me == 0 {
            comm.send(buf, peer, 13)?;
            comm.recv(buf, peer, 14)?;
        } else {
            comm.recv(buf, peer, 13)?;
            comm.send(buf, peer, 14)?;
        }
    }
    let ours = start.elapsed().as_secs_f64() / rounds as f64 / 2.0 * 1e6;
    let other = world.process_at_rank(peer);
    comm.barrier()?;
    let start = Instant::now();
    for _ in 0..rounds {
        if me == 0 {
            other.send_with_tag(&host[..], 23);
            other.receive_into_with_tag(&mut host[..], 24);
        } else {
            other.receive_into_with_tag(&mut host[..], 23);
            other.send_with_tag(&host[..], 24);
        }
    }
    let theirs = start.elapsed().as_secs_f64() / rounds as f64 / 2.0 * 1e6;
    Ok((ours, theirs))
}

/// Rank 0's device-to-host copy of `bytes` at `at` (what a staged send's first leg
/// costs), GB/s, and the wire `at`'s memory takes.
fn device_to_host(comm: &Comm, at: Location, bytes: usize) -> Result<(f64, locus::mpi::Wire)> {
    let b = Buffer::<u8>::filled(at, bytes, 3)?;
    let memory = home_memory(&b)?;
    let wire = comm.route_of(&memory).wire;
    let mut host = vec![0u8; bytes];
    memory.read(0, &mut host)?;
    let reps = windows_for(bytes as u64, 1).min(20);
    let start = Instant::now();
    for _ in 0..reps {
        memory.read(0, &mut host)?;
    }
    Ok((
        gbps((reps * bytes) as f64, start.elapsed().as_secs_f64()),
        wire,
    ))
}

/// The memory at a buffer's home location.
fn home_memory(b: &Buffer<u8>) -> Result<std::sync::Arc<locus::Memory>> {
    let at = b.location();
    b.memory_at(at)
        .ok_or_else(|| Error::Invalid(format!("{at}: the buffer has no memory there")))
}

/// The wire memory at `at` takes from this rank.
fn wire_of(comm: &Comm, at: Location) -> Result<locus::mpi::Wire> {
    let memory = home_memory(&Buffer::<u8>::zeroed(at, 1)?)?;
    Ok(comm.route_of(&memory).wire)
}

/// The report as a table.
pub fn table(report: &MpiReport) -> String {
    let mut out = format!(
        "locus bench --mpi: {} ranks, {}\n{:<10} {:<10} {:<18} {:>9} {:>4} {:>10} {:>10} {:>10} {:>7} {:>9} {:>9} {:>9}\n",
        report.ranks, report.library, "rank 0", "rank 1", "wires", "size", "win", "locus GB/s", "no-IPC", "MPI GB/s", "x MPI", "d2h GB/s", "lat us", "MPI us"
    );
    for c in &report.cells {
        let lat = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        out.push_str(&format!(
            "{:<10} {:<10} {:<18} {:>9} {:>4} {:>10.2} {:>10} {:>10.2} {:>7.2} {:>9.2} {:>9} {:>9}\n",
            c.src,
            c.dst,
            c.wires,
            format_size(c.bytes),
            c.window,
            c.locus_gbps,
            c.locus_no_ipc_gbps.map_or("-".to_string(), |v| format!("{v:.2}")),
            c.mpi_gbps,
            c.locus_gbps / c.mpi_gbps.max(1e-12),
            c.d2h_gbps,
            lat(c.locus_latency_us),
            lat(c.mpi_latency_us)
        ));
    }
    out
}
