//! Host pages, shared by the backends whose memory is the host's (the host itself;
//! OpenMP on the initial device).
//!
//! Large host allocations come straight from the kernel as anonymous pages, which read
//! as zero until first touched. The global allocator's `alloc_zeroed` at 256-byte
//! alignment is `posix_memalign` plus a `memset` of every byte, so a request of
//! gigabytes would touch every page before returning: on a machine that cannot back it,
//! the OOM killer ends the process instead of the caller getting an error. With `mmap`
//! a request the kernel refuses is an error at once, and one it grants costs nothing
//! until written.

/// Allocations of at least this many bytes are mapped pages; smaller ones use the
/// global allocator (a page per small block would waste memory and system calls).
pub(crate) const THRESHOLD: usize = 1 << 20;

/// Maps `bytes` of zeroed, page-aligned, readable and writable memory.
#[cfg(unix)]
pub(crate) fn map(bytes: usize) -> std::result::Result<*mut u8, std::io::Error> {
    // SAFETY: an anonymous private mapping at an address the kernel chooses: it
    // replaces nothing and refers to no file.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    advise_huge_pages_within(ptr.cast(), bytes);
    Ok(ptr.cast())
}

/// Asks Linux for transparent huge pages on the 2 MiB aligned spans inside
/// `ptr..ptr + bytes` (a mapping [`map`] made, or memory another allocator made for
/// locus: OpenMP's `omp_target_alloc` on the initial device is `malloc`), as numpy does
/// for its large arrays; where the system's policy is `madvise` (the common default)
/// plain pages are used otherwise. Fewer TLB misses make large copies faster, and the
/// kernel's cross-process copy (MPI's shared-memory transport reads the sender's pages
/// with `process_vm_readv`) about twice as fast (`docs/design-measurements.md`). Advice only: pages already touched keep their size, nothing is read or written.
#[cfg(target_os = "linux")]
pub(crate) fn advise_huge_pages_within(ptr: *mut u8, bytes: usize) {
    advise_interior(ptr, bytes, libc::MADV_HUGEPAGE);
}

/// `madvise(advice)` on the 2 MiB aligned spans inside `ptr..ptr + bytes`, if any.
#[cfg(target_os = "linux")]
fn advise_interior(ptr: *mut u8, bytes: usize, advice: libc::c_int) {
    const HUGE: usize = 2 << 20;
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize).saturating_add(bytes) / HUGE * HUGE;
    if end > start {
        // SAFETY: start..end lies inside the caller's allocation and is page aligned;
        // the advice given here (huge pages, collapsing into them) changes how the
        // memory is backed, never its contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, advice) };
    }
}

/// Elsewhere there is nothing to ask.
#[cfg(not(target_os = "linux"))]
pub(crate) fn advise_huge_pages_within(_ptr: *mut u8, _bytes: usize) {}

/// Like [`advise_huge_pages_within`] for memory whose pages were already touched (a
/// driver's, handed over mapped): also asks the kernel to collapse them into huge pages
/// now (`MADV_COLLAPSE`, Linux 6.1+; a copy of each 2 MiB, once). Best effort: an older
/// kernel, or memory that cannot be collapsed, keeps its pages as they are.
#[cfg(target_os = "linux")]
#[cfg_attr(not(feature = "webgpu"), allow(dead_code))]
pub(crate) fn collapse_huge_pages_within(ptr: *mut u8, bytes: usize) {
    /// `MADV_COLLAPSE` (linux/mman.h; not in the libc crate yet).
    const MADV_COLLAPSE: libc::c_int = 25;
    advise_interior(ptr, bytes, libc::MADV_HUGEPAGE);
    advise_interior(ptr, bytes, MADV_COLLAPSE);
}

/// Elsewhere there is nothing to ask.
#[cfg(not(target_os = "linux"))]
#[cfg_attr(not(feature = "webgpu"), allow(dead_code))]
pub(crate) fn collapse_huge_pages_within(_ptr: *mut u8, _bytes: usize) {}

/// Returns pages from [`map`].
///
/// # Safety
/// `ptr` and `bytes` are those of one earlier successful [`map`], not unmapped since, and
/// nothing uses the memory afterwards.
#[cfg(unix)]
pub(crate) unsafe fn unmap(ptr: *mut u8, bytes: usize) {
    // SAFETY: per the contract, exactly one live mapping of `bytes` starts at `ptr`.
    unsafe { libc::munmap(ptr.cast(), bytes) };
}

/// Elsewhere the global allocator's zeroed allocation stands in for mapped pages.
#[cfg(not(unix))]
pub(crate) fn map(bytes: usize) -> std::result::Result<*mut u8, std::io::Error> {
    let layout = std::alloc::Layout::from_size_align(bytes.max(1), crate::core::device::ALIGNMENT)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        Err(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            "the global allocator returned null",
        ))
    } else {
        Ok(ptr)
    }
}

/// Returns memory from [`map`].
///
/// # Safety
/// As for the Unix version: one earlier successful [`map`] of `bytes`, unused afterwards.
#[cfg(not(unix))]
pub(crate) unsafe fn unmap(ptr: *mut u8, bytes: usize) {
    if let Ok(layout) =
        std::alloc::Layout::from_size_align(bytes.max(1), crate::core::device::ALIGNMENT)
    {
        // SAFETY: `map` allocated `ptr` with this layout.
        unsafe { std::alloc::dealloc(ptr, layout) };
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The VmFlags line of the mapping that holds `addr`, from /proc/self/smaps.
    fn vm_flags(addr: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = first.split_once('-') {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = lo <= addr && addr < hi;
                    continue;
                }
            }
            if inside && line.starts_with("VmFlags:") {
                return Some(line.to_string());
            }
        }
        None
    }

    #[test]
    fn large_allocations_ask_for_huge_pages() {
        let bytes = 8 << 20;
        let ptr = super::map(bytes).expect("map 8 MiB");
        let flags = vm_flags(ptr as usize + (4 << 20));
        // SAFETY: the mapping `map` just made, unused afterwards.
        unsafe { super::unmap(ptr, bytes) };
        let flags = flags.expect("the mapping is in /proc/self/smaps");
        assert!(
            flags.split_whitespace().any(|f| f == "hg"),
            "no MADV_HUGEPAGE: {flags}"
        );
    }

    #[test]
    fn memory_another_allocator_made_asks_for_huge_pages_inside() {
        // As OpenMP's omp_target_alloc (malloc) on the initial device: not page aligned.
        let block: Vec<u8> = Vec::with_capacity(8 << 20);
        let ptr = block.as_ptr().cast_mut().wrapping_add(16);
        super::advise_huge_pages_within(ptr, (8 << 20) - 16);
        let flags = vm_flags(ptr as usize + (4 << 20)).expect("the block is in /proc/self/smaps");
        assert!(
            flags.split_whitespace().any(|f| f == "hg"),
            "no MADV_HUGEPAGE: {flags}"
        );
    }
}
