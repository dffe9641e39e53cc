//! One check of a GPU device's answers for addresses (`PointerQueries`), run by each
//! vendor's call-layer tests over its simulated driver: every kind of memory the driver
//! allocated names its device, range and kind from any address inside it, registered
//! host memory is page-locked memory of the device, and an address the driver never
//! saw is no answer (not an error).

use std::sync::Arc;

use super::{GpuApi, GpuDevice, GpuMemory};
use crate::core::device::Device;
use crate::core::native::MemoryKind;
use crate::core::pointer_queries::DriverAllocation;

/// Runs the check at `gpu` (device 0 of its driver).
pub(crate) fn the_driver_names_every_kind_of_its_memory<A: GpuApi>(gpu: &Arc<GpuDevice<A>>) {
    let queries = gpu
        .pointer_queries()
        .expect("a GPU answers for its pointers");
    let at = gpu.location();
    for memory in [GpuMemory::Device, GpuMemory::Pinned, GpuMemory::Managed] {
        let allocation = gpu.allocate_kind(4096, memory).unwrap();
        let base = allocation.native().address();
        let found = queries.query_pointer(base + 100).unwrap();
        assert_eq!(
            found,
            Some(DriverAllocation {
                location: at,
                range: Some((base, 4096)),
                kind: memory.memory_kind(),
            }),
            "{memory:?}"
        );
    }
    let mut host = vec![0u8; 8192];
    let registration = gpu
        .host_registration()
        .expect("a GPU registers host memory");
    // SAFETY: `host` outlives the registration, dropped below before it.
    let registered = unsafe { registration.register_host(host.as_mut_ptr(), 8192) }.unwrap();
    let start = host.as_ptr() as u64;
    assert_eq!(
        queries.query_pointer(start + 8000).unwrap(),
        Some(DriverAllocation {
            location: at,
            range: Some((start, 8192)),
            kind: MemoryKind::PinnedHost,
        })
    );
    drop(registered);
    assert_eq!(queries.query_pointer(start).unwrap(), None);
    assert_eq!(queries.query_pointer(0x10).unwrap(), None);
}
