//! umem's connections (its `umem_connect.c`): memory of one context paired with memory of
//! another, the same memory where each context reaches the other's in place (and the
//! alignment asked for holds), a copy otherwise; `sync_to` / `sync_from` copy only when
//! the two are not the same memory; `disconnect` frees the copy.

use std::ffi::c_void;

use super::virtual_context::dispatch;
use super::*;

/// umem's `are_accessible`: each context reaches the other's memory in place.
unsafe fn are_accessible(a: Ctx, b: Ctx) -> bool {
    // SAFETY: constructed contexts (the caller's contract).
    unsafe {
        dispatch::is_accessible_from(a, b)
            && is_ok(a)
            && dispatch::is_accessible_from(b, a)
            && is_ok(b)
    }
}

/// NULL contexts: a thread status naming `call`, and `true`.
unsafe fn null(a: *mut c_void, b: *mut c_void, call: &std::ffi::CStr) -> bool {
    if a.is_null() || b.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(call.as_ptr()) };
        return true;
    }
    false
}

/// Memory of `dest_ctx` holding the `nbytes` at `src_adr` of `src_ctx`: `src_adr` itself
/// when the two contexts reach each other's memory in place and it meets
/// `dest_alignment` (0: any), else a new allocation (aligned when asked) with a copy.
/// 0 on failure, with the status in `dest_ctx`.
///
/// # Safety
/// Both contexts are constructed; `src_adr` is `src_ctx`'s.
#[no_mangle]
pub unsafe extern "C" fn umem_connect(
    src_ctx: *mut c_void,
    src_adr: usize,
    nbytes: usize,
    dest_ctx: *mut c_void,
    dest_alignment: usize,
) -> usize {
    // SAFETY: constructed contexts (the caller's contract).
    unsafe {
        if null(src_ctx, dest_ctx, c"umem_connect") {
            return 0;
        }
        let (src, dest): (Ctx, Ctx) = (src_ctx.cast(), dest_ctx.cast());
        if are_accessible(src, dest)
            && (dest_alignment == 0 || src_adr.is_multiple_of(dest_alignment))
        {
            // The destination uses the source's memory in place until disconnected.
            super::addresses::connect(src_adr, nbytes);
            return src_adr;
        }
        let dest_adr = if dest_alignment != 0 {
            dispatch::aligned_alloc(dest, dest_alignment, nbytes)
        } else {
            dispatch::alloc(dest, nbytes)
        };
        if !is_ok(dest) {
            return 0;
        }
        dispatch::copy_to(src, src_adr, dest, dest_adr, nbytes);
        if !is_ok(dest) || !is_ok(src) {
            if dest_alignment != 0 {
                dispatch::aligned_free(dest, dest_adr);
            } else {
                dispatch::free(dest, dest_adr);
            }
            return 0;
        }
        dest_adr
    }
}

/// Copies the connected memory `src_adr` of `src_ctx` into `dest_adr` of `dest_ctx`
/// (umem's `umem_sync_from`; nothing when they are the same memory).
///
/// # Safety
/// Both contexts are constructed; the addresses are theirs.
#[no_mangle]
pub unsafe extern "C" fn umem_sync_from(
    dest_ctx: *mut c_void,
    dest_adr: usize,
    src_ctx: *mut c_void,
    src_adr: usize,
    nbytes: usize,
) {
    // SAFETY: the caller's contract.
    unsafe {
        if null(src_ctx, dest_ctx, c"umem_sync_from") {
            return;
        }
        let (src, dest): (Ctx, Ctx) = (src_ctx.cast(), dest_ctx.cast());
        if src_adr == dest_adr && are_accessible(dest, src) {
            return;
        }
        dispatch::copy_from(dest, dest_adr, src, src_adr, nbytes);
    }
}

/// Copies the connected memory `src_adr` of `src_ctx` into `dest_adr` of `dest_ctx`
/// (umem's `umem_sync_to`; nothing when they are the same memory).
///
/// # Safety
/// Both contexts are constructed; the addresses are theirs.
#[no_mangle]
pub unsafe extern "C" fn umem_sync_to(
    src_ctx: *mut c_void,
    src_adr: usize,
    dest_ctx: *mut c_void,
    dest_adr: usize,
    nbytes: usize,
) {
    // SAFETY: the caller's contract.
    unsafe {
        if null(src_ctx, dest_ctx, c"umem_sync_to") {
            return;
        }
        let (src, dest): (Ctx, Ctx) = (src_ctx.cast(), dest_ctx.cast());
        if src_adr == dest_adr && are_accessible(src, dest) {
            return;
        }
        dispatch::copy_to(src, src_adr, dest, dest_adr, nbytes);
    }
}

/// Whether `nbytes` fit both sizes; an `umemIndexError` in the context that is too small
/// otherwise (umem's `_safe` rule).
unsafe fn fits(
    call: &str,
    src: Ctx,
    src_size: usize,
    dest: Ctx,
    dest_size: usize,
    nbytes: usize,
) -> bool {
    // SAFETY: constructed contexts (the caller's contract).
    unsafe {
        if nbytes > src_size {
            set_status_text(
                src,
                UMEM_INDEX_ERROR,
                &format!("{call}: nbytes out of range of source context"),
            );
            false
        } else if nbytes > dest_size {
            set_status_text(
                dest,
                UMEM_INDEX_ERROR,
                &format!("{call}: nbytes out of range of destination context"),
            );
            false
        } else {
            true
        }
    }
}

/// [`umem_sync_to`] with the sizes of both memories checked first.
///
/// # Safety
/// As [`umem_sync_to`].
#[no_mangle]
pub unsafe extern "C" fn umem_sync_to_safe(
    src_ctx: *mut c_void,
    src_adr: usize,
    src_size: usize,
    dest_ctx: *mut c_void,
    dest_adr: usize,
    dest_size: usize,
    nbytes: usize,
) {
    // SAFETY: the caller's contract.
    unsafe {
        if null(src_ctx, dest_ctx, c"umem_sync_to_safe") {
            return;
        }
        let (src, dest): (Ctx, Ctx) = (src_ctx.cast(), dest_ctx.cast());
        if src_adr == dest_adr && are_accessible(src, dest) {
            return;
        }
        if fits("umem_copy_to_safe", src, src_size, dest, dest_size, nbytes) {
            dispatch::copy_to(src, src_adr, dest, dest_adr, nbytes);
        }
    }
}

/// [`umem_sync_from`] with the sizes of both memories checked first.
///
/// # Safety
/// As [`umem_sync_from`].
#[no_mangle]
pub unsafe extern "C" fn umem_sync_from_safe(
    dest_ctx: *mut c_void,
    dest_adr: usize,
    dest_size: usize,
    src_ctx: *mut c_void,
    src_adr: usize,
    src_size: usize,
    nbytes: usize,
) {
    // SAFETY: the caller's contract.
    unsafe {
        if null(src_ctx, dest_ctx, c"umem_sync_from_safe") {
            return;
        }
        let (src, dest): (Ctx, Ctx) = (src_ctx.cast(), dest_ctx.cast());
        if src_adr == dest_adr && are_accessible(dest, src) {
            return;
        }
        if fits(
            "umem_copy_from_safe",
            src,
            src_size,
            dest,
            dest_size,
            nbytes,
        ) {
            dispatch::copy_from(dest, dest_adr, src, src_adr, nbytes);
        }
    }
}

/// Ends a connection: frees `dest_adr` unless it is `src_adr` itself (umem's
/// `umem_disconnect`).
///
/// # Safety
/// Both contexts are constructed; the addresses are the connection's.
#[no_mangle]
pub unsafe extern "C" fn umem_disconnect(
    src_ctx: *mut c_void,
    src_adr: usize,
    dest_ctx: *mut c_void,
    dest_adr: usize,
    dest_alignment: usize,
) {
    // SAFETY: the caller's contract.
    unsafe {
        if null(src_ctx, dest_ctx, c"umem_disconnect") {
            return;
        }
        let (src, dest): (Ctx, Ctx) = (src_ctx.cast(), dest_ctx.cast());
        if are_accessible(src, dest) {
            if src_adr == dest_adr {
                super::addresses::disconnect(src_adr);
                return;
            }
            if dest_alignment != 0 {
                dispatch::aligned_free(dest, dest_adr);
            } else {
                dispatch::free(dest, dest_adr);
            }
        } else if dest_alignment != 0 {
            // umem frees with `umem_free` here, which leaks the aligned block's origin
            // (and, over locus, is not the allocation's start): free what was allocated.
            dispatch::aligned_free(dest, dest_adr);
        } else {
            dispatch::free(dest, dest_adr);
        }
    }
}
