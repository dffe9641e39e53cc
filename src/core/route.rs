//! Routes and copy paths: how data gets from one location to another ([`RouteKind`],
//! [`Route`] with its one-line reason), and the [`CopyPath`] trait a backend implements
//! to add its own way of copying to the transfer matrix.

use std::fmt;
use std::sync::Arc;

use super::device::{Device, HostAccess};
use super::error::Result;
use super::location::Location;
use super::memory::Memory;

pub use super::route_kind::RouteKind;

/// A route with the reason it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Where the data is.
    pub src: Location,
    /// Where it is wanted.
    pub dst: Location,
    /// How it gets there.
    pub kind: RouteKind,
    /// Why, in one line.
    pub reason: Reason,
}

/// Why a route was taken, in one line (a `str` by `Deref`). Every copy returns its
/// route, so the text is shared, not copied: a route the planner keeps holds text made
/// once for the process (cloning it is a copy of a pointer, no reference count to
/// update on a small copy's path); any other holds it behind an `Arc`.
#[derive(Clone, PartialEq, Eq)]
pub struct Reason(Text);

#[derive(Clone)]
enum Text {
    Kept(&'static str),
    Made(Arc<str>),
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl Text {
    fn as_str(&self) -> &str {
        match self {
            Text::Kept(text) => text,
            Text::Made(text) => text,
        }
    }
}

impl Reason {
    /// The same text, made to last the process: the planner's kept routes, whose texts
    /// are few (one per pair, size class and calibration). The same text is stored
    /// once, however often it is kept.
    pub(crate) fn kept(&self) -> Reason {
        if let Text::Kept(_) = self.0 {
            return self.clone();
        }
        static KEPT: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
            std::sync::Mutex::new(std::collections::BTreeSet::new());
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        let text = match kept.get(&**self) {
            Some(text) => *text,
            None => {
                let text: &'static str = Box::leak(Box::<str>::from(&**self));
                kept.insert(text);
                text
            }
        };
        Reason(Text::Kept(text))
    }
}

impl std::ops::Deref for Reason {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl From<String> for Reason {
    fn from(text: String) -> Reason {
        Reason(Text::Made(text.into()))
    }
}

impl From<&str> for Reason {
    fn from(text: &str) -> Reason {
        Reason(Text::Made(text.into()))
    }
}

impl From<Arc<str>> for Reason {
    fn from(text: Arc<str>) -> Reason {
        Reason(Text::Made(text))
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {}: {} ({})",
            self.src, self.dst, self.kind, self.reason
        )
    }
}

/// One side of a planned copy: the device and how the host reaches its memory.
#[derive(Clone, Copy)]
pub struct Endpoint<'a> {
    /// The device.
    pub device: &'a Arc<dyn Device>,
    /// How host code reaches the memory in place.
    pub host: HostAccess,
}

impl Endpoint<'_> {
    /// The endpoint an allocation makes: its device and how the host reaches it.
    pub fn of(memory: &Memory) -> Endpoint<'_> {
        Endpoint {
            device: memory.device(),
            host: memory.host_access(),
        }
    }

    /// Why the host reaches this side in place, when it does (routes quote it).
    pub fn visible_because(&self) -> Option<String> {
        match self.host {
            HostAccess::None => None,
            _ => Some(self.device.host_access_reason()),
        }
    }
}

/// A way to copy bytes between two allocations.
pub trait CopyPath: Send + Sync {
    /// A short name for `locus info` ("omp_target_memcpy between devices").
    fn name(&self) -> &'static str;
    /// The route this path would take from `src` to `dst`, or `None` if it does not
    /// apply to these two.
    fn plan(&self, src: Endpoint<'_>, dst: Endpoint<'_>) -> Option<Route>;
    /// True when the copy is one call of a side's runtime (its own device copy, read or
    /// write), which that runtime can also queue asynchronously; false when locus moves
    /// the bytes itself (a memcpy between mappings, staging).
    fn is_runtime_call(&self) -> bool {
        false
    }
    /// How many of the two sides this path reaches through a runtime's map call (a
    /// [`HostAccess::Mapped`] host view: a map and an unmap round trip each, which a
    /// plain host pointer does not cost). The fixed order prefers fewer among routes of
    /// one kind: one runtime call into a plain pointer beats mapping the runtime's
    /// buffer for a memcpy.
    fn maps(&self, _src: Endpoint<'_>, _dst: Endpoint<'_>) -> usize {
        0
    }
    /// Copies `len` bytes (ranges already bounds-checked, not overlapping).
    fn copy(
        &self,
        src: &Memory,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
    ) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_reason_is_stored_once_and_reads_as_its_text() {
        let made = Reason::from(format!("one copy of {} bytes", 4096));
        let (a, b) = (made.kept(), Reason::from("one copy of 4096 bytes").kept());
        assert!(matches!((&a.0, &b.0), (Text::Kept(x), Text::Kept(y)) if std::ptr::eq(*x, *y)));
        assert_eq!((a.clone(), &*a), (made.clone(), "one copy of 4096 bytes"));
        assert_eq!(format!("{a} {a:?}"), format!("{made} {made:?}"));
    }
}
