//! BabelStream's five kernels (Copy, Mul, Add, Triad, Dot), in every language locus
//! launches: the device-memory bandwidth benchmark that `locus bench --stream` runs, and a
//! small example per programming model (`shaders/stream/`: OpenCL C for OpenCL and SYCL,
//! WGSL, CUDA, HIP, OpenMP) beside a host implementation in Rust.
//!
//! Each kernel is made for an element type, `f32` or `f64` ([`Precision`]); WGSL has no
//! `f64`, so the `f64` kernels have no WebGPU source. The parameters follow BabelStream's
//! arrays `a`, `b`, `c` and its `scalar`:
//!
//! | kernel | computes | parameters |
//! |---|---|---|
//! | [`copy`] | `c = a` | `a: in, c: out, n: u32` |
//! | [`mul`] | `b = scalar * c` | `scalar, c: in, b: out, n: u32` |
//! | [`add`] | `c = a + b` | `a: in, b: in, c: out, n: u32` |
//! | [`triad`] | `a = b + scalar * c` | `scalar, b: in, c: in, a: out, n: u32` |
//! | [`dot`] | partial sums of `a * b` | `a: in, b: in, partial: out, n: u32, parts: u32` |
//!
//! The first four launch one work item per element over buffers of equal length. [`dot`]
//! launches `parts` work items, each summing every `parts`-th product from its own index
//! on; `partial` holds their sums and the caller adds them. A call whose
//! `n` exceeds `a` or `b` is refused before anything launches.
//!
//! ```
//! use locus::codelet::kernels::stream::{self, Precision};
//! use locus::codelet::{Arg, Codelet, Launch};
//! use locus::{Buffer, Location};
//!
//! let n = 1024;
//! let triad = stream::triad(Precision::F32);
//! let codelet = Codelet::new(&triad, &[Location::Host])?;
//! let b = Buffer::filled(Location::Host, n, 0.2f32)?;
//! let c = Buffer::filled(Location::Host, n, 0.1f32)?;
//! let mut a = Buffer::<f32>::zeroed(Location::Host, n)?;
//! codelet.call(
//!     &mut [Arg::f32(0.4), Arg::buf(&b), Arg::buf(&c), Arg::buf_mut(&mut a), Arg::u32(n as u32)],
//!     Launch::d1(n),
//! )?;
//! assert!((a.to_vec()?[0] - 0.24).abs() < 1e-6);
//! # Ok::<(), locus::Error>(())
//! ```

use bytemuck::Pod;

use crate::codelet::{DType, HostArg, Intent, Kernel};

/// The element type of a set of kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// 32-bit floats (every technology).
    F32,
    /// 64-bit floats (not WebGPU; OpenCL and SYCL devices need `cl_khr_fp64`).
    F64,
}

impl Precision {
    /// Both, in BabelStream's order of reporting.
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::F64];

    /// The element's data type.
    pub fn dtype(self) -> DType {
        match self {
            Precision::F32 => DType::F32,
            Precision::F64 => DType::F64,
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }

    /// `f32` or `f64`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// The C type the device sources are compiled with.
    fn c_type(self) -> &'static str {
        match self {
            Precision::F32 => "float",
            Precision::F64 => "double",
        }
    }
}

const OPENCL: &str = include_str!("../../../shaders/stream/stream.cl");
const CUDA: &str = include_str!("../../../shaders/stream/stream.cu");
const HIP: &str = include_str!("../../../shaders/stream/stream.hip");
const WGSL: &str = include_str!("../../../shaders/stream/stream.wgsl");

/// Kernel `name` of the set, without parameters yet: its sources from `shaders/stream/`
/// with the element type defined in front.
fn kernel(name: &str, precision: Precision) -> Kernel {
    let t = precision.c_type();
    let opencl = match precision {
        Precision::F32 => format!("#define T {t}\n{OPENCL}"),
        Precision::F64 => {
            format!("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define T {t}\n{OPENCL}")
        }
    };
    let entry = format!("stream_{name}");
    let k = Kernel::new(&format!("stream_{name}_{}", precision.name()))
        .opencl_c(&opencl, &entry)
        .openmp(&format!("stream_{name}_{}", precision.name()))
        .cuda(&format!("#define T {t}\n{CUDA}"), &entry)
        .hip(&format!("#define T {t}\n{HIP}"), &entry);
    match precision {
        Precision::F32 => k.wgsl(WGSL, &entry, [64, 1, 1]),
        Precision::F64 => k,
    }
}

/// `c = a`: `copy(a: in, c: out, n: u32)`.
pub fn copy(precision: Precision) -> Kernel {
    let t = precision.dtype();
    kernel("copy", precision)
        .buffer("a", t, Intent::In)
        .buffer("c", t, Intent::Out)
        .scalar("n", DType::U32)
        .equal_lengths()
        .host(match precision {
            Precision::F32 => host_copy::<f32>,
            Precision::F64 => host_copy::<f64>,
        })
}

/// `b = scalar * c`: `mul(scalar, c: in, b: out, n: u32)`.
pub fn mul(precision: Precision) -> Kernel {
    let t = precision.dtype();
    kernel("mul", precision)
        .scalar("scalar", t)
        .buffer("c", t, Intent::In)
        .buffer("b", t, Intent::Out)
        .scalar("n", DType::U32)
        .equal_lengths()
        .host(match precision {
            Precision::F32 => host_mul::<f32>,
            Precision::F64 => host_mul::<f64>,
        })
}

/// `c = a + b`: `add(a: in, b: in, c: out, n: u32)`.
pub fn add(precision: Precision) -> Kernel {
    let t = precision.dtype();
    kernel("add", precision)
        .buffer("a", t, Intent::In)
        .buffer("b", t, Intent::In)
        .buffer("c", t, Intent::Out)
        .scalar("n", DType::U32)
        .equal_lengths()
        .host(match precision {
            Precision::F32 => host_add::<f32>,
            Precision::F64 => host_add::<f64>,
        })
}

/// `a = b + scalar * c`: `triad(scalar, b: in, c: in, a: out, n: u32)`.
pub fn triad(precision: Precision) -> Kernel {
    let t = precision.dtype();
    kernel("triad", precision)
        .scalar("scalar", t)
        .buffer("b", t, Intent::In)
        .buffer("c", t, Intent::In)
        .buffer("a", t, Intent::Out)
        .scalar("n", DType::U32)
        .equal_lengths()
        .host(match precision {
            Precision::F32 => host_triad::<f32>,
            Precision::F64 => host_triad::<f64>,
        })
}

/// Partial sums of `a * b`: `dot(a: in, b: in, partial: out, n: u32, parts: u32)`,
/// launched as `parts` work items (at most `partial`'s length); the caller adds
/// them.
pub fn dot(precision: Precision) -> Kernel {
    let t = precision.dtype();
    kernel("dot", precision)
        .buffer("a", t, Intent::In)
        .buffer("b", t, Intent::In)
        .buffer("partial", t, Intent::Out)
        .scalar("n", DType::U32)
        .scalar("parts", DType::U32)
        .launch_within(&["partial"])
        .counts("n", &["a", "b"])
        .counts("parts", &["partial"])
        .host(match precision {
            Precision::F32 => host_dot::<f32>,
            Precision::F64 => host_dot::<f64>,
        })
}

/// The element type of the host implementations.
trait Real: Pod + Copy + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {}
impl Real for f32 {}
impl Real for f64 {}

/// Splits the arguments at the written buffer `w`: the ones before it (read) and it.
fn split<'s, 'a>(
    args: &'s mut [HostArg<'a>],
    w: usize,
) -> (&'s [HostArg<'a>], &'s mut HostArg<'a>) {
    let (reads, rest) = args.split_at_mut(w);
    (reads, &mut rest[0])
}

fn count(arg: &HostArg<'_>, global: usize) -> usize {
    (arg.scalar::<u32>() as usize).min(global)
}

fn host_copy<T: Real>(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let n = count(&args[2], global[0]);
    let (reads, c) = split(args, 1);
    for (c, a) in c
        .elements_mut::<T>()
        .iter_mut()
        .zip(reads[0].elements::<T>())
        .take(n)
    {
        *c = *a;
    }
}

fn host_mul<T: Real>(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let n = count(&args[3], global[0]);
    let scalar: T = args[0].scalar();
    let (reads, b) = split(args, 2);
    for (b, c) in b
        .elements_mut::<T>()
        .iter_mut()
        .zip(reads[1].elements::<T>())
        .take(n)
    {
        *b = scalar * *c;
    }
}

fn host_add<T: Real>(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let n = count(&args[3], global[0]);
    let (reads, c) = split(args, 2);
    let (a, b) = (reads[0].elements::<T>(), reads[1].elements::<T>());
    for ((c, a), b) in c.elements_mut::<T>().iter_mut().zip(a).zip(b).take(n) {
        *c = *a + *b;
    }
}

fn host_triad<T: Real>(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let n = count(&args[4], global[0]);
    let scalar: T = args[0].scalar();
    let (reads, a) = split(args, 3);
    let (b, c) = (reads[1].elements::<T>(), reads[2].elements::<T>());
    for ((a, b), c) in a.elements_mut::<T>().iter_mut().zip(b).zip(c).take(n) {
        *a = *b + scalar * *c;
    }
}

fn host_dot<T: Real>(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let n = args[3].scalar::<u32>() as usize;
    let parts = count(&args[4], global[0]);
    if parts == 0 {
        return;
    }
    let (reads, partial) = split(args, 2);
    let (a, b) = (reads[0].elements::<T>(), reads[1].elements::<T>());
    let n = n.min(a.len()).min(b.len());
    for (i, p) in partial
        .elements_mut::<T>()
        .iter_mut()
        .enumerate()
        .take(parts)
    {
        let mut sum = T::zeroed();
        for j in (i..n).step_by(parts) {
            sum = sum + a[j] * b[j];
        }
        *p = sum;
    }
}
