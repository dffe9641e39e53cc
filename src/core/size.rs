//! Byte counts as people write them: [`parse_size`] (`4KiB`, `64 MB`) and
//! [`format_size`] (`256 MiB`), for the CLI, the planner's calibration, the benchmarks and
//! the environment variables that take a size.

use super::error::{Error, Result};

const UNITS: [(&str, u64); 9] = [
    ("TIB", 1 << 40),
    ("GIB", 1 << 30),
    ("MIB", 1 << 20),
    ("KIB", 1 << 10),
    ("TB", 1_000_000_000_000),
    ("GB", 1_000_000_000),
    ("MB", 1_000_000),
    ("KB", 1_000),
    ("B", 1),
];

/// Parses a size such as `4KiB`, `1MiB`, `1GiB`, `1TiB`, `512`, `64 MB` (case-insensitive).
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim().to_ascii_uppercase().replace(' ', "");
    let (number, scale) = UNITS
        .iter()
        .find_map(|(unit, scale)| t.strip_suffix(unit).map(|n| (n.to_string(), *scale)))
        .unwrap_or((t.clone(), 1));
    let value: u64 = number.parse().map_err(|_| {
        Error::Invalid(format!(
            "bad size `{text}`: expected a whole number with an optional unit, e.g. 4KiB, 1MiB, 1GiB, 4096"
        ))
    })?;
    let bytes = value
        .checked_mul(scale)
        .ok_or_else(|| Error::Invalid(format!("size `{text}` is too large")))?;
    if bytes == 0 {
        return Err(Error::Invalid(format!(
            "size `{text}` is zero: sizes must be positive"
        )));
    }
    Ok(bytes)
}

/// Formats a byte count with a binary unit (`4 KiB`, `256 MiB`).
pub fn format_size(bytes: u64) -> String {
    for (unit, scale) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{} {unit}", bytes / scale);
        }
    }
    format!("{bytes} B")
}
