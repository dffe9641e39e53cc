//! umem's `umemHost`: the C library's `malloc` / `calloc` / `free`, addresses that are
//! host pointers. Copies to and from other contexts are left to the other context (umem's
//! rule); a host context reaches memory of a locus location in place where locus says
//! host code does, and the other way round.

use std::ffi::c_int;

use super::virtual_context::dispatch;
use super::*;

/// Sets `ctx`'s status to a host failure.
unsafe fn host_error(ctx: Ctx, message: String) {
    // SAFETY: umem calls a method with its own context.
    unsafe { set_status_text(ctx, UMEM_MEMORY_ERROR, &message) }
}

unsafe extern "C" fn dtor(ctx: Ctx) {
    // SAFETY: umem calls a method with its own, constructed context; a host context's
    // `host_ctx` is itself and is not destroyed twice.
    unsafe {
        (*ctx).host_ctx = std::ptr::null_mut();
        umemVirtual_dtor(ctx);
    }
}

unsafe extern "C" fn alloc(ctx: Ctx, nbytes: usize) -> usize {
    if nbytes == 0 {
        return 0;
    }
    // SAFETY: C's malloc.
    let adr = unsafe { libc::malloc(nbytes) } as usize;
    if adr == 0 {
        // SAFETY: umem calls a method with its own context.
        unsafe { host_error(ctx, format!("umemHost_alloc_: malloc({nbytes})->NULL")) };
    }
    adr
}

unsafe extern "C" fn calloc(ctx: Ctx, nmemb: usize, size: usize) -> usize {
    if size == 0 {
        return 0;
    }
    // SAFETY: C's calloc (which checks the product for overflow).
    let adr = unsafe { libc::calloc(nmemb, size) } as usize;
    if adr == 0 {
        // SAFETY: umem calls a method with its own context.
        unsafe {
            host_error(
                ctx,
                format!("umemHost_alloc_: calloc({nmemb}, {size})->NULL"),
            )
        };
    }
    adr
}

unsafe extern "C" fn free(_ctx: Ctx, adr: usize) {
    // SAFETY: `adr` came from this context's malloc / calloc, or is 0 (umem's contract).
    unsafe { libc::free(adr as *mut libc::c_void) }
}

unsafe extern "C" fn aligned_alloc(ctx: Ctx, alignment: usize, size: usize) -> usize {
    let word = std::mem::size_of::<usize>();
    let Some(req) = super::virtual_context::aligned_request(alignment, size) else {
        // SAFETY: umem calls a method with its own context.
        unsafe {
            host_error(
                ctx,
                format!(
                    "umem_aligned_alloc: {size} bytes aligned to {alignment} overflow a size_t"
                ),
            )
        };
        return 0;
    };
    // SAFETY: umem calls a method with its own context; the origin word lies inside the
    // new allocation (`extra` bytes precede the aligned address).
    unsafe {
        let adr = calloc(ctx, req, 1);
        if !is_ok(ctx) {
            return 0;
        }
        let extra = alignment - 1 + word;
        let aligned = (adr + extra) - ((adr + extra) % alignment);
        ((aligned - word) as *mut usize).write_unaligned(adr);
        aligned
    }
}

unsafe extern "C" fn aligned_origin(_ctx: Ctx, aligned_adr: usize) -> usize {
    if aligned_adr == 0 {
        return 0;
    }
    // SAFETY: `aligned_adr` came from this context's aligned_alloc (umem's contract), so
    // the word before it holds the origin.
    unsafe { ((aligned_adr - std::mem::size_of::<usize>()) as *const usize).read_unaligned() }
}

unsafe extern "C" fn aligned_free(ctx: Ctx, aligned_adr: usize) {
    // SAFETY: as `aligned_origin` and `free`.
    unsafe { free(ctx, aligned_origin(ctx, aligned_adr)) }
}

unsafe extern "C" fn set(_ctx: Ctx, adr: usize, c: c_int, nbytes: usize) {
    if nbytes == 0 {
        return;
    }
    // SAFETY: `adr` holds `nbytes` writable bytes (umem's contract).
    unsafe { libc::memset(adr as *mut libc::c_void, c, nbytes) };
}

unsafe extern "C" fn copy_to(src: Ctx, src_adr: usize, dest: Ctx, dest_adr: usize, n: usize) {
    // SAFETY: constructed contexts with their own addresses (umem's contract).
    unsafe {
        if kind(dest) == UMEM_HOST_DEVICE {
            if n > 0 {
                libc::memmove(
                    dest_adr as *mut libc::c_void,
                    src_adr as *const libc::c_void,
                    n,
                );
            }
        } else {
            dispatch::copy_from(dest, dest_adr, src, src_adr, n);
        }
    }
}

unsafe extern "C" fn copy_from(dest: Ctx, dest_adr: usize, src: Ctx, src_adr: usize, n: usize) {
    // SAFETY: constructed contexts with their own addresses (umem's contract).
    unsafe {
        if kind(src) == UMEM_HOST_DEVICE {
            copy_to(src, src_adr, dest, dest_adr, n);
        } else {
            dispatch::copy_to(src, src_adr, dest, dest_adr, n);
        }
    }
}

unsafe extern "C" fn is_accessible_from(_src: Ctx, dest: Ctx) -> bool {
    // SAFETY: a constructed context (umem's contract).
    unsafe {
        match kind(dest) {
            UMEM_HOST_DEVICE => true,
            _ => locus_context::host_memory_reached_by(dest),
        }
    }
}

static HOST_TABLE: UmemVtbl = UmemVtbl {
    dtor,
    is_accessible_from,
    alloc,
    calloc,
    free,
    aligned_alloc,
    aligned_origin,
    aligned_free,
    set,
    copy_to,
    copy_from,
};

/// Constructs a host memory context (umem's `umemHost_ctor`).
///
/// # Safety
/// `ctx` points to a `umemHost` (its old contents are not read).
#[no_mangle]
pub unsafe extern "C" fn umemHost_ctor(ctx: *mut UmemHost) {
    if ctx.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(c"umemHost_ctor".as_ptr()) };
        return;
    }
    // SAFETY: `ctx` points to a `umemHost` the caller owns.
    unsafe {
        umemVirtual_ctor(ctx.cast(), ctx);
        (*ctx).base.kind = UMEM_HOST_DEVICE;
        (*ctx).base.vptr = &HOST_TABLE;
    }
}

/// Copies through a temporary host buffer (umem's `umem_copy_to_via_host`): from `src`
/// into host memory, then from there into `dest`.
///
/// # Safety
/// Both contexts are constructed; the addresses are theirs.
#[no_mangle]
pub unsafe extern "C" fn umem_copy_to_via_host(
    src_ctx: *mut c_void,
    src_adr: usize,
    dest_ctx: *mut c_void,
    dest_adr: usize,
    nbytes: usize,
) {
    let (src, dest): (Ctx, Ctx) = (src_ctx.cast(), dest_ctx.cast());
    if src.is_null() || dest.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(c"umem_copy_to_via_host".as_ptr()) };
        return;
    }
    let mut host = std::mem::MaybeUninit::<UmemHost>::uninit();
    let h: Ctx = host.as_mut_ptr().cast();
    // SAFETY: `host` is constructed before use and destroyed after; the contexts and
    // addresses are the caller's.
    unsafe {
        umemHost_ctor(host.as_mut_ptr());
        let host_adr = dispatch::alloc(h, nbytes);
        if is_ok(h) {
            dispatch::copy_to(src, src_adr, h, host_adr, nbytes);
            if is_ok(src) && is_ok(h) {
                dispatch::copy_from(dest, dest_adr, h, host_adr, nbytes);
            }
            dispatch::free(h, host_adr);
        } else {
            set_status_text(
                src,
                UMEM_MEMORY_ERROR,
                &format!("umem_copy_to_via_host: no host buffer of {nbytes} bytes"),
            );
        }
        dispatch::dtor(h);
    }
}

/// umem's `umem_copy_from_via_host`: the same copy, named from the destination's side.
///
/// # Safety
/// As [`umem_copy_to_via_host`].
#[no_mangle]
pub unsafe extern "C" fn umem_copy_from_via_host(
    dest_ctx: *mut c_void,
    dest_adr: usize,
    src_ctx: *mut c_void,
    src_adr: usize,
    nbytes: usize,
) {
    // SAFETY: forwarded.
    unsafe { umem_copy_to_via_host(src_ctx, src_adr, dest_ctx, dest_adr, nbytes) }
}
