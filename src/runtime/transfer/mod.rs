//! The transfer matrix: a route for every ordered pair of locations, with a one-line
//! reason, and the copy engine that follows it.
//!
//! Routes, cheapest first:
//! - [`RouteKind::InPlace`]: the consumer can use the memory where it is (no copy);
//! - [`RouteKind::Direct`]: one call of one backend (host <-> device, or within a device);
//! - [`RouteKind::Peer`]: two devices of one technology copy to each other directly;
//! - [`RouteKind::Mapped`]: one side is host-visible, so the other side's backend reads or
//!   writes straight into its mapping: one copy;
//! - [`RouteKind::Staged`]: through host memory, in chunks of reused buffers, with the
//!   device-to-host leg of chunk `i+1` overlapping the host-to-device leg of chunk `i`.
//!
//! The planner is a registry of [`CopyPath`]s keyed by (source technology, destination
//! technology) that backends fill at discovery ([`TransferMatrix`]); after those come
//! the generic paths (same device, host side, staged), so a pair that no backend serves
//! better always falls back to `Staged` and no pair is ever "not implemented".

mod async_copy;
mod copy;
pub mod matrix;
pub(crate) mod staged;
pub mod stats;

pub use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};
pub use copy::{access_route, copy_route, global_stats, route_between, route_table};
pub use matrix::TransferMatrix;
pub use stats::{TransferStats, TransferTotals};
