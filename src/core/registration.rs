//! Host memory registered in place with a runtime ("pinned" where it lies: CUDA's
//! `cuMemHostRegister`, HIP's `hipHostRegister`): the runtime's copies from and to it go
//! by DMA, as from its own page-locked memory, where pageable memory is staged by the
//! driver. A [`HostRegistration`] undoes the registration when dropped.

use super::address_index::{self, Indexed};
use super::location::Location;

/// One registration of a host range with a runtime (see
/// [`HostMemoryRegistration::register_host`](super::capability::HostMemoryRegistration::register_host)); dropping it
/// unregisters the range (a failure there is ignored: the range stays usable as
/// pageable memory), except once the process is ending.
pub struct HostRegistration {
    location: Location,
    undo: Option<Box<dyn FnOnce() + Send + Sync>>,
    /// Its entry in the address index, once [`HostRegistration::entered`].
    indexed: Option<Indexed>,
}

impl HostRegistration {
    /// A registration made at `location`'s runtime; `undo` unregisters it.
    pub fn new(location: Location, undo: impl FnOnce() + Send + Sync + 'static) -> Self {
        HostRegistration {
            location,
            undo: Some(Box::new(undo)),
            indexed: None,
        }
    }

    /// The registration, entered in the address index as the `len` bytes at `base` it
    /// covers ([`lookup`](crate::lookup) then names it).
    #[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(dead_code))]
    pub(crate) fn entered(mut self, base: u64, len: usize) -> Self {
        self.indexed = address_index::enter_registration(base, len, self.location);
        self
    }

    /// The device whose runtime registered the range (the registration covers every
    /// device of that runtime).
    pub fn location(&self) -> Location {
        self.location
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        drop(self.indexed.take());
        // At the process's end the runtime may be gone: its own exit unpins the pages.
        if super::shutdown::is_shutting_down() {
            return;
        }
        if let Some(undo) = self.undo.take() {
            undo();
        }
    }
}

impl std::fmt::Debug for HostRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostRegistration({})", self.location)
    }
}
