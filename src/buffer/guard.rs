//! Access guards: what `Buffer::access` / `access_mut` hand out. They borrow the buffer
//! (shared for reads, exclusive for writes), so no native handle outlives the data it
//! points to, and no write can race a read.

use std::marker::PhantomData;
use std::sync::Arc;

use bytemuck::Pod;

use super::Buffer;
use crate::core::device::HostAccess;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::mapping::HostMapping;
use crate::core::memory::Memory;
use crate::core::native::Native;
use crate::core::route::{Route, RouteKind};

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
            self.location
        }

        /// Where the serving memory lives (differs from [`Self::location`] when served
        /// in place from elsewhere).
        pub fn memory_location(&self) -> Location {
            self.memory.location()
        }

        /// How the data was made available: `InPlace` when nothing moved.
        pub fn route(&self) -> &Route {
            &self.route
        }

        /// True when no copy was needed for this access.
        pub fn is_in_place(&self) -> bool {
            self.route.kind == RouteKind::InPlace
        }

        /// Number of elements.
        pub fn len(&self) -> usize {
            self.len
        }

        /// True when there are no elements.
        pub fn is_empty(&self) -> bool {
            self.len == 0
        }

        /// The native handle of the serving memory (host pointer, OpenMP device pointer,
        /// `cl_mem`, `wgpu::Buffer`), to pass to your own kernels. Offset is 0.
        pub fn native(&self) -> &Native {
            self.memory.native()
        }

        /// The serving allocation.
        pub fn memory(&self) -> &Arc<Memory> {
            &self.memory
        }

        /// A plain address of the first element, when code at this location can
        /// dereference it (host, OpenMP on the initial device).
        pub fn ptr(&self) -> Option<*const T> {
            self.host.as_ref().map(|h| h.as_ptr().cast())
        }

        /// Ends the access and keeps its host mapping (when code at this location runs on
        /// the host): for bindings that hand the memory to code outside the borrow rules
        /// (the Python handles), which then answer for the coherence of what they write.
        pub fn into_host_mapping(self) -> Option<HostMapping> {
            self.host
        }

        /// The elements as a host slice, when code at this location runs on the host.
        pub fn as_slice(&self) -> Result<&[T]> {
            match &self.host {
                Some(h) => cast(h.as_slice(), self.location),
                None => Err(Error::NotHostAccessible {
                    location: self.memory.location(),
                }),
            }
        }
    };
}

/// A read access: the buffer is borrowed shared while it lives.
pub struct ReadGuard<'a, T: Pod> {
    memory: Arc<Memory>,
    location: Location,
    route: Route,
    len: usize,
    host: Option<HostMapping>,
    _borrow: PhantomData<&'a Buffer<T>>,
}

impl<'a, T: Pod> ReadGuard<'a, T> {
    pub(super) fn new(
        memory: Arc<Memory>,
        location: Location,
        route: Route,
        len: usize,
    ) -> Result<Self> {
        let host = host_view(&memory, location, false, len * std::mem::size_of::<T>())?;
        Ok(ReadGuard {
            memory,
            location,
            route,
            len,
            host,
            _borrow: PhantomData,
        })
    }

    common_accessors!();
}

/// A write access: the buffer is borrowed exclusively while it lives; the serving copy is
/// the only valid one.
pub struct WriteGuard<'a, T: Pod> {
    memory: Arc<Memory>,
    location: Location,
    route: Route,
    len: usize,
    host: Option<HostMapping>,
    _borrow: PhantomData<&'a mut Buffer<T>>,
}

impl<'a, T: Pod> WriteGuard<'a, T> {
    pub(super) fn new(
        memory: Arc<Memory>,
        location: Location,
        route: Route,
        len: usize,
    ) -> Result<Self> {
        let host = host_view(&memory, location, true, len * std::mem::size_of::<T>())?;
        Ok(WriteGuard {
            memory,
            location,
            route,
            len,
            host,
            _borrow: PhantomData,
        })
    }

    common_accessors!();

    /// A writable address of the first element, when code at this location can
    /// dereference it.
    pub fn ptr_mut(&mut self) -> Option<*mut T> {
        self.host.as_ref().map(|h| h.as_ptr().cast_mut().cast())
    }

    /// The elements as a writable host slice, when code at this location runs on the
    /// host.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        let location = self.location;
        match &mut self.host {
            Some(h) => bytemuck::try_cast_slice_mut(h.as_mut_slice()?).map_err(|e| {
                Error::Invalid(format!("{location}: cannot view memory as elements: {e}"))
            }),
            None => Err(Error::NotHostAccessible {
                location: self.memory.location(),
            }),
        }
    }
}
