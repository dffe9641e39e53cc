//! What discovering one technology found ([`Discovery`]), and why a technology has no
//! device here ([`Unavailable`]).

use std::fmt;
use std::sync::Arc;

use super::device::Device;
use super::location::Technology;
use super::route::CopyPath;

/// What discovering one technology found.
pub struct Discovery {
    /// The devices found, in ordinal order.
    pub devices: Vec<Arc<dyn Device>>,
    /// Devices seen but not used, with the reason (e.g. "PoCL through SYCL: no USM").
    pub skipped: Vec<String>,
    /// Copy paths this backend adds to the transfer matrix, keyed by
    /// (source technology, destination technology).
    pub paths: Vec<(Technology, Technology, Arc<dyn CopyPath>)>,
}

/// Why a technology has no device here, or why a step of finding one failed (a library
/// that did not load, a device that did not open): what failed and what to install. The
/// backends' discovery and loading return it; `locus info` prints it as the reason a
/// technology is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    reason: String,
}

impl Unavailable {
    /// The reason, in words.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Unavailable {}

impl From<String> for Unavailable {
    fn from(reason: String) -> Unavailable {
        Unavailable { reason }
    }
}

impl From<&str> for Unavailable {
    fn from(reason: &str) -> Unavailable {
        Unavailable {
            reason: reason.to_string(),
        }
    }
}
