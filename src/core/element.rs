//! Element types: the numeric types a [`Buffer`](crate::Buffer) converts between and
//! kernels take ([`DType`], [`Element`]), and the conversion of a run of elements from
//! one type to another with Rust's `as` semantics.
//!
//! `as` semantics, for every pair: integer to integer truncates or sign-extends (so
//! `300i32 -> u8` is 44 and `-1i64 -> u32` is 4294967295); float to integer rounds toward
//! zero and saturates (NaN is 0, `1e10f32 -> i32` is `i32::MAX`); integer to float and
//! `f64 -> f32` round to nearest, ties to even (`u64::MAX -> f32` is 1.8446744e19). A
//! conversion that loses information does so silently, as `as` does: check ranges
//! first where that matters.
//!
//! Half precision (`f16`, `bf16`, from the [`half`] crate) rounds once to nearest, ties
//! to even: a half value reaches another type through `f32` or `f64` (both hold it
//! exactly), an integer reaches a half type through `f64` (exact up to 2^53, far past
//! `f16`'s range; for `bf16` a 64-bit integer above 2^53 may round twice), `f32` and
//! `f64` convert directly.

use std::fmt;

use bytemuck::Pod;

use super::error::Error;
use half::{bf16, f16};

/// A numeric element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
    /// IEEE 754 half precision ([`half::f16`]).
    F16,
    /// bfloat16 ([`half::bf16`]).
    BF16,
    /// 8-bit signed integer.
    I8,
    /// 8-bit unsigned integer.
    U8,
    /// 16-bit signed integer.
    I16,
    /// 16-bit unsigned integer.
    U16,
    /// 32-bit signed integer.
    I32,
    /// 32-bit unsigned integer.
    U32,
    /// 64-bit signed integer.
    I64,
    /// 64-bit unsigned integer.
    U64,
}

impl DType {
    /// Every type, in declaration order.
    pub const ALL: [DType; 12] = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
    ];

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// Rust's name for it (`f32`, `bf16`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Converts one value with `as` semantics (see the module docs).
pub trait CastTo<D> {
    /// `self as D`.
    fn cast_to(self) -> D;
}

/// Every numeric element type: what buffers convert between and kernels take.
pub trait Element:
    Pod
    + Send
    + Sync
    + CastTo<f32>
    + CastTo<f64>
    + CastTo<f16>
    + CastTo<bf16>
    + CastTo<i8>
    + CastTo<u8>
    + CastTo<i16>
    + CastTo<u16>
    + CastTo<i32>
    + CastTo<u32>
    + CastTo<i64>
    + CastTo<u64>
{
    /// The matching [`DType`].
    const DTYPE: DType;
}

macro_rules! elements {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(impl Element for $t {
            const DTYPE: DType = DType::$d;
        })*
    };
}
elements!(f32 => F32, f64 => F64, f16 => F16, bf16 => BF16, i8 => I8, u8 => U8,
    i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64);

/// `as` between every pair of Rust's primitive numeric types.
macro_rules! primitive_casts {
    ($($s:ty),*) => { primitive_casts!(@each [$($s),*] [$($s),*]); };
    (@each [$($s:ty),*] $all:tt) => { $(primitive_casts!(@to $s $all);)* };
    (@to $s:ty [$($d:ty),*]) => {
        $(impl CastTo<$d> for $s {
            #[inline(always)]
            fn cast_to(self) -> $d {
                self as $d
            }
        })*
    };
}
primitive_casts!(f32, f64, i8, u8, i16, u16, i32, u32, i64, u64);

/// Half types to and from the primitives: out through `f32` (or `f64` for 64-bit types),
/// in through `f64` from integers.
macro_rules! half_casts {
    ($h:ty; $($p:ty => $via:ident, $from:ident, $to:ident);* $(;)?) => {
        $(
            impl CastTo<$p> for $h {
                #[inline(always)]
                fn cast_to(self) -> $p {
                    self.$to() as $p
                }
            }
            impl CastTo<$h> for $p {
                #[inline(always)]
                fn cast_to(self) -> $h {
                    <$h>::$from(self as $via)
                }
            }
        )*
    };
}
macro_rules! half_type {
    ($h:ty) => {
        half_casts!($h;
            f32 => f32, from_f32, to_f32; f64 => f64, from_f64, to_f64;
            i8 => f64, from_f64, to_f32; u8 => f64, from_f64, to_f32;
            i16 => f64, from_f64, to_f32; u16 => f64, from_f64, to_f32;
            i32 => f64, from_f64, to_f32; u32 => f64, from_f64, to_f32;
            i64 => f64, from_f64, to_f64; u64 => f64, from_f64, to_f64);
        impl CastTo<$h> for $h {
            #[inline(always)]
            fn cast_to(self) -> $h {
                self
            }
        }
    };
}
half_type!(f16);
half_type!(bf16);

impl CastTo<bf16> for f16 {
    #[inline(always)]
    fn cast_to(self) -> bf16 {
        bf16::from_f32(self.to_f32())
    }
}
impl CastTo<f16> for bf16 {
    #[inline(always)]
    fn cast_to(self) -> f16 {
        f16::from_f32(self.to_f32())
    }
}

/// Converts `src` into `dst` element by element (equal lengths; the shorter decides).
pub fn convert_slice<S: CastTo<D> + Copy, D>(src: &[S], dst: &mut [D]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.cast_to();
    }
}

fn typed<T: Pod>(bytes: &[u8]) -> Result<&[T], Error> {
    bytemuck::try_cast_slice(bytes).map_err(|e| Error::Invalid(format!("{e:?}")))
}

fn typed_mut<T: Pod>(bytes: &mut [u8]) -> Result<&mut [T], Error> {
    bytemuck::try_cast_slice_mut(bytes).map_err(|e| Error::Invalid(format!("{e:?}")))
}

fn into<S: Element>(src: &[S], to: DType, dst: &mut [u8]) -> Result<(), Error> {
    macro_rules! to {
        ($($d:ident => $t:ty),*) => {
            match to {
                $(DType::$d => convert_slice::<S, $t>(src, typed_mut(dst)?),)*
            }
        };
    }
    to!(F32 => f32, F64 => f64, F16 => f16, BF16 => bf16, I8 => i8, U8 => u8,
        I16 => i16, U16 => u16, I32 => i32, U32 => u32, I64 => i64, U64 => u64);
    Ok(())
}

/// Converts the elements of type `from` in `src` into elements of type `to` in `dst`
/// (byte slices, each aligned for its type and holding the same number of elements).
/// [`Error::Invalid`] (the reason) when a slice is misaligned or the counts differ.
pub fn convert_bytes(from: DType, src: &[u8], to: DType, dst: &mut [u8]) -> Result<(), Error> {
    if src.len() / from.size() != dst.len() / to.size()
        || !src.len().is_multiple_of(from.size())
        || !dst.len().is_multiple_of(to.size())
    {
        return Err(Error::Invalid(format!(
            "{} bytes of {from} and {} bytes of {to} are not the same number of elements",
            src.len(),
            dst.len()
        )));
    }
    if src.is_empty() {
        // An empty slice's address need not be aligned for the type (`&[]` of bytes).
        return Ok(());
    }
    macro_rules! from {
        ($($d:ident => $t:ty),*) => {
            match from {
                $(DType::$d => into::<$t>(typed(src)?, to, dst),)*
            }
        };
    }
    from!(F32 => f32, F64 => f64, F16 => f16, BF16 => bf16, I8 => i8, U8 => u8,
        I16 => i16, U16 => u16, I32 => i32, U32 => u32, I64 => i64, U64 => u64)
}
