//! Large host allocations come straight from the kernel as anonymous pages, which read
//! as zero until first touched. The global allocator's `alloc_zeroed` at 64-byte
//! alignment is `posix_memalign` plus a `memset` of every byte, so a request of
//! gigabytes would touch every page before returning: on a machine that cannot back it,
//! the OOM killer ends the process instead of the caller getting an error. With `mmap`
//! a request the kernel refuses is an error at once, and one it grants costs nothing
//! until written.

/// Allocations of at least this many bytes are mapped pages; smaller ones use the
/// global allocator (a page per small block would waste memory and system calls).
pub(super) const THRESHOLD: usize = 1 << 20;

/// Maps `bytes` of zeroed, page-aligned, readable and writable memory.
#[cfg(unix)]
pub(super) fn map(bytes: usize) -> std::result::Result<*mut u8, String> {
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
        Err(std::io::Error::last_os_error().to_string())
    } else {
        Ok(ptr.cast())
    }
}

/// Returns pages from [`map`].
///
/// # Safety
/// `ptr` and `bytes` are those of one earlier successful [`map`], not unmapped since, and
/// nothing uses the memory afterwards.
#[cfg(unix)]
pub(super) unsafe fn unmap(ptr: *mut u8, bytes: usize) {
    // SAFETY: per the contract, exactly one live mapping of `bytes` starts at `ptr`.
    unsafe { libc::munmap(ptr.cast(), bytes) };
}

/// Elsewhere the global allocator's zeroed allocation stands in for mapped pages.
#[cfg(not(unix))]
pub(super) fn map(bytes: usize) -> std::result::Result<*mut u8, String> {
    let layout = super::layout(bytes).map_err(|e| e.to_string())?;
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        Err("the global allocator returned null".into())
    } else {
        Ok(ptr)
    }
}

/// Returns memory from [`map`].
///
/// # Safety
/// As for the Unix version: one earlier successful [`map`] of `bytes`, unused afterwards.
#[cfg(not(unix))]
pub(super) unsafe fn unmap(ptr: *mut u8, bytes: usize) {
    if let Ok(layout) = super::layout(bytes) {
        // SAFETY: `map` allocated `ptr` with this layout.
        unsafe { std::alloc::dealloc(ptr, layout) };
    }
}
