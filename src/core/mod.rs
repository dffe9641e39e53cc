//! The core: what every other layer is written in terms of. It imports nothing above it
//! (the layering test, `tests/layers.rs`, holds every file to that).
//!
//! - [`config`]: every `LOCUS_*` environment variable, its table and typed readers;
//! - [`location`]: where memory lives ([`Location`](location::Location), [`Technology`](location::Technology));
//!   [`location_text`]: both parsed from text;
//! - [`error`]: the one error type;
//! - [`element`]: numeric element types and their conversions (Rust's `as`);
//! - [`device`]: the [`Device`](device::Device) trait every backend implements, and the facts a device reports;
//! - [`capability`]: a device's optional abilities (IPC handles, kernels, queued copies, ...), a trait each;
//! - [`discovery`]: what finding one technology's devices found, or why it found none;
//! - [`native`]: each technology's handle to an allocation;
//! - [`native_queue`]: a runtime's own queue, and one a backend adopted from a user;
//! - [`memory`] and [`mapping`]: one untyped allocation, and host access to it in place;
//! - [`host_memory`]: the host's available memory, as the system reports it;
//! - [`registration`]: host memory registered in place with a runtime (pinned where it lies);
//! - [`address_index`]: which allocation locus made, adopted or registered an address lies in;
//!   [`pointer_queries`]: what a runtime says of an address it allocated itself;
//! - [`aligned`]: allocations aligned beyond the default (umem's `aligned_alloc`);
//! - [`batch_copy`]: one copy of a batch a device runs in its runtime's batch form;
//! - [`block`]: an allocation a memory resource handed out, and where it goes back;
//! - [`completion`]: queued work (each backend's own type behind one trait) and the
//!   dependencies a backend is handed;
//! - [`kernel_language`]: the languages kernels are written in (a leaf: locations name it);
//! - [`launch`]: kernel launch descriptions;
//! - [`copy_span`]: where a copy reads and writes ([`CopySpan`](copy_span::CopySpan));
//! - [`region`]: a 2-D or 3-D rectangle of bytes in one memory ([`Region`](region::Region));
//!   [`layout`]: a strided view's elements in a flat buffer ([`Layout`](layout::Layout));
//!   [`rect_copy`]: the runtime's own rectangle copy, an ability of its own;
//! - [`route`]: routes and the [`CopyPath`](route::CopyPath) trait of the transfer matrix;
//!   [`route_kind`]: the kinds of route (a leaf);
//! - [`shutdown`]: the end of the process (background work waited for, then no native
//!   object released);
//! - [`profiler_ranges`]: the trace as a vendor profiler's ranges and marks;
//! - [`trace`]: the stream of allocations, frees, copies, launches and waits, to
//!   whoever listens (sinks, the `tracing` ecosystem);
//! - `tally`: counters the first thread to use them updates without atomic read-modify-writes.

pub mod address_index;
pub mod aligned;
pub mod batch_copy;
pub mod block;
pub mod cache;
pub mod capability;
pub mod completion;
pub mod config;
pub mod copy_span;
pub mod device;
pub mod discovery;
pub mod element;
pub mod error;
pub mod fork;
pub mod host_memory;
pub mod kernel_language;
pub mod launch;
pub mod layout;
pub mod location;
pub mod location_text;
pub mod mapping;
pub mod memory;
pub mod native;
pub mod native_copy;
pub mod native_queue;
pub mod pointer_queries;
pub mod profiler_ranges;
pub mod rect_copy;
pub mod region;
pub mod registration;
pub mod route;
pub mod route_kind;
pub mod shutdown;
pub mod size;
pub(crate) mod tally;
pub mod trace;
