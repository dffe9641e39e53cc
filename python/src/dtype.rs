//! Element types: names as numpy spells them, their array-interface type strings and
//! their DLPack codes.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// DLPack type codes (`DLDataTypeCode`).
pub const DL_INT: u8 = 0;
/// Unsigned integers.
pub const DL_UINT: u8 = 1;
/// IEEE floats.
pub const DL_FLOAT: u8 = 2;
/// Booleans (one byte each).
pub const DL_BOOL: u8 = 6;

/// One supported element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DType {
    /// numpy's name (`"float32"`).
    pub name: &'static str,
    /// Bytes per element.
    pub size: usize,
    /// DLPack type code.
    pub code: u8,
}

/// Every type locus buffers hold from Python.
pub const DTYPES: [DType; 12] = [
    DType {
        name: "float16",
        size: 2,
        code: DL_FLOAT,
    },
    DType {
        name: "float32",
        size: 4,
        code: DL_FLOAT,
    },
    DType {
        name: "float64",
        size: 8,
        code: DL_FLOAT,
    },
    DType {
        name: "int8",
        size: 1,
        code: DL_INT,
    },
    DType {
        name: "int16",
        size: 2,
        code: DL_INT,
    },
    DType {
        name: "int32",
        size: 4,
        code: DL_INT,
    },
    DType {
        name: "int64",
        size: 8,
        code: DL_INT,
    },
    DType {
        name: "uint8",
        size: 1,
        code: DL_UINT,
    },
    DType {
        name: "uint16",
        size: 2,
        code: DL_UINT,
    },
    DType {
        name: "uint32",
        size: 4,
        code: DL_UINT,
    },
    DType {
        name: "uint64",
        size: 8,
        code: DL_UINT,
    },
    DType {
        name: "bool",
        size: 1,
        code: DL_BOOL,
    },
];

fn names() -> String {
    DTYPES.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
}

impl DType {
    /// locus's element type of the same name; `None` for bool, which converts as no Rust
    /// element type does.
    pub fn element(&self) -> Option<locus::DType> {
        use locus::DType as E;
        Some(match self.name {
            "float16" => E::F16,
            "float32" => E::F32,
            "float64" => E::F64,
            "int8" => E::I8,
            "int16" => E::I16,
            "int32" => E::I32,
            "int64" => E::I64,
            "uint8" => E::U8,
            "uint16" => E::U16,
            "uint32" => E::U32,
            "uint64" => E::U64,
            _ => return None,
        })
    }

    /// The type called `name` (numpy's spelling; `float`, `int`, `bool_`... aliases too).
    pub fn from_name(name: &str) -> PyResult<DType> {
        let canonical = match name {
            "float" | "double" | "f8" | "<f8" => "float64",
            "half" | "f2" | "<f2" => "float16",
            "single" | "f4" | "<f4" => "float32",
            "int" | "i8" | "<i8" => "int64",
            "i4" | "<i4" => "int32",
            "i2" | "<i2" => "int16",
            "i1" | "|i1" => "int8",
            "u8" | "<u8" => "uint64",
            "u4" | "<u4" => "uint32",
            "u2" | "<u2" => "uint16",
            "u1" | "|u1" => "uint8",
            "bool_" | "?" | "b1" | "|b1" => "bool",
            other => other,
        };
        DTYPES
            .iter()
            .find(|d| d.name == canonical)
            .copied()
            .ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "locus buffers do not hold dtype {name:?}; the supported dtypes are {}",
                    names()
                ))
            })
    }

    /// The type from a DLPack (code, bits, lanes) triple.
    pub fn from_dlpack(code: u8, bits: u8, lanes: u16) -> PyResult<DType> {
        DTYPES
            .iter()
            .find(|d| d.code == code && d.size * 8 == bits as usize && lanes == 1)
            .copied()
            .ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "locus buffers do not hold the DLPack type (code {code}, {bits} bits, {lanes} lanes); \
                     the supported dtypes are {}",
                    names()
                ))
            })
    }

    /// The array-interface type string (`"<f4"`, `"|b1"`).
    pub fn typestr(&self) -> String {
        let kind = match self.code {
            DL_FLOAT => 'f',
            DL_INT => 'i',
            DL_UINT => 'u',
            _ => 'b',
        };
        let order = if self.size == 1 { '|' } else { '<' };
        format!("{order}{kind}{}", self.size)
    }

    /// The type named by an array-interface type string.
    pub fn from_typestr(typestr: &str) -> PyResult<DType> {
        let wrong = || {
            PyTypeError::new_err(format!(
                "locus buffers do not hold the array-interface type {typestr:?} \
                 (little-endian {} only)",
                names()
            ))
        };
        // numpy's grammar, exactly: a byte-order character (`<`, `>` or `|`), a kind
        // letter, and the size in bytes as decimal digits with no sign and no leading
        // zero. Multi-byte types must be little-endian; `|` (no byte order) only for
        // one byte.
        let mut chars = typestr.chars();
        let order = chars.next().ok_or_else(wrong)?;
        let kind = chars.next().ok_or_else(wrong)?;
        let digits = chars.as_str();
        if !matches!(order, '<' | '>' | '|')
            || digits.is_empty()
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || digits.starts_with('0')
        {
            return Err(wrong());
        }
        let size: usize = digits.parse().map_err(|_| wrong())?;
        if order != '<' && size > 1 {
            return Err(wrong());
        }
        let code = match kind {
            'f' => DL_FLOAT,
            'i' => DL_INT,
            'u' => DL_UINT,
            'b' => DL_BOOL,
            _ => return Err(wrong()),
        };
        DTYPES
            .iter()
            .find(|d| d.code == code && d.size == size)
            .copied()
            .ok_or_else(wrong)
    }

    /// `value` as this type's bytes (native order), for fills.
    pub fn encode(&self, value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
        let wrong = |e: PyErr| {
            PyTypeError::new_err(format!(
                "fill value {value} does not fit dtype {}: {e}",
                self.name
            ))
        };
        Ok(match (self.code, self.size) {
            (DL_FLOAT, 2) => half::f16::from_f64(value.extract::<f64>().map_err(wrong)?)
                .to_ne_bytes()
                .to_vec(),
            (DL_FLOAT, 4) => (value.extract::<f64>().map_err(wrong)? as f32)
                .to_ne_bytes()
                .to_vec(),
            (DL_FLOAT, _) => value
                .extract::<f64>()
                .map_err(wrong)?
                .to_ne_bytes()
                .to_vec(),
            (DL_BOOL, _) => vec![u8::from(value.is_truthy()?)],
            (DL_INT, 1) => value.extract::<i8>().map_err(wrong)?.to_ne_bytes().to_vec(),
            (DL_INT, 2) => value
                .extract::<i16>()
                .map_err(wrong)?
                .to_ne_bytes()
                .to_vec(),
            (DL_INT, 4) => value
                .extract::<i32>()
                .map_err(wrong)?
                .to_ne_bytes()
                .to_vec(),
            (DL_INT, _) => value
                .extract::<i64>()
                .map_err(wrong)?
                .to_ne_bytes()
                .to_vec(),
            (_, 1) => value.extract::<u8>().map_err(wrong)?.to_ne_bytes().to_vec(),
            (_, 2) => value
                .extract::<u16>()
                .map_err(wrong)?
                .to_ne_bytes()
                .to_vec(),
            (_, 4) => value
                .extract::<u32>()
                .map_err(wrong)?
                .to_ne_bytes()
                .to_vec(),
            _ => value
                .extract::<u64>()
                .map_err(wrong)?
                .to_ne_bytes()
                .to_vec(),
        })
    }

    /// One element's bytes as a Python value.
    pub fn decode<'py>(&self, py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
            let mut a = [0; N];
            a.copy_from_slice(&b[..N]);
            a
        }
        Ok(match (self.code, self.size) {
            (DL_FLOAT, 2) => half::f16::from_ne_bytes(arr(bytes))
                .to_f64()
                .into_pyobject(py)?
                .into_any(),
            (DL_FLOAT, 4) => (f32::from_ne_bytes(arr(bytes)) as f64)
                .into_pyobject(py)?
                .into_any(),
            (DL_FLOAT, _) => f64::from_ne_bytes(arr(bytes)).into_pyobject(py)?.into_any(),
            (DL_BOOL, _) => pyo3::types::PyBool::new(py, bytes[0] != 0)
                .to_owned()
                .into_any(),
            (DL_INT, 1) => (bytes[0] as i8).into_pyobject(py)?.into_any(),
            (DL_INT, 2) => i16::from_ne_bytes(arr(bytes)).into_pyobject(py)?.into_any(),
            (DL_INT, 4) => i32::from_ne_bytes(arr(bytes)).into_pyobject(py)?.into_any(),
            (DL_INT, _) => i64::from_ne_bytes(arr(bytes)).into_pyobject(py)?.into_any(),
            (_, 1) => bytes[0].into_pyobject(py)?.into_any(),
            (_, 2) => u16::from_ne_bytes(arr(bytes)).into_pyobject(py)?.into_any(),
            (_, 4) => u32::from_ne_bytes(arr(bytes)).into_pyobject(py)?.into_any(),
            _ => u64::from_ne_bytes(arr(bytes)).into_pyobject(py)?.into_any(),
        })
    }
}

/// `dtype` given as a name, a numpy dtype or a numpy scalar type (anything with `.name`
/// or whose `str()` is a name).
pub fn dtype_of(dtype: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(name) = dtype.extract::<String>() {
        return DType::from_name(&name);
    }
    if let Ok(name) = dtype.getattr("name").and_then(|n| n.extract::<String>()) {
        return DType::from_name(&name);
    }
    // numpy scalar types (np.float32): their `__name__`.
    if let Ok(name) = dtype
        .getattr("__name__")
        .and_then(|n| n.extract::<String>())
    {
        return DType::from_name(&name);
    }
    DType::from_name(&dtype.str()?.to_string())
}
