//! locus from C: the functions of `include/locus.h`, over the `locus` crate.
//!
//! Every function catches panics (nothing unwinds into C), checks its pointers and
//! strings, and returns a [`LocusStatus`]; the message of a failure is kept per thread
//! for [`locus_last_error`]. Memory handles live in a table ([`handles`]): a call with a
//! handle that is not live (freed, never made) is an error naming it, not undefined
//! behaviour, and a handle freed on one thread while another uses it stays valid for
//! that use.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

mod adopted_contexts;
mod adopted_queues;
mod buffers;
mod handles;
mod ipc;
mod lookup;
mod memory;
mod native;
mod queues;
mod regions;
mod resources;
mod text;
mod trace;
/// libumem's API (`umem.h`, hand-written to keep umem's layouts and inline functions).
/// cbindgen:ignore
pub mod umem;

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use locus_rs::Error;

pub use buffers::*;
pub use ipc::*;
pub use lookup::*;
pub use memory::*;
pub use native::*;
pub use queues::*;
pub use resources::*;
pub use text::*;
pub use trace::*;

/// What a call returned: `LOCUS_OK`, or why it did nothing.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocusStatus {
    /// It worked.
    LocusOk = 0,
    /// An argument is wrong (a range past the end, a size that overflows, text that is
    /// not UTF-8, ...).
    LocusErrorInvalid = 1,
    /// A pointer or handle argument is NULL.
    LocusErrorNull = 2,
    /// A handle that is not live: freed already, or never made by locus.
    LocusErrorBadHandle = 3,
    /// A location name locus does not know (`"opencl:0"`, `"host"`, ...).
    LocusErrorUnknownLocation = 4,
    /// The location is not available on this machine (the message says why).
    LocusErrorUnavailable = 5,
    /// The location ran out of memory, or a budget was exceeded.
    LocusErrorOutOfMemory = 6,
    /// Host code cannot reach this memory in place: copy it instead.
    LocusErrorNotHostAccessible = 7,
    /// A text output buffer is too small: `*needed` says how many bytes it takes.
    LocusErrorBufferTooSmall = 8,
    /// A runtime (OpenCL, CUDA, ...) call failed.
    LocusErrorBackend = 9,
    /// locus failed inside (a bug: please report the message).
    LocusErrorInternal = 10,
}

/// A failure on its way to C: its status and message.
#[derive(Debug)]
pub(crate) struct Fail {
    status: LocusStatus,
    message: String,
}

impl Fail {
    pub(crate) fn new(status: LocusStatus, message: impl Into<String>) -> Fail {
        Fail {
            status,
            message: message.into(),
        }
    }

    /// The status C sees.
    pub(crate) fn status(&self) -> LocusStatus {
        self.status
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        let status = match &e {
            Error::UnknownLocation { .. } => LocusStatus::LocusErrorUnknownLocation,
            Error::Unavailable { .. } => LocusStatus::LocusErrorUnavailable,
            Error::OutOfMemory { .. } => LocusStatus::LocusErrorOutOfMemory,
            Error::NotHostAccessible { .. } => LocusStatus::LocusErrorNotHostAccessible,
            Error::Backend { .. } | Error::Mpi { .. } => LocusStatus::LocusErrorBackend,
            _ => LocusStatus::LocusErrorInvalid,
        };
        Fail::new(status, e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = text);
}

/// What a caught panic says.
pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Runs one C call: its result as a status, a failure's message kept for
/// [`locus_last_error`], a panic caught and reported as `LOCUS_ERROR_INTERNAL`.
pub(crate) fn call(name: &str, f: impl FnOnce() -> Result<(), Fail>) -> LocusStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => LocusStatus::LocusOk,
        Ok(Err(fail)) => {
            set_last_error(&format!("{name}: {}", fail.message));
            fail.status
        }
        Err(panic) => {
            let what = panic_text(panic.as_ref());
            set_last_error(&format!(
                "{name}: locus failed inside ({what}); please report this message"
            ));
            LocusStatus::LocusErrorInternal
        }
    }
}

/// The message of the calling thread's last failed call (`""` when none failed), valid
/// until the next failed call on this thread. Never NULL.
#[no_mangle]
pub extern "C" fn locus_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// This library's version (the crate's, e.g. `"0.2.0"`), a static string.
#[no_mangle]
pub extern "C" fn locus_version() -> *const c_char {
    static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}
