//! Adaptors (RMM's `*_resource_adaptor`): each wraps any [`MemoryResource`], its
//! upstream, adds one behaviour and hands every allocation on to it; every adaptor names
//! its upstream (`upstream()`, RMM's `get_upstream_resource`).
//!
//! [`MemoryResource`]: crate::resource::MemoryResource

mod failure_callback;
mod limiting;
mod logging;
mod statistics;
mod tracking;

pub use failure_callback::FailureCallback;
pub use limiting::Limiting;
pub use logging::{log_file_from_env, Logging, LOG_FILE_ALIAS, LOG_FILE_VARIABLE, LOG_HEADER};
pub use statistics::{Statistics, StatisticsTotals};
pub use tracking::Tracking;
