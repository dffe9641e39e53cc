//! Memory that several locations reach in place, asked for by the locations rather than
//! by a technology's memory kind (Kokkos's `SharedSpace` and `SharedHostPinnedSpace` as
//! a request): `Memory::reachable_from(&[host, sycl:0], bytes)` answers with the best
//! kind every listed location uses in place (the owner's own memory where the others
//! reach it, else managed, USM shared, SVM, host-visible, USM host or pinned host
//! memory, else the host's own memory under HMM / ATS), chosen from what the devices
//! say of a small allocation of each kind, or an error naming the pair that has none.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::registry::registry;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::MemoryKind;

/// The kinds tried, best first: the owner's own memory, then memory that migrates to
/// whoever touches it, then memory both sides map, then host memory devices read.
const PREFERENCE: [MemoryKind; 9] = [
    MemoryKind::Default,
    MemoryKind::Managed,
    MemoryKind::UsmShared,
    MemoryKind::SvmFine,
    MemoryKind::SvmCoarse,
    MemoryKind::HostVisible,
    MemoryKind::UsmHost,
    MemoryKind::PinnedHost,
    MemoryKind::StreamOrdered,
];

/// The bytes of the allocation each candidate is judged by.
const PROBE_BYTES: usize = 4096;

/// Where memory every listed location reaches in place lives, and of what kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// The location that allocates it.
    pub location: Location,
    /// Its kind there.
    pub kind: MemoryKind,
    /// Why each listed location reaches it, one clause each.
    pub reason: String,
}

impl std::fmt::Display for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} memory at {} ({})",
            self.kind, self.location, self.reason
        )
    }
}

/// The answers so far, by sorted set of locations (an error as its message).
type Answers = HashMap<Vec<Location>, std::result::Result<Reach, String>>;

fn answers() -> &'static Mutex<Answers> {
    static ANSWERS: OnceLock<Mutex<Answers>> = OnceLock::new();
    ANSWERS.get_or_init(Default::default)
}

/// The memory every one of `locations` uses in place, best first (see the module's
/// note); an error naming, for each candidate tried, a location that does not reach it.
/// Decided once per set of locations in a process.
pub fn reachable_kind(locations: &[Location]) -> Result<Reach> {
    if locations.is_empty() {
        return Err(Error::Invalid(
            "Memory::reachable_from: no locations given; name the locations that must use the memory in place".into(),
        ));
    }
    let registry = registry();
    for &l in locations {
        registry.device(l)?;
    }
    let mut key: Vec<Location> = locations.to_vec();
    key.sort();
    key.dedup();
    if let Some(known) = answers()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
    {
        return known.clone().map_err(Error::Invalid);
    }
    let answer = decide(&key);
    answers()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, answer.clone());
    answer.map_err(Error::Invalid)
}

/// Tries each owner (the listed devices in order, then the host) and each of its kinds.
fn decide(locations: &[Location]) -> std::result::Result<Reach, String> {
    let mut owners: Vec<Location> = locations.iter().copied().filter(|l| !l.is_host()).collect();
    owners.push(Location::Host);
    let mut tried = Vec::new();
    for owner in owners {
        let Ok(device) = registry().device(owner) else {
            continue;
        };
        let offered = device.memory_kinds();
        for kind in PREFERENCE.iter().copied().filter(|k| offered.contains(k)) {
            let probe = match Memory::on_kind(device, kind, PROBE_BYTES) {
                Ok(m) => m,
                Err(e) => {
                    tried.push(format!("{kind} at {owner}: {e}"));
                    continue;
                }
            };
            let mut reasons = Vec::new();
            let mut refused = None;
            for &user in locations {
                let (yes, why) = super::access::memory_accessibility(&probe, user);
                if yes {
                    reasons.push(format!("{user}: {why}"));
                } else {
                    refused = Some(format!("{kind} at {owner}: not from {user} ({why})"));
                    break;
                }
            }
            match refused {
                None => {
                    return Ok(Reach {
                        location: owner,
                        kind,
                        reason: reasons.join("; "),
                    })
                }
                Some(why) => tried.push(why),
            }
        }
    }
    let names: Vec<String> = locations.iter().map(|l| l.to_string()).collect();
    Err(format!(
        "Memory::reachable_from: no memory is used in place by all of {}: {}; keep the data in a Buffer, which moves it between them",
        names.join(", "),
        tried.join("; ")
    ))
}

impl Memory {
    /// Allocates `bytes` that every one of `locations` uses in place, of the best kind
    /// they share ([`reachable_kind`]): what Kokkos calls a shared space, asked for by
    /// the locations instead of a technology's memory kind. An error names, for each
    /// kind tried, a location that does not reach it.
    ///
    /// ```
    /// use locus::{Location, Memory};
    ///
    /// let at = *locus::available().last().unwrap();
    /// match Memory::reachable_from(&[Location::Host, at], 4096) {
    ///     Ok(m) => assert!(m.is_accessible_from(Location::Host) && m.is_accessible_from(at)),
    ///     Err(e) => println!("{e}"), // which kind each location could not use, and why
    /// }
    /// ```
    pub fn reachable_from(locations: &[Location], bytes: usize) -> Result<Memory> {
        let reach = reachable_kind(locations)?;
        Memory::new_kind(reach.location, reach.kind, bytes)
    }
}
