//! The host's memory, as the operating system reports it: what a device that shares
//! the host's memory (the host itself, OpenMP's initial device, a CPU OpenCL or SYCL
//! device, a software WebGPU adapter) can still allocate.

use super::error::{Error, Result};
use super::location::Location;

/// The host's available and total memory in bytes (`MemAvailable` and `MemTotal` of
/// `/proc/meminfo`: free memory plus what the kernel can reclaim), or `None` where the
/// system does not say.
pub fn available() -> Option<(u64, u64)> {
    parse_meminfo(&meminfo()?)
}

/// The host's physical memory in bytes (`MemTotal`), or `None` where the system does not
/// say.
pub fn total() -> Option<u64> {
    field(&meminfo()?, "MemTotal")
}

/// A host `Vec` of `len` zeroed elements, or [`Error::OutOfMemory`] naming `by` when the
/// host allocator cannot give it: never the process abort of `vec![..; len]` on an
/// allocation failure, whatever size a caller passes.
///
pub fn zeroed_vec<T: bytemuck::Pod>(len: usize, by: &str) -> Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|e| Error::OutOfMemory {
        location: Location::Host,
        requested: len.saturating_mul(std::mem::size_of::<T>()),
        by: by.to_string(),
        reason: format!("the host allocator refused it ({e}); read a range at a time"),
    })?;
    out.resize(len, T::zeroed());
    Ok(out)
}

fn meminfo() -> Option<String> {
    std::fs::read_to_string("/proc/meminfo").ok()
}

/// Field `name` of `/proc/meminfo` (in kB in the file) as bytes.
fn field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .and_then(|kb| kb.checked_mul(1024))
}

/// `MemAvailable` and `MemTotal` as bytes.
fn parse_meminfo(text: &str) -> Option<(u64, u64)> {
    Some((field(text, "MemAvailable")?, field(text, "MemTotal")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_is_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   12000000 kB\n";
        assert_eq!(
            parse_meminfo(text),
            Some((12_000_000 * 1024, 24_000_000 * 1024))
        );
        assert_eq!(parse_meminfo("MemTotal: 5 kB\n"), None);
        assert_eq!(parse_meminfo("MemAvailable: x kB\nMemTotal: 5 kB\n"), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn this_host_reports_its_memory() {
        let (free, all) = available().expect("/proc/meminfo has MemAvailable and MemTotal");
        assert!(0 < free && free <= all, "{free} of {all}");
        assert_eq!(total(), Some(all));
    }
}
