//! Codelets: one compute abstraction over every backend (OpenHMPP's model).
//!
//! A [`Kernel`] is one name, its parameters (buffers with an [`Intent`], and scalars)
//! and a source per technology: WGSL for WebGPU, OpenCL C for OpenCL and SYCL (through
//! the SYCL runtime's kernel bundles), an OpenMP entry built into locus's OpenMP kernel
//! library, a Rust function for the host, and CUDA / HIP sources (kept for the CUDA and
//! HIP backends, which this build does not have). A [`Codelet`] binds a kernel to a
//! target list: the first available location wins, and the choice is reported.
//!
//! Intents drive the data: an `in` argument is made valid at the target (moved only if
//! it is not already there: OpenHMPP's `noupdate`, automatically) and is not marked
//! written; an `out` argument is allocated at the target and never uploaded; `inout`
//! is both. Outputs stay at the target until someone reads them elsewhere
//! (`delegatedstore`, or never). Everything about the arguments is checked before
//! anything is launched.
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

pub mod kernels;

use std::fmt;
use std::sync::Arc;

use bytemuck::Pod;

use crate::buffer::Buffer;
use crate::core::completion::Completion;
use crate::core::error::{Error, Result};
use crate::core::launch::{LaunchArg, LaunchSpec};
use crate::core::location::{Location, Technology};
use crate::core::mapping::HostMapping;
use crate::core::memory::Memory;
use crate::core::route::RouteKind;
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

/// Element or scalar type of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 32-bit unsigned integer.
    U32,
    /// 32-bit signed integer.
    I32,
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DType::F32 => "f32",
            DType::U32 => "u32",
            DType::I32 => "i32",
        })
    }
}

/// Element types kernels take.
pub trait Element: Pod + Send + Sync {
    /// The matching [`DType`].
    const DTYPE: DType;
}
impl Element for f32 {
    const DTYPE: DType = DType::F32;
}
impl Element for u32 {
    const DTYPE: DType = DType::U32;
}
impl Element for i32 {
    const DTYPE: DType = DType::I32;
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
    /// A scalar.
    Scalar([u8; 4]),
}

impl HostArg<'_> {
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
        match self {
            HostArg::Scalar(b) => f32::from_ne_bytes(*b),
            _ => 0.0,
        }
    }

    /// A scalar as `u32`.
    pub fn u32(&self) -> u32 {
        match self {
            HostArg::Scalar(b) => u32::from_ne_bytes(*b),
            _ => 0,
        }
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
    wgsl: Option<Source>,
    opencl_c: Option<Source>,
    openmp: Option<String>,
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
            wgsl: None,
            opencl_c: None,
            openmp: None,
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

    fn source_for(&self, technology: Technology) -> Result<()> {
        let (present, what) = match technology {
            Technology::Host => (self.host.is_some(), "host (Rust)"),
            Technology::WebGpu => (self.wgsl.is_some(), "WGSL"),
            Technology::OpenCl | Technology::Sycl => (self.opencl_c.is_some(), "OpenCL C"),
            Technology::OpenMp => (self.openmp.is_some(), "OpenMP"),
            Technology::Cuda => (self.cuda.is_some(), "CUDA"),
            Technology::Hip => (self.hip.is_some(), "HIP"),
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

    fn signature(&self) -> String {
        self.params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A buffer as a kernel argument, whatever its element type.
pub trait KernelBuffer {
    /// Element type.
    fn dtype(&self) -> DType;
    /// Number of elements.
    fn elements(&self) -> usize;
    /// Transfer counters of the buffer.
    fn counters(&self) -> TransferTotals;
    /// Current data usable at `location`.
    #[doc(hidden)]
    fn serve_for_read(&self, location: Location) -> Result<Arc<Memory>>;
    /// Memory at `location` to write, the only valid copy afterwards.
    #[doc(hidden)]
    fn serve_for_write(&mut self, location: Location, keep: bool) -> Result<Arc<Memory>>;
}

impl<T: Element> KernelBuffer for Buffer<T> {
    fn dtype(&self) -> DType {
        T::DTYPE
    }
    fn elements(&self) -> usize {
        self.len()
    }
    fn counters(&self) -> TransferTotals {
        self.stats()
    }
    fn serve_for_read(&self, location: Location) -> Result<Arc<Memory>> {
        self.serve_read(location).map(|(m, _)| m)
    }
    fn serve_for_write(&mut self, location: Location, keep: bool) -> Result<Arc<Memory>> {
        self.serve_write(location, keep).map(|(m, _)| m)
    }
}

/// One argument of a call.
pub enum Arg<'a> {
    /// A buffer read by the kernel.
    Buf(&'a dyn KernelBuffer),
    /// A buffer written by the kernel (`out` or `inout`).
    BufMut(&'a mut dyn KernelBuffer),
    /// A scalar.
    Scalar(DType, [u8; 4]),
}

impl<'a> Arg<'a> {
    /// A buffer for an `in` parameter.
    pub fn buf<T: Element>(buffer: &'a Buffer<T>) -> Arg<'a> {
        Arg::Buf(buffer)
    }
    /// A buffer for an `out` or `inout` parameter.
    pub fn buf_mut<T: Element>(buffer: &'a mut Buffer<T>) -> Arg<'a> {
        Arg::BufMut(buffer)
    }
    /// An `f32` scalar.
    pub fn f32(v: f32) -> Arg<'a> {
        Arg::Scalar(DType::F32, v.to_ne_bytes())
    }
    /// A `u32` scalar.
    pub fn u32(v: u32) -> Arg<'a> {
        Arg::Scalar(DType::U32, v.to_ne_bytes())
    }
    /// An `i32` scalar.
    pub fn i32(v: i32) -> Arg<'a> {
        Arg::Scalar(DType::I32, v.to_ne_bytes())
    }

    fn describe(&self) -> String {
        match self {
            Arg::Buf(b) => format!("a {} buffer (read)", b.dtype()),
            Arg::BufMut(b) => format!("a {} buffer (writable)", b.dtype()),
            Arg::Scalar(t, _) => format!("a {t} scalar"),
        }
    }
}

/// The global size of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// `n` work items.
    D1(usize),
    /// `nx` x `ny` work items (x fastest).
    D2(usize, usize),
}

impl Launch {
    /// 1-D launch of `n` work items.
    pub fn d1(n: usize) -> Launch {
        Launch::D1(n)
    }
    /// 2-D launch of `nx` x `ny` work items.
    pub fn d2(nx: usize, ny: usize) -> Launch {
        Launch::D2(nx, ny)
    }
    fn items(self) -> usize {
        match self {
            Launch::D1(n) => n,
            Launch::D2(x, y) => x.saturating_mul(y),
        }
    }
    fn global(self) -> ([usize; 2], usize) {
        match self {
            Launch::D1(n) => ([n, 1], 1),
            Launch::D2(x, y) => ([x, y], 2),
        }
    }
}

/// What a call did.
#[derive(Debug, Clone)]
pub struct CallReport {
    /// Where the kernel ran.
    pub target: Location,
    /// What the arguments' buffers moved for this call (per route kind).
    pub moved: TransferTotals,
}

/// A kernel bound to a target: the first available location of a target list.
#[derive(Debug, Clone)]
pub struct Codelet<'k> {
    kernel: &'k Kernel,
    target: Location,
    skipped: Vec<(Location, String)>,
}

fn totals(args: &[Arg<'_>]) -> TransferTotals {
    let mut sum = TransferTotals::default();
    for a in args {
        let t = match a {
            Arg::Buf(b) => b.counters(),
            Arg::BufMut(b) => b.counters(),
            Arg::Scalar(..) => continue,
        };
        for i in 0..RouteKind::ALL.len() {
            sum.calls[i] += t.calls[i];
            sum.bytes[i] += t.bytes[i];
        }
    }
    sum
}

fn difference(after: TransferTotals, before: TransferTotals) -> TransferTotals {
    let mut d = TransferTotals::default();
    for i in 0..RouteKind::ALL.len() {
        d.calls[i] = after.calls[i].saturating_sub(before.calls[i]);
        d.bytes[i] = after.bytes[i].saturating_sub(before.bytes[i]);
    }
    d
}

impl<'k> Codelet<'k> {
    /// Binds `kernel` to the first location of `targets` this machine has. An empty
    /// list, or one with nothing available, is an error naming each reason.
    pub fn new(kernel: &'k Kernel, targets: &[Location]) -> Result<Codelet<'k>> {
        let registry = crate::runtime::registry::registry();
        let mut skipped = Vec::new();
        for &t in targets {
            if registry.has(t) {
                return Ok(Codelet {
                    kernel,
                    target: t,
                    skipped,
                });
            }
            skipped.push((t, registry.why_missing(t)));
        }
        Err(Error::Invalid(if targets.is_empty() {
            format!("codelet `{}`: the target list is empty", kernel.name)
        } else {
            format!(
                "codelet `{}`: no target is available: {}",
                kernel.name,
                skipped
                    .iter()
                    .map(|(l, why)| format!("{l}: {why}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }))
    }

    /// Where calls run.
    pub fn target(&self) -> Location {
        self.target
    }

    /// The targets tried before this one, each with why it was not used.
    pub fn skipped(&self) -> &[(Location, String)] {
        &self.skipped
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        self.kernel
    }

    /// Checks everything about a call before anything moves or launches.
    fn check(&self, args: &[Arg<'_>], launch: Launch) -> Result<()> {
        let k = self.kernel;
        let name = &k.name;
        if args.len() != k.params.len() {
            return Err(Error::Invalid(format!(
                "kernel `{name}` takes {} arguments ({}), got {}",
                k.params.len(),
                k.signature(),
                args.len()
            )));
        }
        k.source_for(self.target.technology())?;
        let mut first_len: Option<(&str, usize)> = None;
        for (i, (p, a)) in k.params.iter().zip(args).enumerate() {
            let wrong = || {
                Error::Invalid(format!(
                    "kernel `{name}`: argument {i} (`{}`) must be {}, got {}",
                    p.name,
                    match p.kind {
                        ParamKind::Buffer(t, Intent::In) => format!("a {t} buffer (Arg::buf)"),
                        ParamKind::Buffer(t, intent) => {
                            format!("a writable {t} buffer for `{intent:?}` (Arg::buf_mut)")
                        }
                        ParamKind::Scalar(t) => format!("a {t} scalar"),
                    },
                    a.describe()
                ))
            };
            let len = match (p.kind, a) {
                (ParamKind::Buffer(t, Intent::In), Arg::Buf(b)) if b.dtype() == t => b.elements(),
                (ParamKind::Buffer(t, Intent::In), Arg::BufMut(b)) if b.dtype() == t => {
                    b.elements()
                }
                (ParamKind::Buffer(t, _), Arg::BufMut(b)) if b.dtype() == t => b.elements(),
                (ParamKind::Scalar(t), Arg::Scalar(u, _)) if t == *u => continue,
                _ => return Err(wrong()),
            };
            if launch.items() > len {
                return Err(Error::Invalid(format!(
                    "kernel `{name}`: a launch of {} work items is larger than buffer `{}` ({len} elements); nothing was launched",
                    launch.items(),
                    p.name
                )));
            }
            if k.equal_lengths {
                match first_len {
                    Some((other, n)) if n != len => {
                        return Err(Error::Invalid(format!(
                            "kernel `{name}`: buffers must have equal lengths, but `{other}` has {n} elements and `{}` has {len}",
                            p.name
                        )))
                    }
                    None => first_len = Some((&p.name, len)),
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Runs the kernel. When it returns, every later locus operation on the arguments
    /// (a read elsewhere, an access, another call) sees the kernel's results: on targets
    /// whose kernels and transfers share one in-order queue (OpenCL, WebGPU) that holds
    /// once the kernel is enqueued, so consecutive calls pipeline without a host wait;
    /// elsewhere (SYCL USM read in place by the host, OpenMP, host) the call waits.
    /// Use [`Codelet::call_async`] and [`Pending::synchronize`] to wait explicitly,
    /// e.g. before handing a native handle to another queue.
    pub fn call(&self, args: &mut [Arg<'_>], launch: Launch) -> Result<CallReport> {
        let before = totals(args);
        self.start(args, launch)?.detach()?;
        Ok(CallReport {
            target: self.target,
            moved: difference(totals(args), before),
        })
    }

    /// Starts the kernel and returns at once; the arguments stay borrowed until
    /// [`Pending::synchronize`] (or the drop of the [`Pending`], which waits too).
    pub fn call_async<'a>(&self, mut args: Vec<Arg<'a>>, launch: Launch) -> Result<Pending<'a>> {
        let before = totals(&args);
        let completion = self.start(&mut args, launch)?;
        Ok(Pending {
            completion: Some(completion),
            before,
            args,
            target: self.target,
        })
    }

    /// Moves an input to the target now, ahead of a call (`advancedload`).
    pub fn advanced_load(&self, buffer: &dyn KernelBuffer) -> Result<()> {
        buffer.serve_for_read(self.target).map(|_| ())
    }

    /// Brings a buffer's current data to the host now (`delegatedstore`); without it,
    /// outputs come back only when someone reads them.
    pub fn delegated_store(&self, buffer: &dyn KernelBuffer) -> Result<()> {
        buffer.serve_for_read(Location::Host).map(|_| ())
    }

    fn start(&self, args: &mut [Arg<'_>], launch: Launch) -> Result<Completion> {
        self.check(args, launch)?;
        let target = self.target;
        // Serve every buffer at the target according to its intent.
        let mut memories: Vec<Option<(Arc<Memory>, bool)>> = Vec::with_capacity(args.len());
        for (p, a) in self.kernel.params.iter().zip(args.iter_mut()) {
            memories.push(match (p.kind, a) {
                (ParamKind::Buffer(_, Intent::In), Arg::Buf(b)) => {
                    Some((b.serve_for_read(target)?, false))
                }
                (ParamKind::Buffer(_, Intent::In), Arg::BufMut(b)) => {
                    Some((b.serve_for_read(target)?, false))
                }
                (ParamKind::Buffer(_, intent), Arg::BufMut(b)) => {
                    Some((b.serve_for_write(target, intent == Intent::InOut)?, true))
                }
                _ => None,
            });
        }
        let (global, dims) = launch.global();
        if target.technology() == Technology::Host {
            return self.run_on_host(args, &memories, global);
        }
        let launch_args: Vec<LaunchArg<'_>> = args
            .iter()
            .zip(&memories)
            .map(|(a, m)| match (a, m) {
                (_, Some((memory, _))) => LaunchArg::Memory(memory),
                (Arg::Scalar(DType::F32, b), None) => LaunchArg::F32(f32::from_ne_bytes(*b)),
                (Arg::Scalar(DType::U32, b), None) => LaunchArg::U32(u32::from_ne_bytes(*b)),
                (Arg::Scalar(DType::I32, b), None) => LaunchArg::I32(i32::from_ne_bytes(*b)),
                _ => LaunchArg::U32(0),
            })
            .collect();
        let k = self.kernel;
        let (source, entry, workgroup) = match target.technology() {
            Technology::WebGpu => k
                .wgsl
                .as_ref()
                .map(|s| (s.text.as_str(), s.entry.as_str(), s.workgroup)),
            Technology::OpenCl | Technology::Sycl => k
                .opencl_c
                .as_ref()
                .map(|s| (s.text.as_str(), s.entry.as_str(), s.workgroup)),
            Technology::OpenMp => k.openmp.as_ref().map(|e| ("", e.as_str(), [1, 1, 1])),
            Technology::Cuda => k
                .cuda
                .as_ref()
                .map(|s| (s.text.as_str(), s.entry.as_str(), s.workgroup)),
            Technology::Hip => k
                .hip
                .as_ref()
                .map(|s| (s.text.as_str(), s.entry.as_str(), s.workgroup)),
            Technology::Host => None,
        }
        .ok_or_else(|| Error::Invalid(format!("kernel `{}` has no source for {target}", k.name)))?;
        let spec = LaunchSpec {
            source,
            entry,
            workgroup,
            global,
            dims,
        };
        crate::runtime::registry::registry()
            .device(target)?
            .launch(&spec, &launch_args)
    }

    fn run_on_host(
        &self,
        args: &[Arg<'_>],
        memories: &[Option<(Arc<Memory>, bool)>],
        global: [usize; 2],
    ) -> Result<Completion> {
        let f = self.kernel.host.ok_or_else(|| {
            Error::Invalid(format!(
                "kernel `{}` has no host (Rust) source",
                self.kernel.name
            ))
        })?;
        let mut mappings: Vec<Option<HostMapping>> = Vec::with_capacity(memories.len());
        for m in memories {
            mappings.push(match m {
                Some((memory, write)) => Some(memory.map(0..memory.len(), *write)?),
                None => None,
            });
        }
        let mut host_args = Vec::with_capacity(args.len());
        for ((a, m), served) in args.iter().zip(mappings.iter_mut()).zip(memories) {
            let written = served.as_ref().is_some_and(|(_, w)| *w);
            host_args.push(match (a, m) {
                (_, Some(map)) => {
                    if written {
                        HostArg::Write(map.as_mut_slice()?)
                    } else {
                        HostArg::Read(map.as_slice())
                    }
                }
                (Arg::Scalar(_, b), None) => HostArg::Scalar(*b),
                _ => HostArg::Scalar([0; 4]),
            });
        }
        f(&mut host_args, global);
        Ok(Completion::done())
    }
}

/// An asynchronous call in flight. Its arguments stay borrowed until it completes.
pub struct Pending<'a> {
    completion: Option<Completion>,
    before: TransferTotals,
    args: Vec<Arg<'a>>,
    target: Location,
}

impl Pending<'_> {
    /// Waits for the kernel (`synchronize`) and reports what the call moved.
    pub fn synchronize(mut self) -> Result<CallReport> {
        if let Some(c) = self.completion.take() {
            c.wait()?;
        }
        Ok(CallReport {
            target: self.target,
            moved: difference(totals(&self.args), self.before),
        })
    }
}
