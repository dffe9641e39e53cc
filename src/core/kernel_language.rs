//! The languages kernels are written in: a leaf of the core, named by locations
//! (`Technology::kernel_language`) and by launches alike.

/// The language a technology's kernels are written in ([`Technology::kernel_language`]):
/// which source of a codelet runs there, and which conversion kernels are generated.
///
/// [`Technology::kernel_language`]: super::location::Technology::kernel_language
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelLanguage {
    /// WGSL (WebGPU): no 64-bit floats, 32-bit scalars.
    Wgsl,
    /// OpenCL C (OpenCL, and SYCL devices through their OpenCL C kernels).
    OpenClC,
    /// C with OpenMP `target` regions, compiled into a shared object.
    OpenMpC,
    /// CUDA C++ through NVRTC.
    Cuda,
    /// HIP C++ through hiprtc.
    Hip,
}

impl KernelLanguage {
    /// Its name, as error messages give it.
    pub const fn name(self) -> &'static str {
        match self {
            KernelLanguage::Wgsl => "WGSL",
            KernelLanguage::OpenClC => "OpenCL C",
            KernelLanguage::OpenMpC => "OpenMP",
            KernelLanguage::Cuda => "CUDA",
            KernelLanguage::Hip => "HIP",
        }
    }
}
