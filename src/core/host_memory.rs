//! The host's memory, as the operating system reports it: what a device that shares
//! the host's memory (the host itself, OpenMP's initial device, a CPU OpenCL or SYCL
//! device, a software WebGPU adapter) can still allocate.

/// The host's available and total memory in bytes (`MemAvailable` and `MemTotal` of
/// `/proc/meminfo`: free memory plus what the kernel can reclaim), or `None` where the
/// system does not say.
pub fn available() -> Option<(u64, u64)> {
    parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemAvailable` and `MemTotal` (in kB in the file) as bytes.
fn parse_meminfo(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .and_then(|kb| kb.checked_mul(1024))
    };
    Some((field("MemAvailable")?, field("MemTotal")?))
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
    fn this_host_reports_its_memory() {
        if let Some((free, total)) = available() {
            assert!(0 < free && free <= total, "{free} of {total}");
        }
    }
}
