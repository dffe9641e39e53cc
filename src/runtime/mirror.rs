//! umem's `connect` / `sync` / `update`: keep a mirror of an allocation at another
//! location. When the other location can use the memory in place, the mirror *is* the
//! source and nothing is allocated or copied.

use std::sync::Arc;

use crate::core::error::Result;
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::route::Route;

/// A connection between a source allocation and its view at another location.
#[derive(Debug)]
pub struct Mirror {
    source: Arc<Memory>,
    mirror: Option<Arc<Memory>>,
    location: Location,
}

/// Connects `source` to `location`: in place when `location` can use it there,
/// otherwise a new allocation at `location` filled with the source's bytes.
pub fn connect(source: &Arc<Memory>, location: Location) -> Result<Mirror> {
    let mirror = if source.is_accessible_from(location) {
        None
    } else {
        let memory = Arc::new(Memory::new(location, source.len())?);
        source.copy_to(0, &memory, 0, source.len())?;
        Some(memory)
    };
    Ok(Mirror {
        source: Arc::clone(source),
        mirror,
        location,
    })
}

impl Mirror {
    /// The memory to use at the mirror's location (the source itself when in place).
    pub fn memory(&self) -> &Arc<Memory> {
        self.mirror.as_ref().unwrap_or(&self.source)
    }

    /// The source allocation.
    pub fn source(&self) -> &Arc<Memory> {
        &self.source
    }

    /// Where the mirror is used.
    pub fn location(&self) -> Location {
        self.location
    }

    /// True when no separate copy exists.
    pub fn is_in_place(&self) -> bool {
        self.mirror.is_none()
    }

    /// Pulls the source's current bytes into the mirror (umem `sync_from`). No-op in place.
    pub fn sync(&self) -> Result<Option<Route>> {
        match &self.mirror {
            Some(m) => Ok(Some(self.source.copy_to(0, m, 0, m.len())?)),
            None => Ok(None),
        }
    }

    /// Pushes the mirror's bytes back to the source (umem `sync_to`). No-op in place.
    pub fn update(&self) -> Result<Option<Route>> {
        match &self.mirror {
            Some(m) => Ok(Some(m.copy_to(0, &self.source, 0, m.len())?)),
            None => Ok(None),
        }
    }

    /// Ends the connection, freeing the mirror copy if there is one.
    pub fn disconnect(self) {}
}
