//! Codelets: one compute abstraction over every backend (OpenHMPP's model).
//!
//! A [`Kernel`] is one name, its parameters (buffers with an [`Intent`], and scalars)
//! and a source per technology: WGSL for WebGPU, OpenCL C for OpenCL and SYCL (through
//! the SYCL runtime's kernel bundles), an OpenMP entry built into locus's OpenMP kernel
//! library, a Rust function for the host, and CUDA / HIP sources (compiled at run time by
//! NVRTC and hiprtc on a machine with such a GPU). A [`Codelet`] binds a kernel to a
//! target list: the first available location wins, and the choice is reported. When a
//! launch fails there (a kernel that does not build, a device error, out of memory) the
//! call falls back to the next target of the list ([`CallReport::fell_back`] says why);
//! [`Codelet::call_if`] keeps a call on the host when its condition is false
//! (OpenHMPP's `cond`).
//!
//! Intents drive the data: an `in` argument is made valid at the target (moved only if
//! the copy there is not current) and is not marked written; an `out` argument is
//! allocated at the target and never uploaded; `inout` is both. Outputs stay at the
//! target until someone reads them elsewhere (`delegatedstore`, or never). Everything
//! about the arguments is checked before anything is launched.
//!
//! The rest of OpenHMPP's directive set, directive by directive:
//!
//! | OpenHMPP | locus |
//! |---|---|
//! | `codelet`, `target=` | [`Kernel`], [`Codelet::new`] (first available target; [`Codelet::fallbacks`] when a launch fails) |
//! | `callsite`, `asynchronous`, `synchronize` | [`Codelet::call`], [`Codelet::call_async`], [`Group::call_async`] (overlapping other calls and loads of the group), [`Pending::synchronize`] |
//! | `cond="expr"` | [`Codelet::call_if`], [`Group::call_if`], [`Region::run_if`] |
//! | `args[x].io=in/out/inout` | [`Intent`] |
//! | `advancedload`, `delegatedstore` (`section=`, `asynchronous`) | [`Codelet::advanced_load`] / [`Codelet::advanced_load_section`] / [`Codelet::advanced_load_async`], [`Codelet::delegated_store_to`] (any location) / [`Codelet::delegated_store_async`], with a [`Section`] of [`Triplet`](crate::Triplet)s |
//! | `args[x].noupdate=true`, `args[x].const=true` | [`Codelet::noupdate`], [`Codelet::constant`] (and on a group's codelets) |
//! | `group`, `allocate`, `release` | [`Group::new`], [`Group::allocate`], [`Group::release`] |
//! | `resident`, `map`, `mapbyname` | [`Group::resident`], [`Group::map`] (over the caller's own buffer: [`Group::map_buffer`]), [`Group::map_by_name`] |
//! | `region`, `asynchronous` | [`Region`]: device sources plus a closure for the host; [`Region::run_async`] |
//!
//! ```
//! use locus::codelet::{kernels, Arg, Codelet, Launch};
//! use locus::{Buffer, Location};
//!
//! let saxpy = kernels::saxpy();
//! // Try WebGPU, then OpenCL, then the host: the first this machine has wins.
//! let codelet = Codelet::new(&saxpy, &[Location::WebGpu(0), Location::OpenCl(0), Location::Host])?;
//! let x = Buffer::from_slice(Location::Host, &[1.0f32, 2.0, 3.0])?;
//! let mut y = Buffer::from_slice(Location::Host, &[10.0f32, 20.0, 30.0])?;
//! codelet.call(&mut [Arg::f32(2.0), Arg::buf(&x), Arg::buf_mut(&mut y), Arg::u32(3)], Launch::d1(3))?;
//! assert_eq!(y.to_vec()?, vec![12.0, 24.0, 36.0]);
//! # Ok::<(), locus::Error>(())
//! ```

mod args;
mod call;
mod group;
pub mod kernels;
mod region;

pub use crate::core::element::{DType, Element};
pub use args::{Arg, KernelBuffer, Launch};
pub use call::{CallReport, Codelet, Pending};
pub use group::Group;
pub use region::Region;

use std::fmt;
use std::sync::{Arc, Mutex};

use bytemuck::Pod;

use crate::buffer::{Buffer, Section};
use crate::core::completion::Completion;
use crate::core::error::{Error, Result};
use crate::core::kernel_language::KernelLanguage;
use crate::core::launch::{LaunchArg, LaunchSpec};
use crate::core::location::{Location, Technology};
use crate::core::mapping::HostMapping;
use crate::core::memory::Memory;
use crate::core::route::RouteKind;
use crate::runtime::event::Event;
use crate::runtime::transfer::stats::TransferTotals;

/// How a kernel uses a buffer parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// Read only: made valid at the target, never marked written.
    In,
    /// Written only: allocated at the target, never uploaded.
    Out,
    /// Read and written.
    InOut,
}

/// One kernel parameter.
#[derive(Debug, Clone)]
pub struct Param {
    /// Its name, for messages.
    pub name: String,
    /// A buffer with an intent, or a scalar.
    pub kind: ParamKind,
}

/// Buffer or scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A buffer of `dtype` elements.
    Buffer(DType, Intent),
    /// A scalar passed by value.
    Scalar(DType),
}

/// An argument a host kernel receives.
pub enum HostArg<'a> {
    /// An `in` buffer.
    Read(&'a [u8]),
    /// An `out` or `inout` buffer.
    Write(&'a mut [u8]),
    /// A scalar: its bytes (native endian) from the first, 4 or 8 of them.
    Scalar([u8; 8]),
}

impl HostArg<'_> {
    /// A buffer as elements of `T` (empty if this is a scalar, or the bytes do not fit).
    pub fn elements<T: Pod>(&self) -> &[T] {
        match self {
            HostArg::Read(b) => bytemuck::try_cast_slice(b).unwrap_or(&[]),
            HostArg::Write(b) => bytemuck::try_cast_slice(b).unwrap_or(&[]),
            HostArg::Scalar(_) => &[],
        }
    }

    /// A written buffer as elements of `T` (empty if this is not a written buffer).
    pub fn elements_mut<T: Pod>(&mut self) -> &mut [T] {
        match self {
            HostArg::Write(b) => bytemuck::try_cast_slice_mut(b).unwrap_or(&mut []),
            _ => &mut [],
        }
    }

    /// A scalar as `T` (4- or 8-byte types; zero if this is a buffer).
    pub fn scalar<T: Pod>(&self) -> T {
        match self {
            HostArg::Scalar(b) => {
                bytemuck::try_pod_read_unaligned(&b[..std::mem::size_of::<T>().min(8)])
                    .unwrap_or_else(|_| T::zeroed())
            }
            _ => T::zeroed(),
        }
    }

    /// An input buffer as `f32`s (empty if this is not a readable buffer).
    pub fn f32s(&self) -> &[f32] {
        match self {
            HostArg::Read(b) => bytemuck::try_cast_slice(b).unwrap_or(&[]),
            HostArg::Write(b) => bytemuck::try_cast_slice(b).unwrap_or(&[]),
            HostArg::Scalar(_) => &[],
        }
    }

    /// An output buffer as `f32`s (empty if this is not a written buffer).
    pub fn f32s_mut(&mut self) -> &mut [f32] {
        match self {
            HostArg::Write(b) => bytemuck::try_cast_slice_mut(b).unwrap_or(&mut []),
            _ => &mut [],
        }
    }

    /// A scalar as `f32`.
    pub fn f32(&self) -> f32 {
        self.scalar()
    }

    /// A scalar as `u32`.
    pub fn u32(&self) -> u32 {
        self.scalar()
    }
}

/// An integer scalar's value as a count (negative values count nothing; other types 0).
fn scalar_count(dtype: DType, bytes: &[u8; 8]) -> u128 {
    let four = [bytes[0], bytes[1], bytes[2], bytes[3]];
    match dtype {
        DType::U32 => u32::from_ne_bytes(four) as u128,
        DType::I32 => i32::from_ne_bytes(four).max(0) as u128,
        DType::U64 => u64::from_ne_bytes(*bytes) as u128,
        DType::I64 => i64::from_ne_bytes(*bytes).max(0) as u128,
        _ => 0,
    }
}

/// A kernel for the host: receives the arguments in parameter order and the global size.
pub type HostKernel = fn(&mut [HostArg<'_>], [usize; 2]);

#[derive(Clone)]
struct Source {
    text: String,
    entry: String,
    workgroup: [u32; 3],
}

/// A kernel: one name, its parameters and a source per technology.
#[derive(Clone)]
pub struct Kernel {
    name: String,
    params: Vec<Param>,
    equal_lengths: bool,
    /// The buffers the launch size is checked against (every buffer when `None`).
    launch_within: Option<Vec<String>>,
    /// Scalars that count elements of buffers: (scalar, the buffers it may not exceed).
    counts: Vec<(String, Vec<String>)>,
    wgsl: Option<Source>,
    opencl_c: Option<Source>,
    openmp: Option<String>,
    openmp_c: Option<String>,
    host: Option<HostKernel>,
    cuda: Option<Source>,
    hip: Option<Source>,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl Kernel {
    /// A kernel named `name` with no parameters and no sources yet.
    pub fn new(name: &str) -> Kernel {
        Kernel {
            name: name.to_string(),
            params: Vec::new(),
            equal_lengths: false,
            launch_within: None,
            counts: Vec::new(),
            wgsl: None,
            opencl_c: None,
            openmp: None,
            openmp_c: None,
            host: None,
            cuda: None,
            hip: None,
        }
    }

    /// Adds a buffer parameter.
    pub fn buffer(mut self, name: &str, dtype: DType, intent: Intent) -> Kernel {
        self.params.push(Param {
            name: name.into(),
            kind: ParamKind::Buffer(dtype, intent),
        });
        self
    }

    /// Adds a scalar parameter.
    pub fn scalar(mut self, name: &str, dtype: DType) -> Kernel {
        self.params.push(Param {
            name: name.into(),
            kind: ParamKind::Scalar(dtype),
        });
        self
    }

    /// Requires every buffer argument to have the same length.
    pub fn equal_lengths(mut self) -> Kernel {
        self.equal_lengths = true;
        self
    }

    /// Checks the launch size against these buffers only (by default: every buffer
    /// must hold at least one element per work item). For kernels whose grid is not
    /// their buffers' length, e.g. [`kernels::sgemm`], launched over `C` while `A` and
    /// `B` have other shapes: the kernel bounds its other accesses itself.
    pub fn launch_within(mut self, buffers: &[&str]) -> Kernel {
        self.launch_within = Some(buffers.iter().map(|b| b.to_string()).collect());
        self
    }

    /// Declares that the integer scalar `count` counts elements of `buffers`: a call
    /// whose value exceeds one of their lengths is refused before anything moves or
    /// launches. For kernels that index by a count rather than by their launch, e.g. the
    /// grid-stride loop of [`kernels::stream::dot`]; names that are not parameters are
    /// ignored.
    pub fn counts(mut self, count: &str, buffers: &[&str]) -> Kernel {
        self.counts.push((
            count.to_string(),
            buffers.iter().map(|b| b.to_string()).collect(),
        ));
        self
    }

    /// Refuses arguments whose counting scalars exceed their buffers ([`Kernel::counts`]).
    fn check_counts(&self, args: &[Arg<'_>]) -> Result<()> {
        let position = |name: &str| self.params.iter().position(|p| p.name == name);
        for (count, buffers) in &self.counts {
            let value = match position(count).and_then(|i| args.get(i)) {
                Some(Arg::Scalar(t, bytes)) => scalar_count(*t, bytes),
                _ => continue,
            };
            for buffer in buffers {
                let len = match position(buffer).and_then(|i| args.get(i)) {
                    Some(Arg::Buf(b)) => b.elements(),
                    Some(Arg::BufMut(b)) => b.elements(),
                    _ => continue,
                };
                if value > len as u128 {
                    return Err(Error::Invalid(format!(
                        "kernel `{}`: `{count}` is {value}, more than buffer `{buffer}` holds ({len} elements); nothing was launched",
                        self.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// The WGSL source, its entry point and the workgroup size it declares. Buffers are
    /// bound at 0.. in parameter order, scalars in one uniform struct after them.
    pub fn wgsl(mut self, source: &str, entry: &str, workgroup: [u32; 3]) -> Kernel {
        self.wgsl = Some(Source {
            text: source.into(),
            entry: entry.into(),
            workgroup,
        });
        self
    }

    /// The OpenCL C source (used for OpenCL and, through kernel bundles, SYCL).
    pub fn opencl_c(mut self, source: &str, entry: &str) -> Kernel {
        self.opencl_c = Some(Source {
            text: source.into(),
            entry: entry.into(),
            workgroup: [1, 1, 1],
        });
        self
    }

    /// The OpenMP kernel `locus_omp_k_<entry>` built into locus's kernel library.
    pub fn openmp(mut self, entry: &str) -> Kernel {
        self.openmp = Some(entry.into());
        self.openmp_c = None;
        self
    }

    /// The user's own OpenMP kernel: C `source` defining `int locus_omp_k_<entry>(void
    /// **args, size_t gx, size_t gy, int dev)` (the convention of
    /// `shaders/vec_add_openmp.c`: `args[i]` is the device pointer of buffer parameter
    /// `i`, or a pointer to scalar parameter `i`). Compiled at the first call with the
    /// system's C compiler and `-fopenmp` into a cached shared object (as NVRTC is for
    /// CUDA); the compiler's diagnostics are the error when it fails.
    pub fn openmp_c(mut self, source: &str, entry: &str) -> Kernel {
        self.openmp = Some(entry.into());
        self.openmp_c = Some(source.into());
        self
    }

    /// The host implementation.
    pub fn host(mut self, f: HostKernel) -> Kernel {
        self.host = Some(f);
        self
    }

    /// The CUDA C source (NVRTC) for the CUDA backend.
    pub fn cuda(mut self, source: &str, entry: &str) -> Kernel {
        self.cuda = Some(Source {
            text: source.into(),
            entry: entry.into(),
            workgroup: [256, 1, 1],
        });
        self
    }

    /// The HIP source (hiprtc) for the HIP backend.
    pub fn hip(mut self, source: &str, entry: &str) -> Kernel {
        self.hip = Some(Source {
            text: source.into(),
            entry: entry.into(),
            workgroup: [256, 1, 1],
        });
        self
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameters in order.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// True when there is a source for `technology`.
    pub fn has_source_for(&self, technology: Technology) -> bool {
        self.source_for(technology).is_ok()
    }

    /// True when a parameter is `f64` (buffer or scalar): the target needs 64-bit floats.
    pub fn needs_f64(&self) -> bool {
        self.params.iter().any(|p| {
            matches!(
                p.kind,
                ParamKind::Buffer(DType::F64, _) | ParamKind::Scalar(DType::F64)
            )
        })
    }

    fn source_for(&self, technology: Technology) -> Result<()> {
        let language = technology.kernel_language();
        if language == Some(KernelLanguage::Wgsl) && self.needs_f64() {
            return Err(Error::Invalid(format!(
                "kernel `{}` uses f64, which WGSL (WebGPU's shading language) does not have; run it on OpenCL, SYCL, OpenMP, CUDA, HIP or the host",
                self.name
            )));
        }
        let (present, what) = match language {
            None => (self.host.is_some(), "host (Rust)"),
            Some(language) => (self.source_in(language).is_some(), language.name()),
        };
        if present {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "kernel `{}` has no {what} source, so it cannot run on {technology}",
                self.name
            )))
        }
    }

    /// The source in `language`: its text, entry point and workgroup size (OpenMP's text
    /// is the C it was given, empty for the kernels locus ships, with a workgroup of 1).
    fn source_in(&self, language: KernelLanguage) -> Option<(&str, &str, [u32; 3])> {
        fn of(s: &Source) -> (&str, &str, [u32; 3]) {
            (s.text.as_str(), s.entry.as_str(), s.workgroup)
        }
        match language {
            KernelLanguage::Wgsl => self.wgsl.as_ref().map(of),
            KernelLanguage::OpenClC => self.opencl_c.as_ref().map(of),
            KernelLanguage::OpenMpC => self.openmp.as_ref().map(|e| {
                (
                    self.openmp_c.as_deref().unwrap_or(""),
                    e.as_str(),
                    [1, 1, 1],
                )
            }),
            KernelLanguage::Cuda => self.cuda.as_ref().map(of),
            KernelLanguage::Hip => self.hip.as_ref().map(of),
        }
    }

    fn signature(&self) -> String {
        self.params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
