//! MPI underneath [`locus::mpi`](crate::mpi), with the `mpi` feature. MPI is not a
//! location, so this folder has its own two files instead of a backend's four: `raw`
//! (the result layer over rsmpi's bindings) and `wire` (moving the bytes of a
//! [`Memory`](crate::Memory) between ranks: in place, by device pointer, or staged
//! through host chunks, every wait bounded by a time limit). Like the backends it imports
//! the core only, and it holds every `unsafe` of the MPI layer.

pub mod raw;
pub mod wire;
