//! The run-time layer, above the core and the backends: discovery ([`registry`]), events
//! and queues ([`event`], [`queue`], [`adopted_queue`]: a user's runtime queue adopted),
//! the worker threads that run what no runtime can queue ([`worker`]), accessibility ([`access`]), memory several locations reach in place ([`reachable`]), umem mirrors ([`mirror`]) and the
//! transfer matrix with its copy engine ([`transfer`]), and the trace of what moved ([`trace`]).

pub mod access;
#[cfg(any(feature = "opencl", feature = "sycl"))]
mod adopt_context;
#[cfg(feature = "opencl")]
pub use adopt_context::adopt_opencl_context;
#[cfg(feature = "sycl")]
pub use adopt_context::adopt_sycl_context;
pub mod adopted_queue;
mod adoptions;
mod allocate;
pub use allocate::register_host_memory;
pub mod event;
pub(crate) mod ipc;
pub mod lookup;
pub mod mirror;
pub mod prefetch;
pub mod queue;
pub mod reachable;
pub mod registry;
pub mod trace;
pub mod transfer;
pub(crate) mod worker;
