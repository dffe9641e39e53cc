//! The one error type of the crate. Every message names the location, the backend call
//! and what to do about it.

use super::location::Location;

/// Everything that can go wrong in locus.
/// Cloneable, so that every waiter on one failed event gets the failure as it was.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A location name that does not parse.
    #[error(
        "unknown location `{text}`: expected host, cuda:N, hip:N, openmp:N, opencl:N, sycl:N or webgpu:N \
         (N is the device ordinal, e.g. opencl:0; a bare name means device 0)"
    )]
    UnknownLocation {
        /// The text that was given.
        text: String,
    },
    /// The location is well formed but not present on this machine.
    #[error("{location} is not available: {reason}")]
    Unavailable {
        /// The location asked for.
        location: Location,
        /// Why it is missing and what to install.
        reason: String,
    },
    /// A backend call failed.
    #[error("{location}: {call} failed: {message}; {hint}")]
    Backend {
        /// Where the call ran.
        location: Location,
        /// The native call, e.g. `clEnqueueReadBuffer`.
        call: &'static str,
        /// The runtime's error code or text.
        message: String,
        /// What to do about it.
        hint: String,
    },
    /// An allocation larger than the device can make in one piece.
    #[error(
        "{location}: cannot allocate {requested} bytes: the largest allocation this device allows is {max} bytes; \
         split the data or choose another location"
    )]
    TooLarge {
        /// Where the allocation was asked for.
        location: Location,
        /// Bytes asked for.
        requested: usize,
        /// The device's limit.
        max: usize,
    },
    /// Memory ran out: a backend's own out-of-memory code (`CL_MEM_OBJECT_ALLOCATION_FAILURE`,
    /// `CUDA_ERROR_OUT_OF_MEMORY`, a failed host allocation), a pool at its maximum, or a
    /// budget exceeded. The failure-callback adaptor retries on this and nothing else.
    #[error(
        "{location}: out of memory: {by} could not provide {requested} bytes ({reason}); \
         free memory, ask for less, or raise the pool's maximum or the budget"
    )]
    OutOfMemory {
        /// Where the memory was asked for.
        location: Location,
        /// Bytes asked for.
        requested: usize,
        /// The backend call or the resource that ran out (`clCreateBuffer`, `pool`).
        by: String,
        /// What it reported.
        reason: String,
    },
    /// A copy, fill or view that reaches past the end of an allocation. Nothing was written.
    #[error(
        "{location}: {what} of {len} bytes at offset {offset} is out of range for an allocation of {size} bytes; \
         nothing was written"
    )]
    OutOfRange {
        /// The allocation's location.
        location: Location,
        /// Which operation.
        what: &'static str,
        /// Start of the range in bytes.
        offset: usize,
        /// Length of the range in bytes.
        len: usize,
        /// Size of the allocation in bytes.
        size: usize,
    },
    /// Two lengths that must agree do not.
    #[error("{what}: expected {expected} elements, got {found}")]
    LengthMismatch {
        /// Which operation.
        what: &'static str,
        /// What was expected.
        expected: usize,
        /// What was given.
        found: usize,
    },
    /// Host code asked for a slice of memory the host cannot reach.
    #[error(
        "{location} memory is not accessible from the host; ask for `access(Location::Host)` to get a host replica"
    )]
    NotHostAccessible {
        /// Where the memory lives.
        location: Location,
    },
    /// An MPI call, or the agreement between ranks that `locus::mpi` checks before it
    /// moves data (sizes, element types, a location missing on one rank), failed.
    #[error("MPI rank {rank}: {call} failed: {message}; {hint}")]
    Mpi {
        /// The rank that reports it (-1 before the rank is known).
        rank: i32,
        /// The MPI call or locus step, e.g. `MPI_Irecv` or `recv (sizes)`.
        call: &'static str,
        /// What happened, with the other rank's side where it matters.
        message: String,
        /// What to do about it.
        hint: String,
    },
    /// Anything else the caller passed wrong.
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// True for [`Error::OutOfMemory`].
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::OutOfMemory { .. })
    }

    /// The same error; an [`Error::OutOfMemory`] records `bytes` as what was asked for
    /// (for a backend's allocation call, whose error mapping does not know the size).
    #[cfg_attr(
        not(any(feature = "opencl", feature = "cuda", feature = "hip")),
        allow(dead_code)
    )]
    pub(crate) fn asking_for(mut self, bytes: usize) -> Error {
        if let Error::OutOfMemory { requested, .. } = &mut self {
            *requested = bytes;
        }
        self
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
