//! Which allocation an address lies in ([`lookup`]): locus's own index first, then the
//! drivers present, for memory another library allocated.

use crate::core::address_index::{lookup_tracked, AddressInfo};
use crate::core::error::{Error, Result};
use crate::runtime::registry::registry;

/// Which allocation `address` lies in: its location, first address, length, the
/// address's offset in it, its kind, the resource it is on loan from, and the runtimes
/// it is registered with.
///
/// Any address inside live memory locus made or adopted whose handle is an address
/// (host, OpenMP, CUDA, HIP, SYCL USM), and any host range registered in place,
/// answers from locus's index in O(log n), from any thread. Any other address is asked
/// of the drivers present that keep a table of their allocations, so memory another
/// library made answers too ([`AddressInfo::known_to_locus`] is then `false`): CUDA's
/// and HIP's device, pinned and managed memory with its range (`cuPointerGetAttribute`,
/// `hipPointerGetAttribute`), SYCL USM of a locus location's context with its kind and
/// device but no range (`DPCTLUSM_GetPointerType`, `DPCTLUSM_GetPointerDevice`).
///
/// An address of no live allocation (never one, freed, plain host memory no runtime
/// registered, or an OpenCL / WebGPU buffer, whose handles are objects) is an error
/// naming it.
///
/// ```
/// use locus::{Location, Memory};
/// let memory = Memory::new(Location::Host, 4096)?;
/// let at = memory.native().address() + 100;
/// let info = locus::lookup(at)?;
/// assert_eq!((info.location, info.offset, info.len), (Location::Host, 100, 4096));
/// assert!(info.known_to_locus);
/// drop(memory);
/// assert!(locus::lookup(at).is_err());
/// # Ok::<(), locus::Error>(())
/// ```
pub fn lookup(address: u64) -> Result<AddressInfo> {
    if let Ok(info) = lookup_tracked(address) {
        return Ok(info);
    }
    let (mut asked, mut failures) = (Vec::new(), Vec::new());
    for device in registry().devices() {
        let Some(queries) = device.pointer_queries() else {
            continue;
        };
        asked.push(device.location().to_string());
        match queries.query_pointer(address) {
            Ok(Some(found)) => {
                let (base, len) = found.range.unwrap_or((address, 0));
                return Ok(AddressInfo {
                    location: found.location,
                    base,
                    len,
                    offset: address.saturating_sub(base) as usize,
                    kind: found.kind,
                    resource: None,
                    registered_with: Vec::new(),
                    known_to_locus: false,
                });
            }
            Ok(None) => {}
            Err(e) => failures.push(format!("{}: {e}", device.location())),
        }
    }
    let asked = match asked.is_empty() {
        true => "no driver here keeps a table of its allocations (CUDA, HIP, SYCL)".to_string(),
        false => format!("nor did the drivers of {} allocate it", asked.join(", ")),
    };
    let failed = match failures.is_empty() {
        true => String::new(),
        false => format!("; failed to answer: {}", failures.join("; ")),
    };
    Err(Error::Invalid(format!(
        "lookup: {address:#x} lies in no live allocation locus made, adopted or registered, \
         {asked}{failed} (freed already, never one, plain host memory, or inside an OpenCL \
         or WebGPU buffer, whose handles are objects, not addresses); pass an address \
         inside a live memory's range"
    )))
}
