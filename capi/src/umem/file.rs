//! umem's `umemFile`: a file in binary form through C's stdio. As in umem, the first
//! `umem_alloc` opens the file (address 0) and later ones return the current position;
//! `umem_free` closes it; an address is a byte offset into the file. Copies go to and
//! from host memory directly and through a host buffer otherwise (umem left file-to-file
//! copies unimplemented; here they go through the host).

use std::ffi::{c_char, c_int, CStr};

use super::virtual_context::dispatch;
use super::*;

/// Sets `ctx`'s status to an I/O failure of `what`, with C's `errno` text.
unsafe fn io_error(ctx: Ctx, what: String) {
    let os = std::io::Error::last_os_error();
    // SAFETY: umem calls a method with its own context.
    unsafe { set_status_text(ctx, UMEM_IO_ERROR, &format!("{what} [{os}]")) }
}

/// The open stream of a file context, or a status saying it is not open.
unsafe fn stream(ctx: Ctx, method: &str) -> Option<*mut libc::FILE> {
    // SAFETY: a file context (its type says so).
    let fp = unsafe { (*ctx.cast::<UmemFile>()).fp } as *mut libc::FILE;
    if fp.is_null() {
        // SAFETY: as above.
        unsafe {
            set_status_text(
                ctx,
                UMEM_IO_ERROR,
                &format!("{method}: the file is not open; umem_alloc opens it"),
            )
        };
        return None;
    }
    Some(fp)
}

/// Moves the file's position to `adr`.
unsafe fn seek(ctx: Ctx, fp: *mut libc::FILE, adr: usize, method: &str) -> bool {
    let Ok(offset) = libc::c_long::try_from(adr) else {
        // SAFETY: umem calls a method with its own context.
        unsafe {
            set_status_text(
                ctx,
                UMEM_IO_ERROR,
                &format!("{method}: offset {adr} is too large"),
            )
        };
        return false;
    };
    // SAFETY: `fp` is the context's open stream.
    if unsafe { libc::fseek(fp, offset, libc::SEEK_SET) } != 0 {
        // SAFETY: as above.
        unsafe { io_error(ctx, format!("{method}: fseek({adr})")) };
        return false;
    }
    true
}

unsafe extern "C" fn alloc(ctx: Ctx, _nbytes: usize) -> usize {
    // SAFETY: a file context (umem calls a method with its own context).
    unsafe {
        let file = ctx.cast::<UmemFile>();
        if (*file).fp == 0 {
            let fp = libc::fopen((*file).filename, (*file).mode);
            if fp.is_null() {
                let (name, mode) = (
                    CStr::from_ptr((*file).filename).to_string_lossy(),
                    CStr::from_ptr((*file).mode).to_string_lossy(),
                );
                io_error(
                    ctx,
                    format!("umemFile_alloc_: !fopen(\"{name}\", \"{mode}\")"),
                );
                return 0;
            }
            (*file).fp = fp as usize;
            return 0;
        }
        let pos = libc::ftell((*file).fp as *mut libc::FILE);
        if pos < 0 {
            io_error(ctx, "umemFile_alloc_: ftell".into());
            return 0;
        }
        pos as usize
    }
}

unsafe extern "C" fn free(ctx: Ctx, _adr: usize) {
    // SAFETY: a file context (umem calls a method with its own context).
    unsafe {
        let file = ctx.cast::<UmemFile>();
        if (*file).fp != 0 {
            let fp = (*file).fp as *mut libc::FILE;
            (*file).fp = 0;
            if libc::fclose(fp) != 0 {
                io_error(ctx, "umemFile_free_: fclose".into());
            }
        }
    }
}

unsafe extern "C" fn dtor(ctx: Ctx) {
    // SAFETY: a file context; its name and mode are C's `malloc`ed copies (or NULL).
    unsafe {
        free(ctx, 0);
        let file = ctx.cast::<UmemFile>();
        libc::free((*file).mode as *mut libc::c_void);
        libc::free((*file).filename as *mut libc::c_void);
        (*file).mode = std::ptr::null();
        (*file).filename = std::ptr::null();
        umemVirtual_dtor(ctx);
    }
}

unsafe extern "C" fn set(ctx: Ctx, adr: usize, c: c_int, nbytes: usize) {
    // SAFETY: a file context with its open stream; `chunk` is a local buffer.
    unsafe {
        let Some(fp) = stream(ctx, "umemFile_set_") else {
            return;
        };
        if !seek(ctx, fp, adr, "umemFile_set_") {
            return;
        }
        let chunk = [c as u8; 4096];
        let mut left = nbytes;
        while left > 0 {
            let n = left.min(chunk.len());
            if libc::fwrite(chunk.as_ptr().cast(), 1, n, fp) != n {
                io_error(ctx, format!("umemFile_set_: fwrite of {n} bytes"));
                libc::clearerr(fp);
                return;
            }
            left -= n;
        }
    }
}

unsafe extern "C" fn copy_to(src: Ctx, src_adr: usize, dest: Ctx, dest_adr: usize, n: usize) {
    // SAFETY: constructed contexts with their own addresses (umem's contract); a host
    // destination holds `n` writable bytes.
    unsafe {
        match kind(dest) {
            UMEM_HOST_DEVICE => {
                let Some(fp) = stream(src, "umemFile_copy_to_") else {
                    return;
                };
                if !seek(src, fp, src_adr, "umemFile_copy_to_") {
                    return;
                }
                let read = libc::fread(dest_adr as *mut libc::c_void, 1, n, fp);
                if read != n {
                    io_error(
                        src,
                        format!("umemFile_copy_to_: fread of {n} bytes at {src_adr} read {read}"),
                    );
                    libc::clearerr(fp);
                }
            }
            UMEM_FILE_DEVICE => {
                umem_copy_to_via_host(src.cast(), src_adr, dest.cast(), dest_adr, n)
            }
            _ => dispatch::copy_from(dest, dest_adr, src, src_adr, n),
        }
    }
}

unsafe extern "C" fn copy_from(dest: Ctx, dest_adr: usize, src: Ctx, src_adr: usize, n: usize) {
    // SAFETY: constructed contexts with their own addresses (umem's contract); a host
    // source holds `n` readable bytes.
    unsafe {
        match kind(src) {
            UMEM_HOST_DEVICE => {
                let Some(fp) = stream(dest, "umemFile_copy_from_") else {
                    return;
                };
                if !seek(dest, fp, dest_adr, "umemFile_copy_from_") {
                    return;
                }
                let wrote = libc::fwrite(src_adr as *const libc::c_void, 1, n, fp);
                if wrote != n {
                    io_error(
                        dest,
                        format!(
                            "umemFile_copy_from_: fwrite of {n} bytes at {dest_adr} wrote {wrote}"
                        ),
                    );
                    libc::clearerr(fp);
                }
            }
            UMEM_FILE_DEVICE => {
                umem_copy_to_via_host(src.cast(), src_adr, dest.cast(), dest_adr, n)
            }
            _ => dispatch::copy_to(src, src_adr, dest, dest_adr, n),
        }
    }
}

/// Whether two file contexts name the same file.
///
/// # Safety
/// Both are constructed file contexts.
pub(crate) unsafe fn same_file(one: Ctx, other: Ctx) -> bool {
    // SAFETY: file contexts; a name is NULL or a NUL-terminated string.
    unsafe {
        let (a, b) = (
            (*one.cast::<UmemFile>()).filename,
            (*other.cast::<UmemFile>()).filename,
        );
        !a.is_null() && !b.is_null() && CStr::from_ptr(a) == CStr::from_ptr(b)
    }
}

unsafe extern "C" fn is_accessible_from(src: Ctx, dest: Ctx) -> bool {
    // SAFETY: constructed contexts; `dest`'s type says its layout.
    unsafe { kind(dest) == UMEM_FILE_DEVICE && same_file(src, dest) }
}

static FILE_TABLE: UmemVtbl = UmemVtbl {
    dtor,
    is_accessible_from,
    alloc,
    calloc: umemVirtual_calloc,
    free,
    aligned_alloc: umemVirtual_aligned_alloc,
    aligned_origin: umemVirtual_aligned_origin,
    aligned_free: umemVirtual_aligned_free,
    set,
    copy_to,
    copy_from,
};

/// A `malloc`ed copy of a C string.
unsafe fn dup(text: *const c_char) -> *const c_char {
    // SAFETY: a NUL-terminated string (the caller's).
    unsafe { libc::strdup(text) }
}

/// Constructs a file context for `filename` opened with `mode` (`"wb"`, `"rb"`, ...;
/// umem's `umemFile_ctor`). The file opens at the first `umem_alloc`. An empty or NULL
/// name or mode is a `umemValueError`.
///
/// # Safety
/// `ctx` points to a `umemFile`; `filename` and `mode` are NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn umemFile_ctor(
    ctx: *mut UmemFile,
    filename: *const c_char,
    mode: *const c_char,
) {
    if ctx.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(c"umemFile_ctor".as_ptr()) };
        return;
    }
    // SAFETY: `ctx` points to a `umemFile` the caller owns; the strings are NULL or
    // NUL-terminated.
    unsafe {
        umemHost_ctor(std::ptr::addr_of_mut!((*ctx).host));
        umemVirtual_ctor(ctx.cast(), std::ptr::addr_of_mut!((*ctx).host));
        (*ctx).base.kind = UMEM_FILE_DEVICE;
        (*ctx).base.vptr = &FILE_TABLE;
        (*ctx).fp = 0;
        (*ctx).filename = std::ptr::null();
        (*ctx).mode = std::ptr::null();
        let empty = |p: *const c_char| p.is_null() || *p == 0;
        if empty(filename) {
            set_status_text(ctx.cast(), UMEM_VALUE_ERROR, "invalid 0-length filename");
        }
        if empty(mode) {
            set_status_text(ctx.cast(), UMEM_VALUE_ERROR, "invalid 0-length mode");
        }
        if is_ok(ctx.cast()) {
            (*ctx).filename = dup(filename);
            (*ctx).mode = dup(mode);
        }
    }
}
