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

/// A conversion kernel in CUDA C++ (compiled by NVRTC; with `hip` the HIP header first,
/// for hiprtc), generated for one pair of types with Rust's `as` semantics: float to
/// integer tests NaN (0) and the destination's bounds (powers of two, exact in either
/// float type) and otherwise truncates toward zero; to a float a C++ conversion (round to
/// nearest even; NVRTC keeps subnormals unless told `-ftz`); integer to integer a cast
/// (two's complement wrap). Entry `locus_convert(src, dst, n, so, dof)`, offsets in
/// elements, one thread per element.
pub(super) fn cuda_conversion(from: DType, to: DType, hip: bool) -> Option<String> {
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
    let header = if hip {
        "#include <hip/hip_runtime.h>
"
    } else {
        ""
    };
    Some(format!(
        "{header}// {from} -> {to}
extern \"C\" __global__ void locus_convert(const {s} *src, {d} *dst, unsigned long long n, unsigned long long so, unsigned long long dof) {{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{
        {s} x = src[so + i];
        dst[dof + i] = {convert};
    }}
}}
"
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
        let k = cuda_conversion(DType::F32, DType::I8, false).unwrap();
        assert!(k.contains(
            "extern \"C\" __global__ void locus_convert(const float *src, signed char *dst"
        ));
        assert!(k.contains("x != x ? (signed char)0"), "{k}");
        assert!(
            k.contains("x <= (float)-128.0 ? (signed char)(-127ll - 1)"),
            "{k}"
        );
        assert!(k.contains("x >= (float)128.0 ? (signed char)127ll"), "{k}");
        let k = cuda_conversion(DType::F64, DType::U64, false).unwrap();
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
        assert!(cuda_conversion(DType::I64, DType::I16, false)
            .unwrap()
            .contains("dst[dof + i] = (short)x;"));
        assert!(cuda_conversion(DType::U64, DType::F32, false)
            .unwrap()
            .contains("dst[dof + i] = (float)x;"));
        // HIP: the same kernel after its header; half types have none.
        assert!(cuda_conversion(DType::F32, DType::F64, true)
            .unwrap()
            .starts_with("#include <hip/hip_runtime.h>"));
        assert!(cuda_conversion(DType::F16, DType::F32, false).is_none());
    }
}
