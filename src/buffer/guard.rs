//! Access guards: what `Buffer::access` / `access_mut` hand out. They borrow the buffer
//! (shared for reads, exclusive for writes), so no native handle outlives the data it
//! points to, and no write can race a read.
//!
//! A guard of a buffer in [`Transfer::Async`](super::Transfer::Async) mode may come
//! before its data: [`ReadGuard::events`] are the moves the consumer's own work must
//! wait for (as HAMR's user stream waits), and the host views (`as_slice`, `ptr`, ...)
//! wait for them before they map the memory, so a host slice never shows data that has
//! not arrived.

use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use bytemuck::Pod;

use super::Buffer;
use crate::core::device::HostAccess;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::mapping::HostMapping;
use crate::core::memory::Memory;
use crate::core::native::Native;
use crate::core::route::{Route, RouteKind};
use crate::runtime::event::Event;

/// Maps the first `bytes` of the serving memory (the buffer's elements; the allocation
/// may hold more: its capacity) when code at `location` runs on the host.
fn host_view(
    memory: &Arc<Memory>,
    location: Location,
    write: bool,
    bytes: usize,
) -> Result<Option<HostMapping>> {
    let on_host = crate::runtime::registry::registry()
        .device(location)?
        .executes_on_host();
    if on_host && memory.host_access() != HostAccess::None {
        Ok(Some(memory.map(0..bytes, write)?))
    } else {
        Ok(None)
    }
}

fn cast<T: Pod>(bytes: &[u8], location: Location) -> Result<&[T]> {
    bytemuck::try_cast_slice(bytes)
        .map_err(|e| Error::Invalid(format!("{location}: cannot view memory as elements: {e}")))
}

macro_rules! common_accessors {
    () => {
        /// Where the consumer runs (the location passed to `access`).
        pub fn location(&self) -> Location {
            self.served.location
        }

        /// Where the serving memory lives (differs from [`Self::location`] when served
        /// in place from elsewhere).
        pub fn memory_location(&self) -> Location {
            self.served.memory.location()
        }

        /// How the data was made available: `InPlace` when nothing moved.
        pub fn route(&self) -> &Route {
            &self.served.route
        }

        /// True when no copy was needed for this access.
        pub fn is_in_place(&self) -> bool {
            self.served.route.kind == RouteKind::InPlace
        }

        /// Number of elements.
        pub fn len(&self) -> usize {
            self.served.len
        }

        /// True when there are no elements.
        pub fn is_empty(&self) -> bool {
            self.served.len == 0
        }

        /// The native handle of the serving memory (host pointer, OpenMP device pointer,
        /// `cl_mem`, `wgpu::Buffer`), to pass to your own kernels. Offset is 0.
        pub fn native(&self) -> &Native {
            self.served.memory.native()
        }

        /// The serving allocation.
        pub fn memory(&self) -> &Arc<Memory> {
            &self.served.memory
        }

        /// The moves the data waits for (empty when it is there): work of the
        /// consumer's own that uses [`Self::native`] must wait for these first.
        pub fn events(&self) -> &[Event] {
            &self.served.events
        }

        /// True when the data is there (every event in [`Self::events`] is complete).
        pub fn is_ready(&self) -> bool {
            self.served.events.iter().all(Event::is_complete)
        }

        /// Waits until the data is there; a failed move is the error.
        pub fn wait(&self) -> Result<()> {
            self.served.events.iter().try_for_each(Event::wait)
        }

        /// The host mapping, made on first use once the data is there.
        fn host(&self) -> Result<Option<&HostMapping>> {
            self.served.host::<T>(Self::WRITE)
        }

        /// A plain address of the first element, when code at this location can
        /// dereference it (host, OpenMP on the initial device). Waits for the data.
        pub fn ptr(&self) -> Option<*const T> {
            self.host().ok().flatten().map(|h| h.as_ptr().cast())
        }

        /// Ends the access and keeps its host mapping (when code at this location runs on
        /// the host), once the data is there: for bindings that hand the memory to code
        /// outside the borrow rules (the Python handles), which then answer for the
        /// coherence of what they write.
        pub fn into_host_mapping(self) -> Result<Option<HostMapping>> {
            self.host()?;
            Ok(self.served.host.into_inner().flatten())
        }

        /// The elements as a host slice, when code at this location runs on the host.
        /// Waits for the data.
        pub fn as_slice(&self) -> Result<&[T]> {
            match self.host()? {
                Some(h) => cast(h.as_slice(), self.served.location),
                None => Err(Error::NotHostAccessible {
                    location: self.served.memory.location(),
                }),
            }
        }
    };
}

/// What both guards hold: the serving memory, where the consumer runs, how the data
/// came, the elements, the moves it waits for, and the host mapping once made.
struct Served {
    memory: Arc<Memory>,
    location: Location,
    route: Route,
    len: usize,
    events: Vec<Event>,
    host: OnceLock<Option<HostMapping>>,
}

impl Served {
    /// Maps the memory at once when no move is pending (`write`: for writing).
    fn new<T: Pod>(
        memory: Arc<Memory>,
        location: Location,
        route: Route,
        len: usize,
        events: Vec<Event>,
        write: bool,
    ) -> Result<Served> {
        let served = Served {
            memory,
            location,
            route,
            len,
            events,
            host: OnceLock::new(),
        };
        if served.events.is_empty() {
            served.host::<T>(write)?;
        }
        Ok(served)
    }

    /// The host mapping, made on first use once the data is there.
    fn host<T: Pod>(&self, write: bool) -> Result<Option<&HostMapping>> {
        if self.host.get().is_none() {
            self.events.iter().try_for_each(Event::wait)?;
            let bytes = self.len * std::mem::size_of::<T>();
            let view = host_view(&self.memory, self.location, write, bytes)?;
            let _ = self.host.set(view);
        }
        Ok(self.host.get().and_then(Option::as_ref))
    }
}

/// A read access: the buffer is borrowed shared while it lives.
pub struct ReadGuard<'a, T: Pod> {
    served: Served,
    _borrow: PhantomData<&'a Buffer<T>>,
}

impl<'a, T: Pod> ReadGuard<'a, T> {
    const WRITE: bool = false;

    pub(super) fn new(
        memory: Arc<Memory>,
        location: Location,
        route: Route,
        len: usize,
        events: Vec<Event>,
    ) -> Result<Self> {
        Ok(ReadGuard {
            served: Served::new::<T>(memory, location, route, len, events, Self::WRITE)?,
            _borrow: PhantomData,
        })
    }

    common_accessors!();
}

/// A write access: the buffer is borrowed exclusively while it lives; the serving copy is
/// the only valid one.
pub struct WriteGuard<'a, T: Pod> {
    served: Served,
    _borrow: PhantomData<&'a mut Buffer<T>>,
}

impl<'a, T: Pod> WriteGuard<'a, T> {
    const WRITE: bool = true;

    pub(super) fn new(
        memory: Arc<Memory>,
        location: Location,
        route: Route,
        len: usize,
        events: Vec<Event>,
    ) -> Result<Self> {
        Ok(WriteGuard {
            served: Served::new::<T>(memory, location, route, len, events, Self::WRITE)?,
            _borrow: PhantomData,
        })
    }

    common_accessors!();

    /// A writable address of the first element, when code at this location can
    /// dereference it.
    pub fn ptr_mut(&mut self) -> Option<*mut T> {
        self.ptr().map(<*const T>::cast_mut)
    }

    /// The elements as a writable host slice, when code at this location runs on the
    /// host.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        let location = self.served.location;
        self.host()?;
        match self.served.host.get_mut().and_then(Option::as_mut) {
            Some(h) => bytemuck::try_cast_slice_mut(h.as_mut_slice()?).map_err(|e| {
                Error::Invalid(format!("{location}: cannot view memory as elements: {e}"))
            }),
            None => Err(Error::NotHostAccessible {
                location: self.served.memory.location(),
            }),
        }
    }
}
