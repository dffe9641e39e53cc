//! MPI underneath [`locus::mpi`](crate::mpi), with the `mpi` feature. MPI is not a
//! location, so this folder has two files of its own: `result` (the result layer over
//! rsmpi's bindings, cudarc's name for it) and `wire` (moving the bytes of a
//! [`Memory`](crate::Memory) between ranks: in place, by device pointer, or staged
//! through host chunks, every wait bounded by a time limit). Like the backends it imports
//! the core only, and it holds every `unsafe` of the MPI layer.

pub mod result;
pub mod wire;

/// The old name of [`result`], for one release.
#[deprecated(
    note = "renamed `result`: cudarc's layer names (sys, result, entry points) in every vendor folder"
)]
pub mod raw {
    pub use super::result::*;
}
