//! The memory a run needs: refused before anything is allocated when the machine cannot
//! hold it, and the pairs of allocations per location that the matrix copies between.

use locus::{Error, Location, Memory, Registry, Result};

use super::format_size;

/// Two allocations per location (source, filled with 0x5A, and destination, zeroed) of
/// `max` bytes, or of the device's largest allocation where that is smaller (said in
/// `notes`): what `locus bench` and `locus calibrate` copy between.
pub(crate) fn pair_memories(
    registry: &Registry,
    locations: &[Location],
    max: u64,
    notes: &mut Vec<String>,
) -> Result<Vec<(Location, Memory, Memory)>> {
    let mut memories = Vec::new();
    for &l in locations {
        let cap = registry.device(l)?.info().max_allocation;
        let bytes = max.min(cap) as usize;
        if (bytes as u64) < max {
            notes.push(format!(
                "{l}: sizes above {} skipped (the device's largest allocation)",
                format_size(cap)
            ));
        }
        let (a, b) = (Memory::new(l, bytes)?, Memory::new(l, bytes)?);
        a.fill(0..bytes, &[0x5A])?;
        b.fill(0..bytes, &[0])?;
        memories.push((l, a, b));
    }
    Ok(memories)
}

/// Refuses, before anything is allocated, a largest size whose buffers cannot all be
/// held at once: two per location (in the host's memory for locations that share it,
/// in the device's own where the runtime reports what is free) and memcpy's three host
/// buffers. Without it a size beyond memory ends the process (the kernel's OOM killer)
/// instead of an error.
pub(crate) fn check_memory(registry: &Registry, locations: &[Location], max: u64) -> Result<()> {
    let (mut host_buffers, mut host_bytes) = (3u128, 3 * max as u128);
    for &l in locations {
        let device = registry.device(l)?;
        let each = max.min(device.info().max_allocation) as u128;
        if device.info().shares_host_memory {
            host_buffers += 2;
            host_bytes += 2 * each;
        } else if let Ok((free, _)) = device.available_memory() {
            if 2 * each > free as u128 {
                return Err(Error::Invalid(format!(
                    "{l} holds two buffers of the largest size {} at once, and has {} free: \
                     pass --sizes no larger than {}",
                    format_size(max),
                    gib(free as u128),
                    format_size(whole_mib(free / 2))
                )));
            }
        }
    }
    match locus::core::host_memory::available() {
        Some((available, _)) if host_bytes > available as u128 => Err(Error::Invalid(format!(
            "the largest size {} needs {host_buffers} host buffers of it at once \
             (two per location that shares the host's memory, and memcpy's three), {} in all, \
             and the host has {} available: pass --sizes no larger than {}",
            format_size(max),
            gib(host_bytes),
            gib(available as u128),
            format_size(whole_mib(available / host_buffers as u64))
        ))),
        _ => Ok(()),
    }
}

/// `bytes` in GiB with one decimal, for messages about memory.
fn gib(bytes: u128) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// `bytes` rounded down to whole MiB (at least 1 MiB), a size to suggest.
fn whole_mib(bytes: u64) -> u64 {
    (bytes & !((1 << 20) - 1)).max(1 << 20)
}
