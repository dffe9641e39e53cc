//! Allocations aligned beyond [`ALIGNMENT`] (umem's `aligned_alloc` / `aligned_origin`):
//! when a device's own allocation does not land on the asked boundary, a larger one is
//! made and the aligned part of it handed out; the allocation behind it is its
//! [`Origin`], freed with it.

use super::device::{Device, ALIGNMENT};
use super::error::{Error, Result};
use super::location::Location;
use super::native::{MemoryKind, Native};

/// The allocation behind an aligned one that needed padding: what the device handed out
/// (umem's `aligned_origin`), and its size.
#[derive(Debug)]
pub struct Origin {
    pub(crate) native: Native,
    pub(crate) bytes: usize,
}

impl Origin {
    /// The device's own allocation.
    pub fn native(&self) -> &Native {
        &self.native
    }

    /// Its size in bytes (the aligned part and its padding).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Checks that `align` is a power of two (umem and RMM take any; 0 and 3 are not).
pub fn check_alignment(location: Location, align: usize) -> Result<()> {
    if align.is_power_of_two() {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "{location}: alignment {align} is not a power of two; ask for 1, 2, 4, ... (allocations are aligned to {ALIGNMENT} bytes unless more is asked)"
    )))
}

/// Allocates `bytes` of `kind` on `device` at an address (see [`Native::address`]) that is a
/// multiple of `align`: the device's own allocation when it lands there (always for
/// [`ALIGNMENT`] or less, and for OpenCL and WebGPU buffer objects, whose offsets start
/// at 0), otherwise the aligned part of a larger allocation, returned as its origin.
pub(crate) fn allocate_aligned(
    device: &dyn Device,
    bytes: usize,
    align: usize,
    kind: MemoryKind,
) -> Result<(Native, Option<Origin>)> {
    let location = device.location();
    check_alignment(location, align)?;
    let max = device.info().max_allocation;
    let too_large = |requested: usize| Error::TooLarge {
        location,
        requested,
        max: usize::try_from(max).unwrap_or(usize::MAX),
    };
    if bytes as u64 > max {
        return Err(too_large(bytes));
    }
    let native = device.allocate_kind(bytes, kind)?;
    if align <= ALIGNMENT || native.address().is_multiple_of(align as u64) {
        return Ok((native, None));
    }
    // SAFETY: just allocated with these bytes; nothing uses it.
    unsafe { device.free(&native, bytes) };
    // The device aligns to ALIGNMENT, so at most `align - ALIGNMENT` bytes of padding.
    let total = bytes
        .checked_add(align - ALIGNMENT)
        .filter(|&t| t as u64 <= max)
        .ok_or_else(|| too_large(bytes.saturating_add(align - ALIGNMENT)))?;
    let parent = device.allocate_kind(total, kind)?;
    let address = parent.address();
    let lead = (align as u64 - address % align as u64) % align as u64;
    let aligned = usize::try_from(lead)
        .ok()
        .filter(|lead| lead + bytes <= total)
        .ok_or_else(|| {
            Error::Invalid(format!(
                "{location}: the device returned {address:#x}, not aligned to {ALIGNMENT} bytes as promised"
            ))
        })
        .and_then(|lead| device.sub_native(&parent, lead, bytes));
    match aligned {
        Ok(native) => Ok((
            native,
            Some(Origin {
                native: parent,
                bytes: total,
            }),
        )),
        Err(e) => {
            // SAFETY: allocated above, never handed out.
            unsafe { device.free(&parent, total) };
            Err(e)
        }
    }
}

/// Frees what [`allocate_aligned`] returned.
///
/// # Safety
/// `native`, `bytes` and `origin` came from one [`allocate_aligned`] call on `device`,
/// are freed once, and no operation on them is pending.
pub(crate) unsafe fn free_aligned(
    device: &dyn Device,
    native: &Native,
    bytes: usize,
    origin: Option<&Origin>,
) {
    match origin {
        // SAFETY: forwarded from the caller's contract: without an origin, `native` is
        // the device's own allocation of `bytes`.
        None => unsafe { device.free(native, bytes) },
        // SAFETY: forwarded from the caller's contract: `native` is a sub-handle of
        // `origin`, the device's own allocation of `origin.bytes`; both go once.
        Some(origin) => unsafe {
            device.release_sub(native);
            device.free(&origin.native, origin.bytes);
        },
    }
}
