//! Asking a runtime about an address locus never saw: the drivers that keep a table of
//! their allocations answer which device, which kind and (where they say) which range an
//! address lies in (`cuPointerGetAttribute`, `hipPointerGetAttribute`, SYCL's
//! `get_pointer_type`). [`lookup`](crate::lookup) asks them when its own index has no
//! entry, so a CuPy, PyTorch, dpctl or hand-made `cudaMalloc` pointer is named too.

use super::error::Result;
use super::location::Location;
use super::native::MemoryKind;

/// What a runtime says of an address it allocated (memory locus did not make).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriverAllocation {
    /// The device the memory belongs to (for page-locked host memory, the device whose
    /// runtime allocated or registered it, as for locus's own [`MemoryKind::PinnedHost`]).
    pub location: Location,
    /// The allocation's first address and length in bytes, where the runtime reports
    /// them (CUDA's and HIP's range attributes); `None` where it does not (SYCL).
    pub range: Option<(u64, usize)>,
    /// The kind of memory, in locus's words.
    pub kind: MemoryKind,
}

/// A runtime's answer for addresses it allocated, whoever asked it to.
pub trait PointerQueries {
    /// What the runtime knows of `address`: `Ok(None)` where it did not allocate it
    /// (ordinary host memory, another runtime's memory, an address of nothing); an
    /// error only where the runtime failed to answer.
    fn query_pointer(&self, address: u64) -> Result<Option<DriverAllocation>>;
}
