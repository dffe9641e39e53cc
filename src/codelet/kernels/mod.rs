//! The kernels that ship with locus, each in every language (sources in `shaders/`),
//! with host implementations that double as the reference the tests check against.

pub mod stream;

use super::{DType, HostArg, Intent, Kernel};

/// `c = a + b` over `n` elements: `vec_add(a: in f32[], b: in f32[], c: out f32[], n: u32)`.
pub fn vec_add() -> Kernel {
    Kernel::new("vec_add")
        .buffer("a", DType::F32, Intent::In)
        .buffer("b", DType::F32, Intent::In)
        .buffer("c", DType::F32, Intent::Out)
        .scalar("n", DType::U32)
        .equal_lengths()
        .wgsl(
            include_str!("../../../shaders/vec_add.wgsl"),
            "vec_add",
            [64, 1, 1],
        )
        .opencl_c(include_str!("../../../shaders/vec_add.cl"), "vec_add")
        .openmp("vec_add")
        .cuda(include_str!("../../../shaders/vec_add.cu"), "vec_add")
        .hip(include_str!("../../../shaders/vec_add.hip"), "vec_add")
        .host(host_vec_add)
}

/// `y = a * x + y`: `saxpy(a: f32, x: in f32[], y: inout f32[], n: u32)`.
pub fn saxpy() -> Kernel {
    Kernel::new("saxpy")
        .scalar("a", DType::F32)
        .buffer("x", DType::F32, Intent::In)
        .buffer("y", DType::F32, Intent::InOut)
        .scalar("n", DType::U32)
        .equal_lengths()
        .wgsl(
            include_str!("../../../shaders/saxpy.wgsl"),
            "saxpy",
            [64, 1, 1],
        )
        .opencl_c(include_str!("../../../shaders/saxpy.cl"), "saxpy")
        .openmp("saxpy")
        .cuda(include_str!("../../../shaders/saxpy.cu"), "saxpy")
        .hip(include_str!("../../../shaders/saxpy.hip"), "saxpy")
        .host(host_saxpy)
}

/// One Jacobi step on an `nx` x `ny` row-major grid, launched 2-D as `nx` x `ny`:
/// `jacobi(src: in f32[], dst: out f32[], nx: u32, ny: u32)`. Interior points become
/// the mean of their four neighbours; boundary points are copied.
pub fn jacobi() -> Kernel {
    Kernel::new("jacobi")
        .buffer("src", DType::F32, Intent::In)
        .buffer("dst", DType::F32, Intent::Out)
        .scalar("nx", DType::U32)
        .scalar("ny", DType::U32)
        .equal_lengths()
        .wgsl(
            include_str!("../../../shaders/jacobi.wgsl"),
            "jacobi",
            [8, 8, 1],
        )
        .opencl_c(include_str!("../../../shaders/jacobi.cl"), "jacobi")
        .openmp("jacobi")
        .cuda(include_str!("../../../shaders/jacobi.cu"), "jacobi")
        .hip(include_str!("../../../shaders/jacobi.hip"), "jacobi")
        .host(host_jacobi)
}

/// OpenHMPP's example kernel, `C = alpha * A * B + beta * C` (row-major; `A` is `m` x
/// `k`, `B` `k` x `n`, `C` `m` x `n`), launched 2-D as `n` x `m`:
/// `sgemm(m: u32, n: u32, k: u32, alpha: f32, a: in f32[], b: in f32[], beta: f32, c: inout f32[])`.
pub fn sgemm() -> Kernel {
    Kernel::new("sgemm")
        .scalar("m", DType::U32)
        .scalar("n", DType::U32)
        .scalar("k", DType::U32)
        .scalar("alpha", DType::F32)
        .buffer("a", DType::F32, Intent::In)
        .buffer("b", DType::F32, Intent::In)
        .scalar("beta", DType::F32)
        .buffer("c", DType::F32, Intent::InOut)
        .launch_within(&["c"])
        .wgsl(
            include_str!("../../../shaders/sgemm.wgsl"),
            "sgemm",
            [8, 8, 1],
        )
        .opencl_c(include_str!("../../../shaders/sgemm.cl"), "sgemm")
        .openmp("sgemm")
        .cuda(include_str!("../../../shaders/sgemm.cu"), "sgemm")
        .hip(include_str!("../../../shaders/sgemm.hip"), "sgemm")
        .host(host_sgemm)
}

/// The reference sgemm on plain slices (see [`sgemm`]); rows and columns past what the
/// slices hold are skipped.
#[allow(clippy::too_many_arguments)]
pub fn sgemm_reference(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &mut [f32],
) {
    if a.len() < m.saturating_mul(k)
        || b.len() < k.saturating_mul(n)
        || c.len() < m.saturating_mul(n)
    {
        return;
    }
    for row in 0..m {
        for col in 0..n {
            let sum: f32 = (0..k).map(|l| a[row * k + l] * b[l * n + col]).sum();
            c[row * n + col] = alpha * sum + beta * c[row * n + col];
        }
    }
}

fn host_sgemm(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let (m, n, k) = (
        args[0].u32() as usize,
        args[1].u32() as usize,
        args[2].u32() as usize,
    );
    let (alpha, beta) = (args[3].f32(), args[6].f32());
    let (a, b) = (args[4].f32s().to_vec(), args[5].f32s().to_vec());
    let c = args[7].f32s_mut();
    if global[0] < n || global[1] < m {
        // A smaller launch computes the rows and columns it covers.
        let (rows, cols) = (m.min(global[1]), n.min(global[0]));
        if a.len() < m * k || b.len() < k * n || c.len() < m * n {
            return;
        }
        for row in 0..rows {
            for col in 0..cols {
                let sum: f32 = (0..k).map(|l| a[row * k + l] * b[l * n + col]).sum();
                c[row * n + col] = alpha * sum + beta * c[row * n + col];
            }
        }
        return;
    }
    sgemm_reference(m, n, k, alpha, &a, &b, beta, c);
}

/// `c = a + b` in `f64`: `vec_add_f64(a: in f64[], b: in f64[], c: out f64[], n: u32)`.
/// No WGSL source: WGSL has no `f64`, so WebGPU refuses it, naming that.
pub fn vec_add_f64() -> Kernel {
    Kernel::new("vec_add_f64")
        .buffer("a", DType::F64, Intent::In)
        .buffer("b", DType::F64, Intent::In)
        .buffer("c", DType::F64, Intent::Out)
        .scalar("n", DType::U32)
        .equal_lengths()
        .opencl_c(
            include_str!("../../../shaders/vec_add_f64.cl"),
            "vec_add_f64",
        )
        .openmp("vec_add_f64")
        .cuda(
            include_str!("../../../shaders/vec_add_f64.cu"),
            "vec_add_f64",
        )
        .hip(
            include_str!("../../../shaders/vec_add_f64.hip"),
            "vec_add_f64",
        )
        .host(host_vec_add_f64)
}

/// `y = a * x + y` in `f64`: `daxpy(a: f64, x: in f64[], y: inout f64[], n: u32)`.
pub fn daxpy() -> Kernel {
    Kernel::new("daxpy")
        .scalar("a", DType::F64)
        .buffer("x", DType::F64, Intent::In)
        .buffer("y", DType::F64, Intent::InOut)
        .scalar("n", DType::U32)
        .equal_lengths()
        .opencl_c(include_str!("../../../shaders/daxpy.cl"), "daxpy")
        .openmp("daxpy")
        .cuda(include_str!("../../../shaders/daxpy.cu"), "daxpy")
        .hip(include_str!("../../../shaders/daxpy.hip"), "daxpy")
        .host(host_daxpy)
}

fn host_vec_add_f64(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let n = (args[3].u32() as usize).min(global[0]);
    let (a, b) = (
        args[0].elements::<f64>().to_vec(),
        args[1].elements::<f64>().to_vec(),
    );
    for (i, c) in args[2].elements_mut::<f64>().iter_mut().enumerate().take(n) {
        *c = a[i] + b[i];
    }
}

fn host_daxpy(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let a: f64 = args[0].scalar();
    let n = (args[3].u32() as usize).min(global[0]);
    let x = args[1].elements::<f64>().to_vec();
    for (i, y) in args[2].elements_mut::<f64>().iter_mut().enumerate().take(n) {
        *y += a * x[i];
    }
}

fn host_vec_add(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let n = (args[3].u32() as usize).min(global[0]);
    let (a, b) = (args[0].f32s().to_vec(), args[1].f32s().to_vec());
    for (i, c) in args[2].f32s_mut().iter_mut().enumerate().take(n) {
        *c = a[i] + b[i];
    }
}

fn host_saxpy(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let a = args[0].f32();
    let n = (args[3].u32() as usize).min(global[0]);
    let x = args[1].f32s().to_vec();
    for (i, y) in args[2].f32s_mut().iter_mut().enumerate().take(n) {
        *y += a * x[i];
    }
}

/// The reference Jacobi step on plain slices. Only the rows both slices hold are
/// computed (none when `nx` is 0), whatever `ny` says.
pub fn jacobi_reference(src: &[f32], dst: &mut [f32], nx: usize, ny: usize) {
    let ny = match nx {
        0 => 0,
        _ => ny.min(src.len() / nx).min(dst.len() / nx),
    };
    for j in 0..ny {
        for i in 0..nx {
            let k = j * nx + i;
            dst[k] = if i == 0 || j == 0 || i == nx - 1 || j == ny - 1 {
                src[k]
            } else {
                0.25 * (src[k - 1] + src[k + 1] + src[k - nx] + src[k + nx])
            };
        }
    }
}

fn host_jacobi(args: &mut [HostArg<'_>], global: [usize; 2]) {
    let nx = (args[2].u32() as usize).min(global[0]);
    let ny = (args[3].u32() as usize).min(global[1]);
    let (first, rest) = args.split_at_mut(1);
    jacobi_reference(first[0].f32s(), rest[0].f32s_mut(), nx, ny);
}
