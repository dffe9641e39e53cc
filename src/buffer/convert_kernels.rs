//! Conversion kernels generated for one pair of element types, with Rust's `as`
//! semantics: OpenCL C (for OpenCL and SYCL devices), CUDA C++ (for CUDA through NVRTC
//! and HIP through hiprtc) and WGSL (for WebGPU, in u32 arithmetic on top of
//! `shaders/convert_prelude.wgsl`).

use crate::core::element::DType;

/// OpenCL C's name for an element type (none for the half types: `half` needs
/// `cl_khr_fp16`, and OpenCL C has no bfloat16).
fn opencl_c_type(t: DType) -> Option<&'static str> {
    Some(match t {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I8 => "char",
        DType::U8 => "uchar",
        DType::I16 => "short",
        DType::U16 => "ushort",
        DType::I32 => "int",
        DType::U32 => "uint",
        DType::I64 => "long",
        DType::U64 => "ulong",
        DType::F16 | DType::BF16 => return None,
    })
}

/// A conversion kernel in OpenCL C (for OpenCL and SYCL), generated for one pair of
/// types with Rust's `as` semantics: float to integer `convert_<d>_sat_rtz` (toward
/// zero, saturating) with NaN tested for (0), to a float `convert_<d>` (round to nearest
/// even), integer to integer a C cast (two's complement wrap).
pub(super) fn opencl_c_conversion(from: DType, to: DType) -> Option<String> {
    let (s, d) = (opencl_c_type(from)?, opencl_c_type(to)?);
    let float = |t: DType| matches!(t, DType::F32 | DType::F64);
    let convert = match (float(from), float(to)) {
        // NaN is 0 in Rust and in the OpenCL spec, but Intel's CPU runtime saturates
        // it to the maximum: test for it.
        (true, false) => format!("x != x ? ({d})0 : convert_{d}_sat_rtz(x)"),
        (_, true) => format!("convert_{d}(x)"),
        (false, false) => format!("({d})x"),
    };
    let fp64 = if from == DType::F64 || to == DType::F64 {
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    } else {
        ""
    };
    Some(format!(
        "{fp64}__kernel void locus_convert(__global const {s} *src, __global {d} *dst, const ulong n, const ulong so, const ulong dof) {{\n    size_t i = get_global_id(0);\n    if (i < n) {{\n        {s} x = src[so + i];\n        dst[dof + i] = {convert};\n    }}\n}}\n"
    ))
}

/// CUDA C++'s (and HIP's) name for an element type and, for integers, (bits, signed)
/// (none for the half types, which need `cuda_fp16.h` / `cuda_bf16.h`).
fn cuda_type(t: DType) -> Option<(&'static str, Option<(u32, bool)>)> {
    Some(match t {
        DType::F32 => ("float", None),
        DType::F64 => ("double", None),
        DType::I8 => ("signed char", Some((8, true))),
        DType::U8 => ("unsigned char", Some((8, false))),
        DType::I16 => ("short", Some((16, true))),
        DType::U16 => ("unsigned short", Some((16, false))),
        DType::I32 => ("int", Some((32, true))),
        DType::U32 => ("unsigned int", Some((32, false))),
        DType::I64 => ("long long", Some((64, true))),
        DType::U64 => ("unsigned long long", Some((64, false))),
        DType::F16 | DType::BF16 => return None,
    })
}

/// A conversion kernel in CUDA C++ (compiled by NVRTC, and as it is by hiprtc: both
/// compilers bring their own built-in declarations, and neither finds a system header
/// such as `<hip/hip_runtime.h>`, so the source includes none), generated for one pair
/// of types with Rust's `as` semantics: float to integer tests NaN (0) and the
/// destination's bounds (powers of two, exact in either float type) and otherwise
/// truncates toward zero; to a float a C++ conversion (round to nearest even; NVRTC keeps
/// subnormals unless told `-ftz`); integer to integer a cast (two's complement wrap). Entry `locus_convert(src, dst, n, so, dof)`, offsets in
/// elements, one thread per element.
pub(crate) fn cuda_conversion(from: DType, to: DType) -> Option<String> {
    let ((s, _), (d, bits)) = (cuda_type(from)?, cuda_type(to)?);
    let float_source = matches!(from, DType::F32 | DType::F64);
    let convert = match bits {
        Some((bits, signed)) if float_source => {
            // The bounds are powers of two, exact in f32 and f64; the extremes are
            // written as integers.
            let (low, high, min, max) = if signed {
                let m = (1u128 << (bits - 1)) - 1;
                (
                    -(2f64.powi(bits as i32 - 1)),
                    2f64.powi(bits as i32 - 1),
                    format!("({d})(-{m}ll - 1)"),
                    format!("({d}){m}ll"),
                )
            } else {
                let m = (1u128 << bits) - 1;
                (
                    0.0,
                    2f64.powi(bits as i32),
                    format!("({d})0"),
                    format!("({d}){m}ull"),
                )
            };
            format!(
                "x != x ? ({d})0 : x <= ({s}){low:.1} ? {min} : x >= ({s}){high:.1} ? {max} : ({d})x"
            )
        }
        _ => format!("({d})x"),
    };
    Some(format!(
        "// {from} -> {to}\n\
         extern \"C\" __global__ void locus_convert(const {s} *src, {d} *dst, unsigned long long n, unsigned long long so, unsigned long long dof) {{\n    \
         unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n    \
         if (i < n) {{\n        \
         {s} x = src[so + i];\n        \
         dst[dof + i] = {convert};\n    \
         }}\n\
         }}\n"
    ))
}

/// How a WGSL conversion kernel reads and writes an element type: 32-bit types are one
/// `u32` word, 64-bit types two (low first); `None` for the 8- and 16-bit and half types,
/// which would share words between invocations.
fn wgsl_words(t: DType) -> Option<u32> {
    match t {
        DType::F32 | DType::I32 | DType::U32 => Some(1),
        DType::F64 | DType::I64 | DType::U64 => Some(2),
        _ => None,
    }
}

/// The WGSL expression that turns the loaded source element `x` (a `u32`, or a
/// `vec2<u32>` for 64-bit types) into the destination's bits, with `as` semantics.
fn wgsl_convert(from: DType, to: DType) -> String {
    use DType::*;
    let int = |t: DType| matches!(t, I32 | U32 | I64 | U64);
    // An integer source as sign and magnitude (for a float destination) ...
    let sign_magnitude = match from {
        I32 => "(x >> 31u) == 1u, vec2<u32>(select(x, 0u - x, (x >> 31u) == 1u), 0u)",
        U32 => "false, vec2<u32>(x, 0u)",
        I64 => "(x.y >> 31u) == 1u, select(x, neg64(x), (x.y >> 31u) == 1u)",
        _ => "false, x",
    };
    // ... or as 64 bits, sign- or zero-extended (for an integer destination).
    let wide = match from {
        I32 => "vec2<u32>(x, select(0u, 0xffffffffu, (x >> 31u) == 1u))",
        U32 => "vec2<u32>(x, 0u)",
        _ => "x",
    };
    let whole = if from == F32 {
        "whole_f32(x)"
    } else {
        "whole_f64(x)"
    };
    match (from, to) {
        _ if from == to => "x".into(),
        (F32, F64) => "f32_to_f64(x)".into(),
        (F64, F32) => "f64_to_f32(x)".into(),
        (f, F32) if int(f) => format!("int_to_f32({sign_magnitude})"),
        (f, F64) if int(f) => format!("int_to_f64({sign_magnitude})"),
        (F32 | F64, I32) => format!("sat_i32({whole})"),
        (F32 | F64, U32) => format!("sat_u32({whole})"),
        (F32 | F64, I64) => format!("sat_i64({whole})"),
        (F32 | F64, _) => format!("sat_u64({whole})"),
        // Integer to integer: two's complement, truncated or extended.
        (_, I32 | U32) => format!("({wide}).x"),
        _ => wide.into(),
    }
}

/// A conversion kernel in WGSL for one pair of 32- or 64-bit types (`None` for the
/// others). Entry `locus_convert`; bindings: source and destination as `array<u32>`,
/// then a uniform of the element count and the source and destination offsets in
/// elements; 64 invocations per workgroup, the groups folded into rows of at most
/// 65535 as the WebGPU backend launches them.
pub(super) fn wgsl_conversion(from: DType, to: DType) -> Option<String> {
    let (sw, dw) = (wgsl_words(from)?, wgsl_words(to)?);
    let load = if sw == 1 {
        "let x = src[p.so + i];"
    } else {
        "let x = vec2<u32>(src[2u * (p.so + i)], src[2u * (p.so + i) + 1u]);"
    };
    let store = if dw == 1 {
        "dst[p.dof + i] = y;"
    } else {
        "dst[2u * (p.dof + i)] = y.x;\n    dst[2u * (p.dof + i) + 1u] = y.y;"
    };
    Some(format!(
        "{prelude}\nstruct Params {{ n: u32, so: u32, dof: u32 }}\n\n\
         @group(0) @binding(0) var<storage, read_write> src: array<u32>;\n\
         @group(0) @binding(1) var<storage, read_write> dst: array<u32>;\n\
         @group(0) @binding(2) var<uniform> p: Params;\n\n\
         // {from} -> {to}\n\
         @compute @workgroup_size(64)\n\
         fn locus_convert(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{\n    \
         let i = id.x + id.y * groups.x * 64u;\n    \
         if (i >= p.n) {{ return; }}\n    \
         {load}\n    \
         let y = {convert};\n    \
         {store}\n}}\n",
        prelude = include_str!("../../shaders/convert_prelude.wgsl"),
        convert = wgsl_convert(from, to),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_kernels_guard_nan_and_bounds_where_rust_saturates() {
        let k = cuda_conversion(DType::F32, DType::I8).unwrap();
        assert!(k.contains(
            "extern \"C\" __global__ void locus_convert(const float *src, signed char *dst"
        ));
        assert!(k.contains("x != x ? (signed char)0"), "{k}");
        assert!(
            k.contains("x <= (float)-128.0 ? (signed char)(-127ll - 1)"),
            "{k}"
        );
        assert!(k.contains("x >= (float)128.0 ? (signed char)127ll"), "{k}");
        let k = cuda_conversion(DType::F64, DType::U64).unwrap();
        assert!(
            k.contains("x <= (double)0.0 ? (unsigned long long)0"),
            "{k}"
        );
        assert!(
            k.contains(
                "x >= (double)18446744073709551616.0 ? (unsigned long long)18446744073709551615ull"
            ),
            "{k}"
        );
        // Integer and float destinations: a plain conversion.
        assert!(cuda_conversion(DType::I64, DType::I16)
            .unwrap()
            .contains("dst[dof + i] = (short)x;"));
        assert!(cuda_conversion(DType::U64, DType::F32)
            .unwrap()
            .contains("dst[dof + i] = (float)x;"));
        // No header (hiprtc fails on `<hip/hip_runtime.h>`: it has its own built-ins);
        // half types have no kernel.
        assert!(!cuda_conversion(DType::F32, DType::F64)
            .unwrap()
            .contains("#include"));
        assert!(cuda_conversion(DType::F16, DType::F32).is_none());
    }

    /// Edge values of one source type, as little-endian bytes: for a float type, values
    /// around every destination's bounds, ties, subnormals, infinities and NaN; for an
    /// integer type, values around every width's bounds, wrapped into it with `as`.
    fn edge_values(t: DType) -> Vec<u8> {
        let floats = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            0.7,
            -0.7,
            1.5,
            -1.5,
            2.5,
            127.5,
            128.0,
            -128.0,
            -128.5,
            -129.0,
            255.9,
            256.0,
            32767.5,
            32768.0,
            -32768.7,
            -32769.0,
            65535.5,
            65536.0,
            2147483520.0,
            2147483647.0,
            2147483648.0,
            -2147483648.0,
            -2147483904.0,
            4294967295.5,
            4294967296.0,
            9.2e18,
            9.3e18,
            -9.2e18,
            -9.3e18,
            1.8e19,
            1.9e19,
            16777217.0,
            9007199254740993.0,
            3.4028235e38,
            3.5e38,
            1e300,
            -1e300,
            1.4e-45,
            1e-40,
            5e-324,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let ints: [i128; 24] = [
            0,
            1,
            -1,
            127,
            128,
            -128,
            -129,
            255,
            256,
            32767,
            32768,
            -32768,
            -32769,
            65535,
            65536,
            16777217,
            2147483647,
            -2147483648,
            4294967295,
            4294967296,
            9007199254740993,
            9223372036854775807,
            -9223372036854775808,
            18446744073709551615,
        ];
        // Each value cast to the type with `as`, as little-endian bytes.
        macro_rules! bytes {
            ($values:expr, $t:ty) => {
                $values
                    .iter()
                    .flat_map(|&v| (v as $t).to_le_bytes())
                    .collect()
            };
        }
        match t {
            DType::F32 => bytes!(floats, f32),
            DType::F64 => bytes!(floats, f64),
            DType::I8 => bytes!(ints, i8),
            DType::U8 => bytes!(ints, u8),
            DType::I16 => bytes!(ints, i16),
            DType::U16 => bytes!(ints, u16),
            DType::I32 => bytes!(ints, i32),
            DType::U32 => bytes!(ints, u32),
            DType::I64 => bytes!(ints, i64),
            DType::U64 => bytes!(ints, u64),
            DType::F16 | DType::BF16 => Vec::new(),
        }
    }

    /// The CUDA kernels of every pair of the ten sized types, compiled as C++ for the host
    /// (a shim stands for `__global__` and the thread indices) and run over edge values,
    /// checked bit for bit against the host's `as` (`convert_bytes`; NaN against NaN).
    /// CI has no GPU: this is where the generated expressions meet a compiler there (the
    /// same source runs under NVRTC where CUDA is required). Without a C++ compiler it says so.
    /// Without the NaN guard it fails (`f32 -> i32` of NaN gave `i32::MIN`).
    #[test]
    fn cuda_kernels_compiled_for_the_host_agree_with_as() {
        use std::fmt::Write as _;
        let sized: Vec<DType> = DType::ALL
            .into_iter()
            .filter(|t| !matches!(t, DType::F16 | DType::BF16))
            .collect();
        let mut program = String::from(
            "#include <cstdio>\n#define __global__\nstruct locus_dim { unsigned long long x; };\n\
             static locus_dim blockIdx{0}, blockDim{1}, threadIdx{0};\n",
        );
        let mut main = String::from("int main() {\n");
        let mut pairs = Vec::new();
        for &from in &sized {
            for &to in &sized {
                let k = pairs.len();
                let source = cuda_conversion(from, to).unwrap();
                program.push_str(&source.replace("locus_convert(", &format!("locus_convert_{k}(")));
                let input = edge_values(from);
                let n = input.len() / from.size();
                let bytes: Vec<String> = input.iter().map(u8::to_string).collect();
                let (s, d) = (cuda_type(from).unwrap().0, cuda_type(to).unwrap().0);
                let _ = write!(
                    main,
                    "  {{ alignas(8) static const unsigned char in[] = {{{}}};\n    \
                     static {d} out[{n}];\n    \
                     for (unsigned long long i = 0; i < {n}; ++i) {{ threadIdx.x = i; \
                     locus_convert_{k}((const {s} *)in, out, {n}ull, 0ull, 0ull); }}\n    \
                     fwrite(out, sizeof out, 1, stdout); }}\n",
                    bytes.join(",")
                );
                pairs.push((from, to, input));
            }
        }
        program.push_str(&main);
        program.push_str("  return 0;\n}\n");
        let dir = std::env::temp_dir().join(format!("locus-cuda-host-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cpp, exe) = (dir.join("kernels.cpp"), dir.join("kernels"));
        std::fs::write(&cpp, &program).unwrap();
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let built = std::process::Command::new(&cxx)
            .args(["-O1", "-std=c++17", "-w", "-o"])
            .arg(&exe)
            .arg(&cpp)
            .output();
        let built = match built {
            Ok(b) => b,
            Err(e) => {
                eprintln!("SKIPPED: no C++ compiler `{cxx}`: {e}");
                return;
            }
        };
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let ran = std::process::Command::new(&exe).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(ran.status.success());
        let mut at = 0;
        for (from, to, input) in pairs {
            let n = input.len() / from.size();
            let got = &ran.stdout[at..at + n * to.size()];
            at += n * to.size();
            let mut want = vec![0u8; n * to.size()];
            crate::core::element::convert_bytes(from, &input, to, &mut want).unwrap();
            for i in 0..n {
                let (g, w) = (
                    &got[i * to.size()..(i + 1) * to.size()],
                    &want[i * to.size()..(i + 1) * to.size()],
                );
                let nan = |b: &[u8]| match to {
                    DType::F32 => f32::from_le_bytes(b.try_into().unwrap()).is_nan(),
                    DType::F64 => f64::from_le_bytes(b.try_into().unwrap()).is_nan(),
                    _ => false,
                };
                assert!(
                    g == w || (nan(g) && nan(w)),
                    "{from} -> {to}, element {i}: the kernel gave {g:?}, `as` gives {w:?}"
                );
            }
        }
        assert_eq!(at, ran.stdout.len());
    }
}
