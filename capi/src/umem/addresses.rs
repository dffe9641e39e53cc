//! umem's addresses for memory at locus locations. umem's rule is that an address is a
//! `uintptr_t` whose increments address the whole allocation. Memory that has a pointer
//! (host, OpenMP, CUDA, HIP, SYCL USM) keeps it as its address, so a program hands it to
//! its own kernels as with umem; memory that is an object (an OpenCL `cl_mem`, a wgpu
//! buffer) gets a range of made-up addresses above any user-space pointer
//! (`SYNTHETIC_BASE`), 64 KiB-aligned like the runtimes' own buffers, which no host code
//! can dereference, as no host code can dereference a device pointer. This table maps
//! an address back to its allocation and offset, per location.
//!
//! Host memory a locus-backed context uses in place (umem's `umem_connect` hands the
//! source's address over without a copy) is known by its live connections: an address
//! that is neither in the table nor inside a connected range is refused with a status,
//! never dereferenced (a freed or made-up address would otherwise be written as host
//! memory).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use locus_rs::{Location, Memory, Technology};

/// Where made-up addresses start: above the user half of the address space of every
/// 64-bit platform (x86-64's 47 or 56 bits, AArch64's 48 or 52).
const SYNTHETIC_BASE: usize = usize::MAX / 4 + 1;
/// Made-up ranges start at multiples of this, with a gap of as much between them.
const SYNTHETIC_GRANULE: usize = 64 * 1024;

type Table = BTreeMap<(Location, usize), Arc<Memory>>;

fn table() -> MutexGuard<'static, Table> {
    static TABLE: Mutex<Table> = Mutex::new(BTreeMap::new());
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// What an address of a location is.
pub(crate) enum Found {
    /// `offset` bytes into `memory`, with `n` bytes from there inside it.
    Inside { memory: Arc<Memory>, offset: usize },
    /// Inside an allocation, but `n` bytes from there run past its end.
    PastTheEnd { start: usize, len: usize },
    /// No allocation of this location holds it.
    Unknown,
}

/// Takes `memory` into the table and returns its address.
pub(crate) fn insert(memory: Memory) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(SYNTHETIC_BASE);
    let location = memory.location();
    let address = match memory.host_pointer() {
        Some(p) => p as usize,
        None if memory.native().key().0 == 0 => memory.native().address() as usize,
        None => {
            let span = memory.len().div_ceil(SYNTHETIC_GRANULE).max(1) * SYNTHETIC_GRANULE;
            NEXT.fetch_add(span.saturating_add(SYNTHETIC_GRANULE), Ordering::Relaxed)
        }
    };
    table().insert((location, address), Arc::new(memory));
    address
}

/// Takes the allocation starting at `address` out of the table (freed once no call uses
/// it); `None` when no allocation of `location` starts there.
pub(crate) fn remove(location: Location, address: usize) -> Option<Arc<Memory>> {
    table().remove(&(location, address))
}

/// Host ranges connected in place, by start: the lengths of each live connection.
fn connections() -> MutexGuard<'static, BTreeMap<usize, Vec<usize>>> {
    static CONNECTIONS: Mutex<BTreeMap<usize, Vec<usize>>> = Mutex::new(BTreeMap::new());
    CONNECTIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records that `nbytes` at `address` are used in place by another context (a live
/// connection), until [`disconnect`].
pub(crate) fn connect(address: usize, nbytes: usize) {
    connections().entry(address).or_default().push(nbytes);
}

/// Ends one in-place connection starting at `address` (nothing when there is none).
pub(crate) fn disconnect(address: usize) {
    let mut map = connections();
    if let Some(lengths) = map.get_mut(&address) {
        lengths.pop();
        if lengths.is_empty() {
            map.remove(&address);
        }
    }
}

/// Whether the `n` bytes at `address` lie inside a live in-place connection.
pub(crate) fn is_connected(address: usize, n: usize) -> bool {
    let Some(end) = address.checked_add(n) else {
        return false;
    };
    connections()
        .range(..=address)
        .any(|(start, lengths)| lengths.iter().any(|len| start.saturating_add(*len) >= end))
}

/// Whether the addresses of `location`'s memory are its pointers (not made up).
pub(crate) fn are_pointers(location: Location) -> bool {
    !matches!(
        location.technology(),
        Technology::OpenCl | Technology::WebGpu
    )
}

/// The allocation of `location` that holds `n` bytes from `address`.
pub(crate) fn find(location: Location, address: usize, n: usize) -> Found {
    find_in(&table(), location, address, n)
}

/// The allocation of another location whose addresses are pointers, holding `address`,
/// where `accept` takes that location (memory a context uses in place, as `umem_connect`
/// hands it over without a copy).
pub(crate) fn find_elsewhere(
    address: usize,
    n: usize,
    accept: impl Fn(Location) -> bool,
) -> Option<(Location, Found)> {
    let table = table();
    // Each location with allocations once: from the first key, then past each
    // location's last possible key (O(locations x log n), not a walk of every entry).
    let mut next = table.keys().next().map(|(l, _)| *l);
    while let Some(l) = next {
        if are_pointers(l) && accept(l) {
            let found = find_in(&table, l, address, n);
            if !matches!(found, Found::Unknown) {
                return Some((l, found));
            }
        }
        next = table
            .range((Bound::Excluded((l, usize::MAX)), Bound::Unbounded))
            .next()
            .map(|((l, _), _)| *l);
    }
    None
}

fn find_in(table: &Table, location: Location, address: usize, n: usize) -> Found {
    let Some(((_, start), memory)) = table.range((location, 0)..=(location, address)).next_back()
    else {
        return Found::Unknown;
    };
    let (start, len) = (*start, memory.len());
    let offset = address - start;
    if offset >= len {
        return Found::Unknown;
    }
    if n > len - offset.min(len) {
        return Found::PastTheEnd { start, len };
    }
    Found::Inside {
        memory: Arc::clone(memory),
        offset,
    }
}
