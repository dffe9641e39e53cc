//! The contiguous blocks the packed route of a region copy gathers into and scatters
//! from, kept for the next region copy at the same device: a block allocated afresh for
//! every copy pays the first touch of its pages each time (a 32 MiB block: thousands of
//! page faults, more than the copy). A few blocks of up to 64 MiB per device are kept
//! once a copy succeeds with them; larger ones, and any beyond those, are freed.

use std::sync::{Arc, Mutex};

use super::batch::device_id;
use crate::core::device::Device;
use crate::core::error::Result;
use crate::core::memory::Memory;

/// Blocks up to this size are kept.
const KEPT_BYTES: usize = 64 << 20;
/// At most this many per device.
const KEPT_PER_DEVICE: usize = 2;

/// The kept blocks with their device's identity, and the process they belong to.
static KEPT: Mutex<(u32, Vec<(usize, Memory)>)> = Mutex::new((0, Vec::new()));

/// Keeps `memory`, a block [`take`] gave for `device`, for the next region copy there
/// (frees it where it is too large or enough are kept).
pub(super) fn keep(device: &Arc<dyn Device>, memory: Memory) {
    if memory.len() > KEPT_BYTES {
        return;
    }
    let id = device_id(device);
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if kept.0 == std::process::id()
        && kept.1.iter().filter(|(d, _)| *d == id).count() < KEPT_PER_DEVICE
    {
        kept.1.push((id, memory));
    }
}

/// A block of at least `bytes` at `device`: a kept one no more than twice as large, else
/// a new one.
pub(super) fn take(device: &Arc<dyn Device>, bytes: usize) -> Result<Memory> {
    let id = device_id(device);
    {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if kept.0 != std::process::id() {
            // A forked child: the blocks are its parent's (device memory of another
            // process's context); forgotten, never freed or used here.
            std::mem::take(&mut kept.1)
                .into_iter()
                .for_each(std::mem::forget);
            kept.0 = std::process::id();
        }
        let fits = |(d, m): &(usize, Memory)| *d == id && m.len() >= bytes && m.len() / 2 <= bytes;
        if let Some(at) = kept.1.iter().position(fits) {
            return Ok(kept.1.swap_remove(at).1);
        }
    }
    Memory::on(device, bytes)
}
