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
//! the generic paths ([`paths`]: same device, either side's runtime reading or writing
//! through the other's host view, a memcpy between two mappings, staged in two chunk
//! sizes), so no pair is ever "not implemented". Every path that applies to a pair is a
//! candidate; the planner chooses per size class by the costs a calibration measured on
//! this machine ([`cost`], `locus calibrate`), or by a fixed order before one exists.

mod async_copy;
mod batch;
mod copy;
pub mod cost;
pub mod matrix;
pub mod paths;
mod region_async;
mod region_choice;
mod region_copy;
mod region_rect;
mod region_route;
mod region_spread;
mod region_staging;
pub(crate) mod staged;
pub mod stats;

pub use crate::core::copy_span::CopySpan;
pub use crate::core::route::{CopyPath, Endpoint, Route, RouteKind};
pub(crate) use async_copy::{plan_for, start_copy};
pub use batch::{copy_batch, BatchCopy};
pub(crate) use copy::copy_on_plan;
pub use copy::{
    access_route, copy_route, copy_route_for, global_stats, route_between, route_table,
    CopyOptions, Via,
};
pub use cost::Calibration;
pub use matrix::{Plan, TransferMatrix};
pub use region_copy::{copy_region, plan_region};
pub use region_route::{RegionRoute, RegionRouteKind, RegionVia};
pub use stats::{TransferStats, TransferTotals};
