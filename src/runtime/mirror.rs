//! umem's `connect` / `sync` / `update` / `disconnect`: keep a paired copy of a source
//! allocation at another location. When that location can use the source in place and
//! the source's address meets the asked alignment, the paired memory *is* the source and
//! nothing is allocated or copied.
//!
//! The directions are umem's: [`Mirror::sync`] pushes the paired memory's bytes to the
//! source (`host_adr.sync(n)`, C's `umem_sync_from(src_ctx, src_adr, dest_ctx,
//! dest_adr, n)`), [`Mirror::update`] pulls the source's bytes into the paired memory
//! (`host_adr.update(n)`, C's `umem_sync_to`).
//!
//! ```
//! use std::sync::Arc;
//! use locus::{mirror, Location, Memory};
//!
//! // umem's synchronisation example: memory at a location, paired with the host.
//! let device = Arc::new(Memory::new_aligned(Location::Host, 80, 128)?);
//! let paired = mirror::connect(&device, 80, Location::Host, 64)?;
//! paired.memory().write(0, &[7u8; 80])?;
//! paired.sync(80)?; // the source now holds the host's bytes
//! paired.update(80)?; // and the host the source's
//! paired.disconnect();
//! # Ok::<(), locus::Error>(())
//! ```

use std::sync::Arc;

use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::route::Route;

/// A connection between a source allocation and its paired memory at another location
/// (umem's paired address).
#[derive(Debug)]
pub struct Mirror {
    source: Arc<Memory>,
    paired: Option<Arc<Memory>>,
    location: Location,
    len: usize,
}

/// Connects the first `len` bytes of `source` to `location` (umem's
/// `umem_connect(src_ctx, src_adr, len, dest_ctx, alignment)`, C++'s
/// `adr.connect(len, alignment)`): in place when `location` can use the source there
/// ([`Memory::is_accessible_from`]) and the source's address is a multiple of
/// `alignment` (0: any); otherwise `len` new bytes at `location`, aligned to
/// `alignment`, filled with the source's bytes.
pub fn connect(
    source: &Arc<Memory>,
    len: usize,
    location: Location,
    alignment: usize,
) -> Result<Mirror> {
    source.check("connect", 0, len)?;
    if alignment != 0 {
        crate::core::aligned::check_alignment(location, alignment)?;
    }
    let aligned = alignment == 0 || source.native().address().is_multiple_of(alignment as u64);
    let paired = if aligned && source.is_accessible_from(location) {
        None
    } else {
        let memory = Arc::new(Memory::new_aligned(location, len, alignment.max(1))?);
        source.copy_to(0, &memory, 0, len)?;
        Some(memory)
    };
    Ok(Mirror {
        source: Arc::clone(source),
        paired,
        location,
        len,
    })
}

impl Mirror {
    /// The memory to use at the paired location (the source itself when in place).
    pub fn memory(&self) -> &Arc<Memory> {
        self.paired.as_ref().unwrap_or(&self.source)
    }

    /// The source allocation.
    pub fn source(&self) -> &Arc<Memory> {
        &self.source
    }

    /// Where the paired memory is used.
    pub fn location(&self) -> Location {
        self.location
    }

    /// The connected length in bytes: `sync` and `update` move at most this much.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when zero bytes are connected.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when no separate copy exists (the paired memory is the source).
    pub fn is_in_place(&self) -> bool {
        self.paired.is_none()
    }

    fn check(&self, what: &str, n: usize) -> Result<()> {
        if n > self.len {
            return Err(Error::Invalid(format!(
                "{}: {what} of {n} bytes, but {} bytes were connected; sync at most the connected length",
                self.location, self.len
            )));
        }
        Ok(())
    }

    /// Pushes the first `n` bytes of the paired memory to the source (umem's
    /// `adr.sync(n)`, C's `umem_sync_from`: after the host wrote to its paired address,
    /// the device memory holds the same). A no-op in place; `n` must not exceed the
    /// connected length.
    pub fn sync(&self, n: usize) -> Result<Option<Route>> {
        self.check("sync", n)?;
        match &self.paired {
            Some(m) if n > 0 => Ok(Some(m.copy_to(0, &self.source, 0, n)?)),
            _ => Ok(None),
        }
    }

    /// Pulls the first `n` bytes of the source into the paired memory (umem's
    /// `adr.update(n)`, C's `umem_sync_to`: after the device changed the data, the host's
    /// paired address sees it). A no-op in place; `n` must not exceed the connected
    /// length.
    pub fn update(&self, n: usize) -> Result<Option<Route>> {
        self.check("update", n)?;
        match &self.paired {
            Some(m) if n > 0 => Ok(Some(self.source.copy_to(0, m, 0, n)?)),
            _ => Ok(None),
        }
    }

    /// Ends the connection (umem's `umem_disconnect`): frees the paired memory when it
    /// is a separate allocation; the source is left as it is.
    pub fn disconnect(self) {}
}
