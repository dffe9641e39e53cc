//! The `locus` command-line tool's library: the cross-backend transfer benchmark
//! ([`bench`](mod@bench): `locus bench`, its bandwidthTest shape, the planner's calibration pass
//! and MPI ranks) and allocation-log replay ([`replay`](mod@replay): `locus replay`), over the
//! `locus` library's public API; and the summary of a trace file
//! ([`trace_summary`](mod@trace_summary): `locus trace summary`) and its picture
//! ([`trace_svg`](mod@trace_svg): `locus trace svg`). The benchmarks in the repository's `benches/` use its
//! timing helpers.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![deny(missing_docs)]

pub mod bench;
pub mod replay;
pub mod trace_summary;
pub mod trace_svg;

pub use replay::{replay, ReplayReport};
