//! umem's `umemVirtual`: the base every context starts with, its default methods
//! (`calloc` over `alloc` and `set`; `aligned_alloc` storing the origin address in the
//! word before the aligned one, through the host context), and the tables of a context
//! that has no memory (umem's pure-virtual methods, which assert there; here they set a
//! status) and of a destroyed one.

use std::ffi::{c_int, c_void};

use super::*;

/// Calls `ctx`'s method as umem.h's inline function of that name does.
pub(crate) mod dispatch {
    use super::*;

    /// # Safety
    /// `ctx` is a constructed context.
    pub(crate) unsafe fn alloc(ctx: Ctx, nbytes: usize) -> usize {
        // SAFETY: the caller's contract.
        unsafe { (vtbl(ctx).alloc)(ctx, nbytes) }
    }
    /// # Safety
    /// `ctx` is a constructed context.
    pub(crate) unsafe fn calloc(ctx: Ctx, nmemb: usize, size: usize) -> usize {
        // SAFETY: the caller's contract.
        unsafe { (vtbl(ctx).calloc)(ctx, nmemb, size) }
    }
    /// # Safety
    /// `ctx` is a constructed context.
    pub(crate) unsafe fn free(ctx: Ctx, adr: usize) {
        // SAFETY: the caller's contract.
        unsafe { (vtbl(ctx).free)(ctx, adr) }
    }
    /// # Safety
    /// `ctx` is a constructed context.
    pub(crate) unsafe fn set(ctx: Ctx, adr: usize, c: c_int, nbytes: usize) {
        // SAFETY: the caller's contract.
        unsafe { (vtbl(ctx).set)(ctx, adr, c, nbytes) }
    }
    /// # Safety
    /// Both contexts are constructed; the addresses are theirs.
    pub(crate) unsafe fn copy_to(src: Ctx, src_adr: usize, dest: Ctx, dest_adr: usize, n: usize) {
        // SAFETY: the caller's contract.
        unsafe { (vtbl(src).copy_to)(src, src_adr, dest, dest_adr, n) }
    }
    /// # Safety
    /// Both contexts are constructed; the addresses are theirs.
    pub(crate) unsafe fn copy_from(dest: Ctx, dest_adr: usize, src: Ctx, src_adr: usize, n: usize) {
        // SAFETY: the caller's contract.
        unsafe { (vtbl(dest).copy_from)(dest, dest_adr, src, src_adr, n) }
    }
    /// umem.h's `umem_is_accessible_from`: a context reaches its own memory.
    ///
    /// # Safety
    /// Both contexts are constructed.
    pub(crate) unsafe fn is_accessible_from(src: Ctx, dest: Ctx) -> bool {
        // SAFETY: the caller's contract.
        src == dest || unsafe { (vtbl(src).is_accessible_from)(src, dest) }
    }
    /// # Safety
    /// `ctx` is a constructed context.
    pub(crate) unsafe fn aligned_alloc(ctx: Ctx, alignment: usize, size: usize) -> usize {
        // SAFETY: the caller's contract; umem.h's checks first.
        unsafe {
            if !alignment.is_power_of_two() {
                set_status_text(
                    ctx,
                    UMEM_VALUE_ERROR,
                    &format!("umem_aligned_alloc: alignment {alignment} must be power of 2"),
                );
                return 0;
            }
            if !size.is_multiple_of(alignment) {
                set_status_text(
                    ctx,
                    UMEM_VALUE_ERROR,
                    &format!(
                        "umem_aligned_alloc: size {size} must be multiple of alignment {alignment}"
                    ),
                );
                return 0;
            }
            // umem.h raises the alignment to the context's fundamental one.
            let fundamental = match kind(ctx) {
                UMEM_FILE_DEVICE => 1,
                UMEM_HOST_DEVICE => std::mem::align_of::<libc::max_align_t>(),
                UMEM_CUDA_DEVICE
                | UMEM_CUDA_MANAGED_DEVICE
                | UMEM_RMM_DEVICE
                | UMEM_LOCUS_DEVICE => 256,
                _ => 1,
            };
            (vtbl(ctx).aligned_alloc)(ctx, alignment.max(fundamental), size)
        }
    }
    /// # Safety
    /// `ctx` is a constructed context.
    pub(crate) unsafe fn aligned_free(ctx: Ctx, adr: usize) {
        // SAFETY: the caller's contract.
        unsafe { (vtbl(ctx).aligned_free)(ctx, adr) }
    }
    /// # Safety
    /// `ctx` is a constructed context.
    pub(crate) unsafe fn dtor(ctx: Ctx) {
        // SAFETY: the caller's contract.
        unsafe { (vtbl(ctx).dtor)(ctx) }
    }
}

/// The method table of a context with no memory (a bare `umemVirtual`) or a destroyed
/// one: every method sets a status saying so and does nothing.
macro_rules! refusing_table {
    ($name:ident, $why:expr) => {
        pub(crate) static $name: UmemVtbl = {
            unsafe fn say(ctx: Ctx, method: &str) {
                // SAFETY: umem calls a method with its own context.
                unsafe { set_status_text(ctx, UMEM_VALUE_ERROR, &format!("{method}: {}", $why)) }
            }
            unsafe extern "C" fn dtor(ctx: Ctx) {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_dtor") }
            }
            unsafe extern "C" fn is_accessible_from(_: Ctx, _: Ctx) -> bool {
                false
            }
            unsafe extern "C" fn alloc(ctx: Ctx, _: usize) -> usize {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_alloc") };
                0
            }
            unsafe extern "C" fn calloc(ctx: Ctx, _: usize, _: usize) -> usize {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_calloc") };
                0
            }
            unsafe extern "C" fn free(ctx: Ctx, _: usize) {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_free") }
            }
            unsafe extern "C" fn aligned_alloc(ctx: Ctx, _: usize, _: usize) -> usize {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_aligned_alloc") };
                0
            }
            unsafe extern "C" fn aligned_origin(ctx: Ctx, _: usize) -> usize {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_aligned_origin") };
                0
            }
            unsafe extern "C" fn aligned_free(ctx: Ctx, _: usize) {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_aligned_free") }
            }
            unsafe extern "C" fn set(ctx: Ctx, _: usize, _: c_int, _: usize) {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_set") }
            }
            unsafe extern "C" fn copy_to(ctx: Ctx, _: usize, _: Ctx, _: usize, _: usize) {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_copy_to") }
            }
            unsafe extern "C" fn copy_from(ctx: Ctx, _: usize, _: Ctx, _: usize, _: usize) {
                // SAFETY: as `say`.
                unsafe { say(ctx, "umem_copy_from") }
            }
            UmemVtbl {
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
            }
        };
    };
}

refusing_table!(
    VIRTUAL_TABLE,
    "a umemVirtual context has no memory of its own; construct a concrete context \
     (umemHost_ctor, umemLocus_ctor, ...)"
);
refusing_table!(
    DESTROYED_TABLE,
    "the context was destroyed by umem_dtor; construct it again before using it"
);

/// Constructs the base of a context (umem's `umemVirtual_ctor`): status OK, no message,
/// `host_ctx` the context used for host buffers.
///
/// # Safety
/// `ctx` points to a `umemVirtual` (its old contents are not read); `host_ctx` is NULL or
/// a constructed host context.
#[no_mangle]
pub unsafe extern "C" fn umemVirtual_ctor(ctx: *mut UmemVirtual, host_ctx: *mut UmemHost) {
    if ctx.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(c"umemVirtual_ctor".as_ptr()) };
        return;
    }
    // SAFETY: `ctx` points to a `umemVirtual` the caller owns (its contract); written
    // whole, not read.
    unsafe {
        ctx.write(UmemVirtual {
            vptr: &VIRTUAL_TABLE,
            kind: UMEM_VIRTUAL_DEVICE,
            status: UmemStatus {
                kind: UMEM_OK,
                message: std::ptr::null_mut(),
            },
            host_ctx: host_ctx.cast(),
        })
    };
}

/// Destroys the base of a context (umem's `umemVirtual_dtor`): frees the status message,
/// destroys the host context. The context is then marked destroyed: a later call with it
/// (a second `umem_dtor` among them) is a status, not a crash.
///
/// # Safety
/// `ctx` is a constructed context.
#[no_mangle]
pub unsafe extern "C" fn umemVirtual_dtor(ctx: *mut UmemVirtual) {
    if ctx.is_null() {
        return;
    }
    // SAFETY: a constructed context (the caller's contract); its host context, when set,
    // is constructed too.
    unsafe {
        umem_clear_status(ctx.cast());
        let host = (*ctx).host_ctx.cast::<UmemVirtual>();
        (*ctx).host_ctx = std::ptr::null_mut();
        if !host.is_null() && host != ctx {
            dispatch::dtor(host);
        }
        (*ctx).vptr = &DESTROYED_TABLE;
    }
}

/// umem's default: a context's memory is reachable from no other context.
#[no_mangle]
pub extern "C" fn umemVirtual_is_accessible_from(
    _src: *mut UmemVirtual,
    _dest: *mut UmemVirtual,
) -> bool {
    false
}

/// umem's default `calloc`: `alloc` then `set` to zero; nothing when `size` is 0. A
/// product that overflows is a `umemMemoryError`.
///
/// # Safety
/// `ctx` is a constructed context.
#[no_mangle]
pub unsafe extern "C" fn umemVirtual_calloc(
    ctx: *mut UmemVirtual,
    nmemb: usize,
    size: usize,
) -> usize {
    if size == 0 {
        return 0;
    }
    let Some(nbytes) = nmemb.checked_mul(size) else {
        // SAFETY: a constructed context (the caller's contract).
        unsafe {
            set_status_text(
                ctx,
                UMEM_MEMORY_ERROR,
                &format!("umem_calloc: {nmemb} members of {size} bytes overflow a size_t"),
            )
        };
        return 0;
    };
    // SAFETY: a constructed context (the caller's contract).
    unsafe {
        let adr = dispatch::alloc(ctx, nbytes);
        if is_ok(ctx) {
            dispatch::set(ctx, adr, 0, nbytes);
        }
        adr
    }
}

/// The bytes umem's `aligned_alloc` asks for: `alignment - 1` to find an aligned address,
/// a word before it for the origin, then `size` (at least 1); `None` when that overflows.
pub(crate) fn aligned_request(alignment: usize, size: usize) -> Option<usize> {
    (alignment - 1)
        .checked_add(std::mem::size_of::<usize>())
        .and_then(|extra| extra.checked_add(size.max(1)))
}

/// umem's default `aligned_alloc`: a zeroed allocation `alignment - 1 + sizeof(uintptr_t)`
/// bytes larger, the aligned address inside it, and the allocation's address stored in
/// the word before the aligned one (written through the host context).
///
/// # Safety
/// `ctx` is a constructed context whose `host_ctx` is a constructed host context;
/// `alignment` is a power of two.
#[no_mangle]
pub unsafe extern "C" fn umemVirtual_aligned_alloc(
    ctx: *mut UmemVirtual,
    alignment: usize,
    size: usize,
) -> usize {
    let word = std::mem::size_of::<usize>();
    let Some(req) = aligned_request(alignment, size) else {
        // SAFETY: a constructed context (the caller's contract).
        unsafe {
            set_status_text(
                ctx,
                UMEM_MEMORY_ERROR,
                &format!(
                    "umem_aligned_alloc: {size} bytes aligned to {alignment} overflow a size_t"
                ),
            )
        };
        return 0;
    };
    // SAFETY: a constructed context with a host context (the caller's contract); the
    // origin word lies inside the allocation (`extra` bytes precede the aligned address).
    unsafe {
        let adr = dispatch::calloc(ctx, req, 1);
        if !is_ok(ctx) {
            return 0;
        }
        let extra = alignment - 1 + word;
        let aligned = (adr + extra) - ((adr + extra) % alignment);
        let origin = adr;
        dispatch::copy_to(
            (*ctx).host_ctx.cast(),
            std::ptr::addr_of!(origin) as usize,
            ctx,
            aligned - word,
            word,
        );
        if is_ok(ctx) {
            return aligned;
        }
        dispatch::free(ctx, adr);
        0
    }
}

/// umem's default `aligned_origin`: the allocation an aligned address was carved from,
/// read from the word before it; 0 for 0.
///
/// # Safety
/// `ctx` is a constructed context whose `host_ctx` is a constructed host context.
#[no_mangle]
pub unsafe extern "C" fn umemVirtual_aligned_origin(
    ctx: *mut UmemVirtual,
    aligned_adr: usize,
) -> usize {
    if aligned_adr == 0 {
        return 0;
    }
    let word = std::mem::size_of::<usize>();
    let Some(at) = aligned_adr.checked_sub(word) else {
        // SAFETY: a constructed context (the caller's contract).
        unsafe {
            set_status_text(
                ctx,
                UMEM_VALUE_ERROR,
                &format!("umem_aligned_origin: {aligned_adr:#x} is not an aligned address"),
            )
        };
        return 0;
    };
    let mut origin: usize = 0;
    // SAFETY: a constructed context with a host context (the caller's contract); the
    // destination is this function's own word.
    unsafe {
        dispatch::copy_from(
            (*ctx).host_ctx.cast(),
            std::ptr::addr_of_mut!(origin) as usize,
            ctx,
            at,
            word,
        );
        if !is_ok(ctx) {
            return 0;
        }
    }
    origin
}

/// umem's default `aligned_free`: frees the allocation an aligned address was carved from.
///
/// # Safety
/// `ctx` is a constructed context whose `host_ctx` is a constructed host context.
#[no_mangle]
pub unsafe extern "C" fn umemVirtual_aligned_free(ctx: *mut UmemVirtual, aligned_adr: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        let origin = umemVirtual_aligned_origin(ctx, aligned_adr);
        if is_ok(ctx) {
            dispatch::free(ctx, origin);
        }
    }
}

/// Whether two contexts name the same device: the same type and the same device number,
/// location or file (a helper of umem's older API, kept for its users).
///
/// # Safety
/// Both are NULL or constructed contexts.
#[no_mangle]
pub unsafe extern "C" fn umem_is_same_device(one: *mut c_void, other: *mut c_void) -> bool {
    let (a, b): (Ctx, Ctx) = (one.cast(), other.cast());
    if a.is_null() || b.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(c"umem_is_same_device".as_ptr()) };
        return false;
    }
    if a == b {
        return true;
    }
    // SAFETY: constructed contexts (the caller's contract): their type says their layout.
    unsafe {
        if kind(a) != kind(b) {
            return false;
        }
        match kind(a) {
            UMEM_HOST_DEVICE => true,
            UMEM_FILE_DEVICE => file::same_file(a, b),
            _ => match (locus_context::backing(a), locus_context::backing(b)) {
                (Ok(x), Ok(y)) => x == y,
                _ => false,
            },
        }
    }
}
