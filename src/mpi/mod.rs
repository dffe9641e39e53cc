//! Buffers between processes and nodes over MPI (the `mpi` feature): point-to-point
//! messages and collectives between [`Buffer`](crate::Buffer)s at any location on each
//! rank, through the MPI library rsmpi finds at build time (Open MPI or MPICH).
//!
//! The route across ranks explains itself, as the in-process matrix does
//! ([`Comm::route_of`]): **device-aware** where the MPI library takes the technology's
//! device pointers (Open MPI's `MPIX_Query_cuda_support` / `MPIX_Query_rocm_support`, or
//! `LOCUS_MPI_DEVICE_AWARE=1/0` to force it), **mapped** where the memory is host-visible
//! in place (host memory, OpenMP on the initial device, a host-unified OpenCL device,
//! SYCL shared USM, WebGPU on unified memory: no copy), and **staged** otherwise, through
//! two reused host chunks (pinned where the device offers it) with the device copy of one
//! overlapping the network transfer of the other. The two ranks' wires are independent:
//! an OpenCL rank can send to a WebGPU rank. Regions of buffers (a halo face, a column)
//! go without a temporary of the program's: [`Comm::send_region`] packs them at the
//! buffer's location and [`Comm::recv_region`] unpacks them there.
//!
//! Every wait is bounded (`LOCUS_MPI_TIMEOUT_S`, 300 s unless set; [`Comm::set_timeout`]);
//! a mismatched element type or length is an error on both ranks before any data is
//! written; [`Comm::agree`] turns one rank's failure (a location it lacks) into an error
//! on every rank.
//!
//! ```no_run
//! # fn main() -> locus::Result<()> {
//! use locus::mpi::Mpi;
//! use locus::{Buffer, Location};
//!
//! let mpi = Mpi::init()?;
//! let world = mpi.world()?;
//! // Each rank picks its own location; a rank that lacks it stops every rank.
//! let at: Location = std::env::args().nth(1).unwrap_or("host".into()).parse()?;
//! let mut data = world.agree(Buffer::<f32>::zeroed(at, 1 << 20))?;
//! if world.rank() == 0 {
//!     data = Buffer::filled(at, 1 << 20, 1.5)?;
//!     world.send(&data, 1, 7)?;
//! } else if world.rank() == 1 {
//!     world.recv(&mut data, 0, 7)?;
//!     assert!(data.to_vec()?.iter().all(|&x| x == 1.5));
//! }
//! world.all_reduce_sum(&mut data)?;
//! # Ok(()) }
//! ```

mod collective;
mod comm;
mod point_to_point;
mod protocol;
mod regions;
mod same_node;
mod workers;

pub use crate::backends::mpi::wire::Wire;
pub use comm::{Comm, Mpi, Policy, WireRoute};
