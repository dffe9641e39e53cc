//! Kernel launches, backend-neutral: the arguments handed to a backend. Each backend
//! builds and caches its kernels (OpenCL programs, SYCL kernel bundles, wgpu pipelines),
//! launches them on its own queue and returns a [`Completion`](super::completion::Completion).

use super::error::Error;
use super::location::Location;
use super::memory::Memory;

/// One kernel argument, in the kernel's parameter order.
#[derive(Debug, Clone, Copy)]
pub enum LaunchArg<'a> {
    /// A buffer parameter: the allocation the kernel reads or writes.
    Memory(&'a Memory),
    /// A 32-bit float scalar.
    F32(f32),
    /// A 32-bit unsigned scalar.
    U32(u32),
    /// A 32-bit signed scalar.
    I32(i32),
    /// A 64-bit float scalar.
    F64(f64),
    /// A 64-bit signed scalar.
    I64(i64),
    /// A 64-bit unsigned scalar.
    U64(u64),
    /// An 8-bit signed scalar.
    I8(i8),
    /// An 8-bit unsigned scalar.
    U8(u8),
    /// A 16-bit signed scalar.
    I16(i16),
    /// A 16-bit unsigned scalar.
    U16(u16),
}

impl LaunchArg<'_> {
    /// The scalar's bytes (native endian; 4 or 8 of them), or `None` for a buffer.
    pub fn scalar_bytes(&self) -> Option<Vec<u8>> {
        match self {
            LaunchArg::Memory(_) => None,
            LaunchArg::F32(v) => Some(v.to_ne_bytes().to_vec()),
            LaunchArg::U32(v) => Some(v.to_ne_bytes().to_vec()),
            LaunchArg::I32(v) => Some(v.to_ne_bytes().to_vec()),
            LaunchArg::F64(v) => Some(v.to_ne_bytes().to_vec()),
            LaunchArg::I64(v) => Some(v.to_ne_bytes().to_vec()),
            LaunchArg::U64(v) => Some(v.to_ne_bytes().to_vec()),
            LaunchArg::I8(v) => Some(v.to_ne_bytes().to_vec()),
            LaunchArg::U8(v) => Some(v.to_ne_bytes().to_vec()),
            LaunchArg::I16(v) => Some(v.to_ne_bytes().to_vec()),
            LaunchArg::U16(v) => Some(v.to_ne_bytes().to_vec()),
        }
    }
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
