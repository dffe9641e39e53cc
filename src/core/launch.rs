//! Kernel launches, backend-neutral: the arguments handed to a backend. Each backend
//! builds and caches its kernels (OpenCL programs, SYCL kernel bundles, wgpu pipelines),
//! launches them on its own queue and returns a [`Completion`](super::completion::Completion).

use super::element::{DType, Element};
use super::error::Error;
/// Where it was defined before `kernel_language.rs` (kept for one release).
pub use super::kernel_language::KernelLanguage;
use super::location::Location;
use super::memory::Memory;

/// One kernel argument, in the kernel's parameter order.
#[derive(Debug, Clone, Copy)]
pub enum LaunchArg<'a> {
    /// A buffer parameter: the allocation the kernel reads or writes.
    Memory(&'a Memory),
    /// A scalar passed by value: its type and its native-endian bytes, from the first
    /// (`dtype.size()` of them; see [`LaunchArg::scalar`]).
    Scalar(DType, [u8; 8]),
}

impl LaunchArg<'_> {
    /// A scalar argument of `value`.
    pub fn scalar<T: Element>(value: T) -> LaunchArg<'static> {
        LaunchArg::Scalar(T::DTYPE, scalar_slot(value))
    }

    /// The scalar's bytes (native endian, its type's size), or `None` for a buffer.
    pub fn scalar_bytes(&self) -> Option<&[u8]> {
        match self {
            LaunchArg::Memory(_) => None,
            LaunchArg::Scalar(t, bytes) => Some(&bytes[..t.size()]),
        }
    }
}

/// `value`'s bytes (native endian) at the start of an 8-byte slot, the rest zero: how
/// scalars travel to kernels.
pub fn scalar_slot<T: Element>(value: T) -> [u8; 8] {
    let mut slot = [0u8; 8];
    let bytes = bytemuck::bytes_of(&value);
    slot[..bytes.len()].copy_from_slice(bytes);
    slot
}

/// The work to launch: a kernel source in the technology's language, its entry point,
/// the workgroup size it declares (WGSL) and the global size.
#[derive(Debug, Clone, Copy)]
pub struct LaunchSpec<'a> {
    /// Kernel source text (WGSL, OpenCL C, CUDA, HIP; for OpenMP the user's C source,
    /// empty for a kernel built into locus).
    pub source: &'a str,
    /// Entry point (kernel function) name.
    pub entry: &'a str,
    /// Workgroup size the source declares (used by WebGPU to size the dispatch).
    pub workgroup: [u32; 3],
    /// Global size in work items, `[x, y]` (y = 1 for 1-D).
    pub global: [usize; 2],
    /// 1 or 2.
    pub dims: usize,
}

/// The error for a kernel a backend cannot run with these arguments.
#[allow(dead_code)] // used by the kernel-launching backends (features)
pub(crate) fn bad_argument(location: Location, index: usize, why: &str) -> Error {
    Error::Invalid(format!("{location}: kernel argument {index}: {why}"))
}

/// A stable key for caching a compiled kernel.
#[allow(dead_code)] // used by the kernel-launching backends (features)
pub(crate) fn cache_key(source: &str, entry: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut h);
    entry.hash(&mut h);
    h.finish()
}
