//! One folder per technology, each behind the core's [`Device`](crate::Device) trait and
//! importing the core only (never another backend, the registry, the transfer matrix,
//! resources or buffers; `tests/layers.rs` checks). Each folder has the same files:
//!
//! - `mod.rs`: what the technology is, how it is loaded, and `discover()`;
//! - `device.rs`: its device type and the `Device` implementation (memory, copies);
//! - `work.rs`: its own queued-work type behind [`NativeWork`](crate::NativeWork)
//!   (events, submissions), and the native asynchronous copies that make it;
//! - `kernels.rs`: how it builds, caches and launches kernels.
//!
//! Three shared helpers sit beside them: [`loading`] (vendor libraries loaded at run time,
//! with messages that say what was tried), `pages` (large host allocations as mapped
//! pages, on huge pages where Linux gives them: the host's and OpenMP's on the initial
//! device) and `cuda_hip` (what CUDA and HIP share; only those two import it).
//!
//! With the `mpi` feature, `mpi.rs` is MPI's result layer under `locus::mpi`:
//! not a location, so a file beside `loading`, importing the core only.
//!
//! Everything `unsafe` that talks to a runtime lives below this module.

use crate::core::discovery::{Discovery, Unavailable};
use crate::core::location::Technology;

#[cfg(any(feature = "cuda", feature = "hip"))]
pub mod cuda_hip;
pub(crate) mod environment_guard;
pub mod host;
pub mod loading;
#[cfg(feature = "mpi")]
pub mod mpi;
pub(crate) mod pages;

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "hip")]
pub mod hip;
#[cfg(feature = "opencl")]
pub mod opencl;
#[cfg(feature = "openmp")]
pub mod openmp;
#[cfg(feature = "sycl")]
pub mod sycl;
#[cfg(feature = "webgpu")]
pub mod webgpu;

/// Discovers one technology. Never panics, never aborts: a missing runtime is an `Err`
/// with the reason.
pub(crate) fn discover(technology: Technology) -> Result<Discovery, Unavailable> {
    match technology {
        Technology::Host => Ok(host::discover()),
        #[cfg(feature = "openmp")]
        Technology::OpenMp => openmp::discover(),
        #[cfg(feature = "opencl")]
        Technology::OpenCl => opencl::discover(),
        #[cfg(feature = "webgpu")]
        Technology::WebGpu => webgpu::discover(),
        #[cfg(feature = "cuda")]
        Technology::Cuda => cuda::discover(),
        #[cfg(feature = "hip")]
        Technology::Hip => hip::discover(),
        #[cfg(feature = "sycl")]
        Technology::Sycl => sycl::discover(),
        #[allow(unreachable_patterns)]
        other => Err(format!(
            "locus was built without the `{other}` feature; rebuild with `--features {other}`"
        )
        .into()),
    }
}
