//! The contexts whose memory is at a locus location: `umemLocus` (any location by name,
//! `umemLocus_ctor(&ctx, "opencl:0")`) and umem's CUDA contexts over locus's CUDA
//! backend (`umemCuda` is device memory at `cuda:N`, `umemCudaHost` pinned host memory
//! and `umemCudaManaged` managed memory of `cuda:0`). One method table serves them all:
//! memory comes from locus ([`locus_rs::Memory`]), its addresses from [`addresses`],
//! copies between any two of them take locus's transfer matrix, copies to and from host
//! memory go straight to the host pointer, and copies to other contexts (a file) go
//! through a host buffer, as umem's CUDA contexts do.

use std::ffi::{c_char, c_int, c_uint, CStr};
use std::sync::Arc;

use locus_rs::{access::location_accessibility, registry, Error, Location, Memory, MemoryKind};

use super::addresses::{self, Found};
use super::*;

/// Where a locus-backed context's memory lives, and of which kind.
pub(crate) type Backing = (Location, MemoryKind);

/// Whether `ctx`'s memory comes from locus.
///
/// # Safety
/// `ctx` is a constructed context.
pub(crate) unsafe fn is_locus_backed(ctx: Ctx) -> bool {
    // SAFETY: the caller's contract.
    let kind = unsafe { kind(ctx) };
    matches!(
        kind,
        UMEM_LOCUS_DEVICE | UMEM_CUDA_DEVICE | UMEM_CUDA_HOST_DEVICE | UMEM_CUDA_MANAGED_DEVICE
    )
}

/// The location and memory kind of a locus-backed context.
///
/// # Safety
/// `ctx` is a constructed context; its type says its layout.
pub(crate) unsafe fn backing(ctx: Ctx) -> Result<Backing, String> {
    // SAFETY: the caller's contract: the type field says which struct `ctx` is.
    unsafe {
        match kind(ctx) {
            UMEM_LOCUS_DEVICE => {
                let name = &(*ctx.cast::<UmemLocus>()).location;
                let name = CStr::from_bytes_until_nul(std::slice::from_raw_parts(
                    name.as_ptr().cast::<u8>(),
                    name.len(),
                ))
                .map_err(|_| "the context's location name is not NUL-terminated".to_string())?;
                let name = name
                    .to_str()
                    .map_err(|_| "the location name is not UTF-8".to_string())?;
                let location = name.parse::<Location>().map_err(|e| e.to_string())?;
                Ok((location, MemoryKind::Default))
            }
            UMEM_CUDA_DEVICE => {
                let device = (*ctx.cast::<UmemCuda>()).device;
                let device = u32::try_from(device)
                    .map_err(|_| format!("invalid device number: {device}"))?;
                Ok((Location::Cuda(device), MemoryKind::Default))
            }
            UMEM_CUDA_HOST_DEVICE => Ok((Location::Cuda(0), MemoryKind::PinnedHost)),
            UMEM_CUDA_MANAGED_DEVICE => Ok((Location::Cuda(0), MemoryKind::Managed)),
            other => Err(format!("a context of type {other} has no locus location")),
        }
    }
}

/// Whether memory of `from` is used in place by code at `to` (locus's answer).
fn reaches(from: Location, to: Location) -> bool {
    from == to
        || location_accessibility(registry(), from, to)
            .map(|(yes, _)| yes)
            .unwrap_or(false)
}

/// Whether host memory (`malloc`) is used in place by the context `dest` (a host
/// context's `is_accessible_from` asks this of a locus-backed one).
///
/// # Safety
/// `dest` is a constructed context.
pub(crate) unsafe fn host_memory_reached_by(dest: Ctx) -> bool {
    // SAFETY: the caller's contract.
    unsafe {
        is_locus_backed(dest) && backing(dest).is_ok_and(|(to, _)| reaches(Location::Host, to))
    }
}

/// A failure of a locus call, as a umem status and message.
fn status_of(call: &str, e: &Error) -> (UmemStatusType, String) {
    let kind = match e {
        Error::OutOfMemory { .. } | Error::TooLarge { .. } => UMEM_MEMORY_ERROR,
        Error::OutOfRange { .. } | Error::LengthMismatch { .. } => UMEM_INDEX_ERROR,
        Error::UnknownLocation { .. } | Error::Invalid(_) => UMEM_VALUE_ERROR,
        _ => UMEM_RUNTIME_ERROR,
    };
    (kind, format!("{call}: {e}"))
}

/// One end of a copy or a `set`: bytes of locus memory, or host memory at a pointer.
enum End {
    Memory(Arc<Memory>, usize),
    Host(usize),
}

type Failure = (UmemStatusType, String);

/// The end `n` bytes from `adr` of the locus-backed context `ctx` are.
unsafe fn resolve(ctx: Ctx, adr: usize, n: usize, call: &str) -> Result<End, Failure> {
    // SAFETY: the caller's contract.
    let (location, _) =
        unsafe { backing(ctx) }.map_err(|e| (UMEM_VALUE_ERROR, format!("{call}: {e}")))?;
    match addresses::find(location, adr, n) {
        Found::Inside { memory, offset } => Ok(End::Memory(memory, offset)),
        Found::PastTheEnd { start, len } => Err((
            UMEM_INDEX_ERROR,
            format!(
                "{call}: {n} bytes at {adr:#x} run past the end of the {len}-byte allocation at \
                 {start:#x} ({location}); nothing was written"
            ),
        )),
        // Memory this location uses in place, handed over by umem_connect without a
        // copy: another location's memory, or host memory.
        Found::Unknown if adr != 0 => {
            match addresses::find_elsewhere(adr, n, |other| reaches(other, location)) {
                Some((_, Found::Inside { memory, offset })) => Ok(End::Memory(memory, offset)),
                Some((other, Found::PastTheEnd { start, len })) => Err((
                    UMEM_INDEX_ERROR,
                    format!(
                        "{call}: {n} bytes at {adr:#x} run past the end of the {len}-byte \
                         allocation at {start:#x} ({other}); nothing was written"
                    ),
                )),
                // Host memory only inside a live in-place connection: any other
                // address (never allocated, or freed) is refused, not dereferenced.
                _ if reaches(Location::Host, location) && addresses::is_connected(adr, n) => {
                    Ok(End::Host(adr))
                }
                _ => Err(unknown(call, adr, location)),
            }
        }
        Found::Unknown => Err(unknown(call, adr, location)),
    }
}

fn unknown(call: &str, adr: usize, location: Location) -> Failure {
    (
        UMEM_VALUE_ERROR,
        format!(
            "{call}: {adr:#x} is not an address of memory allocated at {location} (by \
             umem_alloc of a context there, nor host memory connected to it by umem_connect \
             and not yet disconnected); nothing was done"
        ),
    )
}

/// Whether memory of `from` is used in place at `to` through umem's addresses: locus
/// says `to` reaches it, and the addresses are pointers (or it is the same location).
fn reaches_by_address(from: Location, to: Location) -> bool {
    from == to || (addresses::are_pointers(from) && reaches(from, to))
}

/// Copies `n` bytes between two ends.
unsafe fn transfer(src: End, dst: End, n: usize, call: &str) -> Result<(), Failure> {
    if n == 0 {
        return Ok(());
    }
    let fail = |e: Error| status_of(call, &e);
    // SAFETY: a host end holds `n` bytes (umem's contract for host addresses).
    unsafe {
        match (src, dst) {
            (End::Memory(s, so), End::Memory(d, doff)) => {
                s.copy_to(so, &d, doff, n).map(drop).map_err(fail)
            }
            (End::Memory(s, so), End::Host(p)) => s
                .read(so, std::slice::from_raw_parts_mut(p as *mut u8, n))
                .map_err(fail),
            (End::Host(p), End::Memory(d, doff)) => d
                .write(doff, std::slice::from_raw_parts(p as *const u8, n))
                .map_err(fail),
            (End::Host(s), End::Host(d)) => {
                libc::memmove(d as *mut libc::c_void, s as *const libc::c_void, n);
                Ok(())
            }
        }
    }
}

/// Runs a method's body with `ctx` holding the failure's status.
unsafe fn run(ctx: Ctx, call: &str, f: impl FnOnce() -> Result<(), Failure>) {
    // SAFETY: the caller's contract.
    unsafe {
        if let Err((kind, message)) = guarded(ctx, call, Ok(()), f) {
            set_status_text(ctx, kind, &message);
        }
    }
}

unsafe extern "C" fn dtor(ctx: Ctx) {
    // SAFETY: umem calls a method with its own, constructed context.
    unsafe { umemVirtual_dtor(ctx) }
}

unsafe extern "C" fn alloc(ctx: Ctx, nbytes: usize) -> usize {
    if nbytes == 0 {
        return 0;
    }
    let mut adr = 0;
    // SAFETY: umem calls a method with its own, constructed context.
    unsafe {
        run(ctx, "umem_alloc", || {
            let (location, kind) =
                backing(ctx).map_err(|e| (UMEM_VALUE_ERROR, format!("umem_alloc: {e}")))?;
            let memory = match kind {
                MemoryKind::Default => locus_rs::resource::default_for(location)
                    .and_then(|r| Memory::from_resource(&r, nbytes)),
                kind => Memory::new_kind(location, kind, nbytes),
            }
            .map_err(|e| status_of("umem_alloc", &e))?;
            adr = addresses::insert(memory);
            Ok(())
        })
    };
    adr
}

unsafe extern "C" fn free(ctx: Ctx, adr: usize) {
    if adr == 0 {
        return;
    }
    // SAFETY: umem calls a method with its own, constructed context.
    unsafe {
        run(ctx, "umem_free", || {
            let (location, _) =
                backing(ctx).map_err(|e| (UMEM_VALUE_ERROR, format!("umem_free: {e}")))?;
            addresses::remove(location, adr).map(drop).ok_or_else(|| {
                (
                    UMEM_VALUE_ERROR,
                    format!(
                        "umem_free: {adr:#x} is not the start of memory allocated at {location} \
                         (freed already, or not from umem_alloc of a context there); nothing \
                         was freed"
                    ),
                )
            })
        })
    }
}

unsafe extern "C" fn set(ctx: Ctx, adr: usize, c: c_int, nbytes: usize) {
    if nbytes == 0 {
        return;
    }
    // SAFETY: umem calls a method with its own, constructed context.
    unsafe {
        run(ctx, "umem_set", || {
            match resolve(ctx, adr, nbytes, "umem_set")? {
                End::Memory(m, offset) => m
                    .fill(offset..offset + nbytes, &[c as u8])
                    .map_err(|e| status_of("umem_set", &e)),
                End::Host(p) => {
                    libc::memset(p as *mut libc::c_void, c, nbytes);
                    Ok(())
                }
            }
        })
    }
}

/// Where `adr` of the context `other` is, for a copy with a locus-backed context.
unsafe fn other_end(other: Ctx, adr: usize, n: usize, call: &str) -> Result<Option<End>, Failure> {
    // SAFETY: the caller's contract.
    unsafe {
        match kind(other) {
            UMEM_HOST_DEVICE => Ok(Some(End::Host(adr))),
            _ if is_locus_backed(other) => resolve(other, adr, n, call).map(Some),
            _ => Ok(None),
        }
    }
}

unsafe extern "C" fn copy_to(src: Ctx, src_adr: usize, dest: Ctx, dest_adr: usize, n: usize) {
    let mut via_host = false;
    // SAFETY: constructed contexts with their own addresses (umem's contract).
    unsafe {
        run(src, "umem_copy_to", || {
            let from = resolve(src, src_adr, n, "umem_copy_to")?;
            match other_end(dest, dest_adr, n, "umem_copy_to")? {
                Some(to) => transfer(from, to, n, "umem_copy_to"),
                None => {
                    via_host = true;
                    Ok(())
                }
            }
        });
        if via_host {
            umem_copy_to_via_host(src.cast(), src_adr, dest.cast(), dest_adr, n);
        }
    }
}

unsafe extern "C" fn copy_from(dest: Ctx, dest_adr: usize, src: Ctx, src_adr: usize, n: usize) {
    let mut via_host = false;
    // SAFETY: constructed contexts with their own addresses (umem's contract).
    unsafe {
        run(dest, "umem_copy_from", || {
            let to = resolve(dest, dest_adr, n, "umem_copy_from")?;
            match other_end(src, src_adr, n, "umem_copy_from")? {
                Some(from) => transfer(from, to, n, "umem_copy_from"),
                None => {
                    via_host = true;
                    Ok(())
                }
            }
        });
        if via_host {
            umem_copy_from_via_host(dest.cast(), dest_adr, src.cast(), src_adr, n);
        }
    }
}

unsafe extern "C" fn is_accessible_from(src: Ctx, dest: Ctx) -> bool {
    // SAFETY: constructed contexts (umem's contract).
    unsafe {
        guarded(src, "umem_is_accessible_from", false, || {
            let Ok((from, kind)) = backing(src) else {
                return false;
            };
            match (kind, self::kind(dest)) {
                // umem's answers for its CUDA kinds.
                (
                    MemoryKind::PinnedHost,
                    UMEM_HOST_DEVICE | UMEM_CUDA_HOST_DEVICE | UMEM_CUDA_DEVICE,
                ) => true,
                (MemoryKind::Managed, UMEM_HOST_DEVICE | UMEM_CUDA_MANAGED_DEVICE) => true,
                (_, UMEM_HOST_DEVICE) => reaches_by_address(from, Location::Host),
                _ if is_locus_backed(dest) => {
                    backing(dest).is_ok_and(|(to, _)| reaches_by_address(from, to))
                }
                _ => false,
            }
        })
    }
}

static LOCATION_TABLE: UmemVtbl = UmemVtbl {
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

/// Constructs the common part of a locus-backed context of type `kind`, then checks its
/// location is available here (a status naming why not, when it is not).
unsafe fn construct(base: Ctx, host: *mut UmemHost, kind: UmemDeviceType, ctor: &str) {
    // SAFETY: `base` and `host` are the caller's context and its host member.
    unsafe {
        umemHost_ctor(host);
        umemVirtual_ctor(base, host);
        (*base).kind = kind;
        (*base).vptr = &LOCATION_TABLE;
        run(base, ctor, || {
            let (location, _) =
                backing(base).map_err(|e| (UMEM_VALUE_ERROR, format!("{ctor}: {e}")))?;
            registry().device(location).map(drop).map_err(|e| {
                let kind = if matches!(e, Error::Unavailable { .. }) {
                    UMEM_RUNTIME_ERROR
                } else {
                    UMEM_VALUE_ERROR
                };
                (kind, format!("{ctor}: {e}"))
            })
        });
    }
}

/// Constructs a context for memory at the locus location `location` (`"host"`,
/// `"openmp:0"`, `"opencl:1"`, `"sycl:0"`, `"webgpu:0"`, `"cuda:0"`, `"hip:0"`). An
/// unknown or unavailable location is a status naming why (check `umem_is_ok`).
///
/// # Safety
/// `ctx` points to a `umemLocus`; `location` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn umemLocus_ctor(ctx: *mut UmemLocus, location: *const c_char) {
    if ctx.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(c"umemLocus_ctor".as_ptr()) };
        return;
    }
    // SAFETY: `ctx` points to a `umemLocus` the caller owns; `location` is NULL or
    // NUL-terminated.
    unsafe {
        (*ctx).location = [0; UMEM_LOCUS_NAME_CAPACITY];
        let name = if location.is_null() {
            &[][..]
        } else {
            CStr::from_ptr(location).to_bytes()
        };
        let fits = name.len() < UMEM_LOCUS_NAME_CAPACITY;
        if fits {
            for (to, from) in (*ctx).location.iter_mut().zip(name) {
                *to = *from as c_char;
            }
        }
        construct(
            ctx.cast(),
            std::ptr::addr_of_mut!((*ctx).host),
            UMEM_LOCUS_DEVICE,
            "umemLocus_ctor",
        );
        if location.is_null() || !fits {
            umem_clear_status(ctx.cast());
            set_status_text(
                ctx.cast(),
                UMEM_VALUE_ERROR,
                &format!(
                    "umemLocus_ctor: the location is {}; name one such as \"host\" or \
                     \"opencl:0\" (`locus info` lists them)",
                    if location.is_null() {
                        "NULL".to_string()
                    } else {
                        format!("{} bytes long", name.len())
                    }
                ),
            );
        }
    }
}

/// Constructs a context for device memory of CUDA device `device` (umem's
/// `umemCuda_ctor`), over locus's `cuda:<device>`.
///
/// # Safety
/// `ctx` points to a `umemCuda`.
#[no_mangle]
pub unsafe extern "C" fn umemCuda_ctor(ctx: *mut UmemCuda, device: c_int) {
    if ctx.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(c"umemCuda_ctor".as_ptr()) };
        return;
    }
    // SAFETY: `ctx` points to a `umemCuda` the caller owns.
    unsafe {
        (*ctx).device = device;
        construct(
            ctx.cast(),
            std::ptr::addr_of_mut!((*ctx).host),
            UMEM_CUDA_DEVICE,
            "umemCuda_ctor",
        );
    }
}

/// Constructs a context for page-locked host memory of CUDA (umem's
/// `umemCudaHost_ctor`), over locus's pinned host memory of `cuda:0`.
///
/// # Safety
/// `ctx` points to a `umemCudaHost`.
#[no_mangle]
pub unsafe extern "C" fn umemCudaHost_ctor(ctx: *mut UmemCudaHost, flags: c_uint) {
    if ctx.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(c"umemCudaHost_ctor".as_ptr()) };
        return;
    }
    // SAFETY: `ctx` points to a `umemCudaHost` the caller owns.
    unsafe {
        (*ctx).flags = flags;
        construct(
            ctx.cast(),
            std::ptr::addr_of_mut!((*ctx).host),
            UMEM_CUDA_HOST_DEVICE,
            "umemCudaHost_ctor",
        );
    }
}

/// Constructs a context for CUDA managed memory (umem's `umemCudaManaged_ctor`), over
/// locus's managed memory of `cuda:0`. `flags`, `async` and `stream` are kept as umem
/// keeps them.
///
/// # Safety
/// `ctx` points to a `umemCudaManaged`.
#[no_mangle]
pub unsafe extern "C" fn umemCudaManaged_ctor(
    ctx: *mut UmemCudaManaged,
    flags: c_uint,
    is_async: bool,
    stream: usize,
) {
    if ctx.is_null() {
        // SAFETY: a static string.
        unsafe { umem_null_context(c"umemCudaManaged_ctor".as_ptr()) };
        return;
    }
    // SAFETY: `ctx` points to a `umemCudaManaged` the caller owns.
    unsafe {
        (*ctx).flags = if flags == 0 { 1 } else { flags };
        (*ctx).is_async = is_async;
        (*ctx).stream = stream;
        construct(
            ctx.cast(),
            std::ptr::addr_of_mut!((*ctx).host),
            UMEM_CUDA_MANAGED_DEVICE,
            "umemCudaManaged_ctor",
        );
    }
}
