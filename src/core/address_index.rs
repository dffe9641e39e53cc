//! Which allocation an address belongs to ([`lookup_tracked`]): every live [`Memory`] whose
//! handle is an address (host, OpenMP, CUDA, HIP, SYCL USM) and every host range
//! registered in place is entered here when it is made and removed before it is freed,
//! as Umpire's allocation map and UMF's tracking provider do. An ordered map keyed by
//! address answers in O(log n) under a read lock; entering and removing take the write
//! lock once per allocation.
//!
//! OpenCL buffers and WebGPU buffers hand out an object, not an address, so they are not
//! entered (their [`Native::address`] is an offset inside the object).
//!
//! [`Memory`]: super::memory::Memory

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{RwLock, Weak};

use super::block::ReturnBlock;
use super::error::{Error, Result};
use super::location::Location;
use super::native::{MemoryKind, Native};

/// What [`lookup`](crate::lookup) knows of an address: the allocation it lies in and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressInfo {
    /// Where the allocation lives.
    pub location: Location,
    /// The allocation's first address (the address itself where unknown).
    pub base: u64,
    /// The allocation's length in bytes (0 where unknown).
    pub len: usize,
    /// How far into the allocation the address lies (`address - base`).
    pub offset: usize,
    /// The kind of memory ([`MemoryKind::Default`] for a location's ordinary memory).
    pub kind: MemoryKind,
    /// The memory resource the allocation is on loan from, as it describes itself
    /// (`pool(upstream(cuda:0))`, ...); `None` for memory allocated or adopted directly.
    pub resource: Option<String>,
    /// The runtimes the range is registered in place with (CUDA's `cuMemHostRegister`,
    /// HIP's `hipHostRegister`), each named by the device that registered it.
    pub registered_with: Vec<Location>,
    /// Whether locus made, adopted or registered the memory; `false` where a driver
    /// answered for memory another library allocated (then `base` and `len` are the
    /// driver's range, or the address itself and 0 where the driver gives none: SYCL).
    pub known_to_locus: bool,
}

/// One entry of the index.
struct Entry {
    len: usize,
    location: Location,
    kind: MemoryKind,
    lender: Option<Weak<dyn ReturnBlock>>,
}

/// Entries keyed by (first address, a number no other entry has), so that two handles of
/// one address (memory adopted twice) are two entries.
type Map<T> = RwLock<BTreeMap<(u64, u64), T>>;

static MEMORY: Map<Entry> = RwLock::new(BTreeMap::new());
/// Registered host ranges: (length, the device whose runtime registered it).
static REGISTERED: Map<(usize, Location)> = RwLock::new(BTreeMap::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

/// How many entries below an address [`lookup_tracked`] looks at for one that holds it, where
/// allocations nest (memory adopted over part of another): past that, the nearest one
/// answers alone, which keeps a lookup O(log n).
const NESTED: usize = 8;

/// An entry of the index, removed when this is dropped.
pub(crate) struct Indexed {
    key: (u64, u64),
    registered: bool,
}

impl Drop for Indexed {
    fn drop(&mut self) {
        if self.registered {
            write(&REGISTERED).remove(&self.key);
        } else {
            write(&MEMORY).remove(&self.key);
        }
    }
}

fn write<T>(map: &Map<T>) -> std::sync::RwLockWriteGuard<'_, BTreeMap<(u64, u64), T>> {
    map.write().unwrap_or_else(|e| e.into_inner())
}

fn read<T>(map: &Map<T>) -> std::sync::RwLockReadGuard<'_, BTreeMap<(u64, u64), T>> {
    map.read().unwrap_or_else(|e| e.into_inner())
}

/// Enters an allocation of `len` bytes at `location`; `None` (nothing entered) for an
/// empty one or a handle that is not an address.
pub(crate) fn enter_memory(
    native: &Native,
    len: usize,
    location: Location,
    lender: Option<Weak<dyn ReturnBlock>>,
) -> Option<Indexed> {
    if len == 0 || !native.is_pointer() {
        return None;
    }
    let (base, kind) = (native.address(), native.memory_kind());
    let key = (base, NEXT.fetch_add(1, Ordering::Relaxed));
    let entry = Entry {
        len,
        location,
        kind,
        lender,
    };
    write(&MEMORY).insert(key, entry);
    Some(Indexed {
        key,
        registered: false,
    })
}

/// Enters `len` bytes of host memory at `base` registered in place by `location`'s
/// runtime; `None` for an empty range.
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(dead_code))]
pub(crate) fn enter_registration(base: u64, len: usize, location: Location) -> Option<Indexed> {
    if len == 0 {
        return None;
    }
    let key = (base, NEXT.fetch_add(1, Ordering::Relaxed));
    write(&REGISTERED).insert(key, (len, location));
    Some(Indexed {
        key,
        registered: true,
    })
}

/// The entries holding `address` among those at or below it (the nearest first, then up
/// to [`NESTED`] more for nested ones), with their keys.
fn holding<T>(
    map: &BTreeMap<(u64, u64), T>,
    address: u64,
    len: impl Fn(&T) -> usize,
) -> impl Iterator<Item = (&(u64, u64), &T)> {
    map.range(..=(address, u64::MAX))
        .rev()
        .take(NESTED + 1)
        .filter(move |((base, _), entry)| address - base < len(entry) as u64)
}

/// Whether any of the `len` bytes at `address` lie in host memory registered in place
/// by a runtime of `technology` (its first or last byte inside a registered range).
// Only CUDA and HIP register host memory in place.
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(dead_code))]
pub(crate) fn registered_by(
    address: u64,
    len: usize,
    technology: super::location::Technology,
) -> bool {
    let registered = read(&REGISTERED);
    let last = address.saturating_add(len.max(1) as u64 - 1);
    [address, last].into_iter().any(|at| {
        holding(&registered, at, |r| r.0)
            .any(|(_, &(_, location))| location.technology() == technology)
    })
}

/// Which allocation locus made, adopted or registered `address` lies in (the index
/// alone; [`lookup`](crate::lookup) asks the drivers after it): O(log n), from any
/// thread. An address of none is an error naming it.
pub fn lookup_tracked(address: u64) -> Result<AddressInfo> {
    // The registered ranges holding the address (one per runtime that registered it).
    let registrations: Vec<(u64, usize, Location)> = holding(&read(&REGISTERED), address, |r| r.0)
        .map(|(&(base, _), &(len, location))| (base, len, location))
        .collect();
    let mut registered_with: Vec<Location> = registrations.iter().map(|r| r.2).collect();
    registered_with.sort();
    registered_with.dedup();
    let map = read(&MEMORY);
    let found = holding(&map, address, |e| e.len)
        .next()
        .map(|(&(base, _), e)| {
            let lender = e.lender.as_ref().and_then(Weak::upgrade);
            (base, e.len, e.location, e.kind, lender)
        });
    // The description is asked of the lender with no lock of the index held.
    drop(map);
    if let Some((base, len, location, kind, lender)) = found {
        return Ok(AddressInfo {
            location,
            base,
            len,
            offset: (address - base) as usize,
            kind,
            resource: lender.map(|l| l.lender_name()),
            registered_with,
            known_to_locus: true,
        });
    }
    if let Some(&(base, len, _)) = registrations.first() {
        return Ok(AddressInfo {
            location: Location::Host,
            base,
            len,
            offset: (address - base) as usize,
            kind: MemoryKind::Default,
            resource: None,
            registered_with,
            known_to_locus: true,
        });
    }
    Err(Error::Invalid(format!(
        "lookup: {address:#x} lies in no live allocation locus made, adopted or registered"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::registration::HostRegistration;

    #[test]
    fn a_registered_range_names_the_runtimes_that_registered_it_until_it_ends() {
        let mut theirs = vec![0u8; 8192];
        let base = theirs.as_mut_ptr() as u64;
        let cuda = HostRegistration::new(Location::Cuda(0), || {}).entered(base, 8192);
        let hip = HostRegistration::new(Location::Hip(0), || {}).entered(base, 8192);
        let info = lookup_tracked(base + 8000).unwrap();
        assert_eq!(
            (info.location, info.base, info.len),
            (Location::Host, base, 8192)
        );
        assert_eq!(info.offset, 8000);
        assert_eq!(
            info.registered_with,
            vec![Location::Cuda(0), Location::Hip(0)]
        );
        drop(cuda);
        assert_eq!(
            lookup_tracked(base).unwrap().registered_with,
            vec![Location::Hip(0)]
        );
        drop(hip);
        assert!(
            lookup_tracked(base).is_err(),
            "an ended registration is still looked up"
        );
    }

    #[test]
    fn memory_inside_a_registered_range_is_the_memory_and_says_it_is_registered() {
        let host = crate::runtime::registry::registry().host();
        let memory = crate::core::memory::Memory::on(&host, 4096).unwrap();
        let base = memory.native().address();
        let registered = HostRegistration::new(Location::Cuda(1), || {}).entered(base, 4096);
        let info = lookup_tracked(base + 1).unwrap();
        assert_eq!((info.len, info.offset), (4096, 1));
        assert_eq!(info.registered_with, vec![Location::Cuda(1)]);
        drop(registered);
        assert!(lookup_tracked(base + 1).unwrap().registered_with.is_empty());
    }
}
