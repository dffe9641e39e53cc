//! # locus: one memory model across Host, CUDA, HIP, OpenMP, OpenCL, SYCL and WebGPU
//!
//! A [`Location`] names where memory lives. Backends are found at run time, so one
//! binary runs on any machine and uses whatever it has ([`available`], [`registry`]).
//! A [`Buffer`] is made at one location (the producer's) and used at others (the
//! consumers'): [`Buffer::access`] serves the data in place when
//! [`Memory::is_accessible_from`] says the consumer can reach it, and otherwise from a
//! cached replica that is made once and kept coherent (a write invalidates the others;
//! nothing is copied until someone reads elsewhere). Every ordered pair of locations has
//! a route in the transfer matrix ([`transfer`]): in place, direct, peer, mapped, or
//! staged through host memory; none is "not implemented".
//!
//! ```
//! use locus::{Buffer, Location};
//!
//! // Pick any location this machine has; the host is always there.
//! let device = locus::available().into_iter().last().unwrap_or(Location::Host);
//!
//! // Producer: the data is made on the device.
//! let mut a = Buffer::filled(device, 1024, 2.0f32)?;
//! // Consumer on the host: in place when the host can reach the device memory,
//! // otherwise one copy into a cached host replica.
//! assert!(a.access(Location::Host)?.as_slice()?.iter().all(|&x| x == 2.0));
//! // A second read costs nothing.
//! let before = a.stats().copies();
//! let _again = a.access(Location::Host)?;
//! assert_eq!(a.stats().copies(), before);
//! drop(_again);
//! // Writing on the host makes the host copy the only valid one.
//! a.access_mut(Location::Host)?.as_mut_slice()?[0] = 5.0;
//! assert_eq!(a.to_vec()?[0], 5.0);
//! # Ok::<(), locus::Error>(())
//! ```
//!
//! Where to look: [`core`](mod@core) ([`Location`], [`Error`], the [`Device`] trait,
//! [`Native`] handles, [`Memory`], [`Completion`], routes, [`core::config`]), the
//! [`backends`] (one folder per technology), the run-time layer ([`registry`],
//! [`Event`] and [`Queue`], [`access`], [`mirror`]s, the [`transfer`] matrix),
//! [`resource`] (RMM-style memory resources), [`Buffer`], [`codelet`] (OpenHMPP-style
//! kernels) and `mpi` (with the `mpi` feature). `ARCHITECTURE.md` draws the layers, what
//! each may import (`tests/layers.rs` holds the code to it) and how to add a technology.
//! The `locus` command-line tool (the transfer benchmark, the planner's calibration,
//! allocation-log replay) is the repository's `cli/` crate, and its `python/` folder
//! builds the `locus` Python package on top (numpy, DLPack).
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

pub mod backends;
mod buffer;
pub mod codelet;
pub mod core;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod resource;
mod runtime;

pub use crate::core::address_index::AddressInfo;
pub use crate::core::capability::{
    CopyBatches, HostMemoryInPlace, HostMemoryRegistration, InPlace, IpcHandles, Kernels,
    MemoryKinds, MemoryReport, NativeCalls, Placement, QueueAdoption, QueuedCopies, StagingViews,
};
pub use crate::core::completion::{Completion, NativeEvent, NativeWork};
pub use crate::core::device::{
    Device, DeviceInfo, Direction, HostAccess, HostReach, PhysicalDevice, ALIGNMENT,
};
pub use crate::core::element::{DType, Element};
pub use crate::core::error::{Error, Result};
pub use crate::core::kernel_language::KernelLanguage;
pub use crate::core::launch::{LaunchArg, LaunchSpec};
pub use crate::core::layout::Layout;
pub use crate::core::location::{Location, Technology};
pub use crate::core::location_text::{parse_locations, parse_technologies};
pub use crate::core::mapping::HostMapping;
pub use crate::core::memory::Memory;
pub use crate::core::native::{GpuMemory, MemoryKind, Native, UsmKind};
pub use crate::core::native_queue::NativeQueue;
pub use crate::core::pointer_queries::{DriverAllocation, PointerQueries};
pub use crate::core::rect_copy::{RectCopies, RectCopy};
pub use crate::core::region::Region;
pub use crate::core::registration::HostRegistration;
pub use crate::runtime::lookup::lookup;
/// Removes the shared memory objects (`/dev/shm/locus-*`) of this user's whose makers
/// ended without freeing them (killed, crashed); answers their names. locus runs it
/// itself the first time a process makes shared memory.
pub use backends::host::ipc::reclaim_stale as reclaim_stale_shared_memory;
pub use backends::host::ipc::IpcHandle;
pub use buffer::{
    Buffer, BufferView, BufferViewMut, ReadGuard, Scalar, Section, Transfer, Triplet, WriteGuard,
};
/// The half-precision types `f16` and `bf16` buffers hold (the `half` crate).
pub use half;
#[cfg(feature = "opencl")]
pub use runtime::adopt_opencl_context;
#[cfg(feature = "sycl")]
pub use runtime::adopt_sycl_context;
pub use runtime::adopted_queue::AdoptedQueue;
pub use runtime::event::{Event, EventTrigger};
pub use runtime::prefetch::PrefetchOutcome;
pub use runtime::queue::Queue;
pub use runtime::reachable::{reachable_kind, Reach};
pub use runtime::register_host_memory;
pub use runtime::registry::{available, device_as, registry, Registry};
pub use runtime::transfer::{
    copy_batch, BatchCopy, CopyOptions, RegionRoute, RegionRouteKind, RegionVia, Route, RouteKind,
    TransferStats, TransferTotals, Via,
};
pub use runtime::{access, event, mirror, trace, transfer};

/// Can code running at `accessor` use `memory` in place, without a copy? Not symmetric:
/// see [`access`].
pub fn is_accessible_from(memory: &Memory, accessor: Location) -> bool {
    memory.is_accessible_from(accessor)
}

/// The README's Rust code, compiled as a doctest so that the front page cannot drift
/// from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The guide's Rust snippets (docs/), compiled and run as doctests.
#[cfg(doctest)]
pub mod guide_doctests;
