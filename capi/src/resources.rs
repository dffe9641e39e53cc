//! Memory resources in C (RMM's model): a location's upstream, the pool, arena, binning
//! and fixed-size resources over it, the adaptors (limiting, statistics, tracking,
//! logging, a failure callback), each location's default resource, and memory allocated
//! from any of them.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use locus_rs::resource::{
    self, Arena, Binning, FailureCallback, FixedSize, Limiting, Logging, MemoryResource, Pool,
    Statistics, Tracking,
};
use locus_rs::Memory;

use crate::handles::{Handles, LocusMemory, MEMORY};
use crate::native::kind_arg;
use crate::text::{location_arg, out_arg, text_arg, text_out};
use crate::{call, Fail, LocusStatus};

/// A memory resource, made by one of the `locus_resource_*` constructors and freed by
/// `locus_resource_free` (memory allocated from it keeps what it needs alive).
pub struct LocusResource {
    _opaque: [u8; 0],
}

/// A resource and, for the adaptors that count, the adaptor itself.
pub(crate) struct Resource {
    dynamic: Arc<dyn MemoryResource>,
    statistics: Option<Arc<Statistics>>,
    tracking: Option<Arc<Tracking>>,
}

impl Resource {
    fn plain(dynamic: Arc<dyn MemoryResource>) -> Resource {
        Resource {
            dynamic,
            statistics: None,
            tracking: None,
        }
    }
}

pub(crate) static RESOURCES: Handles<Resource> =
    Handles::new("locus resource handle", "a locus_resource_* constructor");

/// The resource behind a handle.
fn get(handle: *const LocusResource, what: &str) -> Result<Arc<dyn MemoryResource>, Fail> {
    Ok(Arc::clone(&RESOURCES.get(handle, what)?.dynamic))
}

/// Stores a new resource's handle in `*out`.
unsafe fn made(out: *mut *mut LocusResource, resource: Resource) -> Result<(), Fail> {
    *out_arg(out, "out")? = RESOURCES.insert(resource);
    Ok(())
}

/// The resource memory at `location` is allocated from now (its upstream unless
/// replaced with `locus_resource_set_default`), into `*out`.
///
/// # Safety
/// `location` is NULL or NUL-terminated; `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_default(
    location: *const c_char,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_default", || {
        let at = location_arg(location, "location")?;
        // SAFETY: `out` as the header says.
        unsafe { made(out, Resource::plain(resource::default_for(at)?)) }
    })
}

/// Makes `resource` the default of its location (buffers and `locus_memory_new` there
/// allocate from it); refused when it allocates elsewhere.
///
/// # Safety
/// `location` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_set_default(
    location: *const c_char,
    resource: *const LocusResource,
) -> LocusStatus {
    call("locus_resource_set_default", || {
        let at = location_arg(location, "location")?;
        resource::set_default(at, get(resource, "resource")?)?;
        Ok(())
    })
}

/// The location's own allocator for memory of `kind` (a `LocusMemoryKind`), into `*out`.
///
/// # Safety
/// As [`locus_resource_default`].
#[no_mangle]
pub unsafe extern "C" fn locus_resource_upstream(
    location: *const c_char,
    kind: i32,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_upstream", || {
        let at = location_arg(location, "location")?;
        let r = resource::upstream_of_kind(at, kind_arg(kind)?)?;
        // SAFETY: `out` as the header says.
        unsafe { made(out, Resource::plain(r)) }
    })
}

/// A pool over `upstream` (RMM's `pool_memory_resource`): `initial` bytes taken at once,
/// growing to at most `maximum` (0: no limit), blocks coalesced when freed.
///
/// # Safety
/// `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_pool(
    upstream: *const LocusResource,
    initial: usize,
    maximum: usize,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_pool", || {
        let up = get(upstream, "upstream")?;
        let maximum = if maximum == 0 { usize::MAX } else { maximum };
        // SAFETY: `out` as the header says.
        unsafe {
            made(
                out,
                Resource::plain(Arc::new(Pool::new(up, initial, maximum))),
            )
        }
    })
}

/// An arena over `upstream` (RMM's `arena_memory_resource`): per-thread arenas taking
/// `superblock` bytes at a time.
///
/// # Safety
/// `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_arena(
    upstream: *const LocusResource,
    superblock: usize,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_arena", || {
        let up = get(upstream, "upstream")?;
        // SAFETY: `out` as the header says.
        unsafe { made(out, Resource::plain(Arc::new(Arena::new(up, superblock)))) }
    })
}

/// Bins for sizes `smallest`, 2x, ... up to `largest` over `upstream`, `per_chunk`
/// blocks at a time; larger requests go to `fallback` (RMM's
/// `binning_memory_resource`).
///
/// # Safety
/// `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_binning(
    upstream: *const LocusResource,
    fallback: *const LocusResource,
    smallest: usize,
    largest: usize,
    per_chunk: usize,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_binning", || {
        let (up, fb) = (get(upstream, "upstream")?, get(fallback, "fallback")?);
        let r = Binning::new(up, fb, smallest, largest, per_chunk)?;
        // SAFETY: `out` as the header says.
        unsafe { made(out, Resource::plain(Arc::new(r))) }
    })
}

/// Blocks of `block` bytes over `upstream`, `per_chunk` per upstream allocation (RMM's
/// `fixed_size_memory_resource`).
///
/// # Safety
/// `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_fixed_size(
    upstream: *const LocusResource,
    block: usize,
    per_chunk: usize,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_fixed_size", || {
        let r = FixedSize::new(get(upstream, "upstream")?, block, per_chunk)?;
        // SAFETY: `out` as the header says.
        unsafe { made(out, Resource::plain(Arc::new(r))) }
    })
}

/// `inner` with at most `budget` bytes allocated at once (RMM's `limiting_resource_adaptor`).
///
/// # Safety
/// `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_limiting(
    inner: *const LocusResource,
    budget: usize,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_limiting", || {
        let r = Limiting::new(get(inner, "inner")?, budget);
        // SAFETY: `out` as the header says.
        unsafe { made(out, Resource::plain(Arc::new(r))) }
    })
}

/// `inner`, counting bytes and allocations (RMM's `statistics_resource_adaptor`); read
/// them with `locus_resource_statistics_totals`.
///
/// # Safety
/// `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_statistics(
    inner: *const LocusResource,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_statistics", || {
        let s = Arc::new(Statistics::new(get(inner, "inner")?));
        let r = Resource {
            dynamic: s.clone(),
            statistics: Some(s),
            tracking: None,
        };
        // SAFETY: `out` as the header says.
        unsafe { made(out, r) }
    })
}

/// Counts of a statistics adaptor (RMM's `bytes_counter` / `allocations_counter`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct LocusStatistics {
    pub current_bytes: usize,
    pub peak_bytes: usize,
    pub total_bytes: usize,
    pub current_count: usize,
    pub peak_count: usize,
    pub total_count: usize,
}

/// The counts of a resource made by `locus_resource_statistics`, into `*totals`.
///
/// # Safety
/// `totals` is NULL or points to a `LocusStatistics`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_statistics_totals(
    resource: *const LocusResource,
    totals: *mut LocusStatistics,
) -> LocusStatus {
    call("locus_resource_statistics_totals", || {
        let r = RESOURCES.get(resource, "resource")?;
        let s = r.statistics.as_ref().ok_or_else(|| {
            Fail::new(
                LocusStatus::LocusErrorInvalid,
                "the resource is not a statistics adaptor (locus_resource_statistics)",
            )
        })?;
        let t = s.totals();
        *out_arg(totals, "totals")? = LocusStatistics {
            current_bytes: t.current_bytes,
            peak_bytes: t.peak_bytes,
            total_bytes: t.total_bytes,
            current_count: t.current_count,
            peak_count: t.peak_count,
            total_count: t.total_count,
        };
        Ok(())
    })
}

/// `inner`, keeping a record of every live allocation (RMM's
/// `tracking_resource_adaptor`); `locus_resource_outstanding` counts them.
///
/// # Safety
/// `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_tracking(
    inner: *const LocusResource,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_tracking", || {
        let t = Arc::new(Tracking::new(get(inner, "inner")?));
        let r = Resource {
            dynamic: t.clone(),
            statistics: None,
            tracking: Some(t),
        };
        // SAFETY: `out` as the header says.
        unsafe { made(out, r) }
    })
}

/// How many allocations of a tracking adaptor are live, and their bytes.
///
/// # Safety
/// `count` and `bytes` are NULL or point to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_outstanding(
    resource: *const LocusResource,
    count: *mut usize,
    bytes: *mut usize,
) -> LocusStatus {
    call("locus_resource_outstanding", || {
        let r = RESOURCES.get(resource, "resource")?;
        let t = r.tracking.as_ref().ok_or_else(|| {
            Fail::new(
                LocusStatus::LocusErrorInvalid,
                "the resource is not a tracking adaptor (locus_resource_tracking)",
            )
        })?;
        let leaks = t.leaks();
        let (c, b) = (out_arg(count, "count")?, out_arg(bytes, "bytes")?);
        *c = leaks.len();
        *b = leaks.iter().map(|(n, _)| n).sum();
        Ok(())
    })
}

/// `inner`, writing a CSV line per allocation and free to the file at `path` (RMM's
/// `logging_resource_adaptor`, its columns).
///
/// # Safety
/// `path` is NULL or NUL-terminated; `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_logging(
    inner: *const LocusResource,
    path: *const c_char,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_logging", || {
        let path = text_arg(path, "path")?;
        let r = Logging::to_file(get(inner, "inner")?, path)?;
        // SAFETY: `out` as the header says.
        unsafe { made(out, Resource::plain(Arc::new(r))) }
    })
}

/// A C callback of `locus_resource_failure_callback` and its data.
struct Callback {
    f: extern "C" fn(usize, *mut c_void) -> bool,
    data: *mut c_void,
}
impl Callback {
    fn call(&self, bytes: usize) -> bool {
        (self.f)(bytes, self.data)
    }
}

// SAFETY: the header asks of the callback and its data that they may be called from any
// thread (allocations fail on the thread that allocates).
unsafe impl Send for Callback {}
// SAFETY: as above.
unsafe impl Sync for Callback {}

/// `inner`, calling `callback(bytes, data)` when an allocation fails; when it returns
/// true the allocation is tried again, up to `retries` times (RMM's
/// `failure_callback_resource_adaptor`). The callback may run on any thread that
/// allocates, and must not unwind (C++ exceptions) into locus.
///
/// # Safety
/// `callback` is a valid function for the resource's lifetime; `data` is what it
/// expects; `out` is NULL or points to a `LocusResource *`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_failure_callback(
    inner: *const LocusResource,
    retries: usize,
    callback: Option<extern "C" fn(usize, *mut c_void) -> bool>,
    data: *mut c_void,
    out: *mut *mut LocusResource,
) -> LocusStatus {
    call("locus_resource_failure_callback", || {
        let f =
            callback.ok_or_else(|| Fail::new(LocusStatus::LocusErrorNull, "callback is NULL"))?;
        let cb = Callback { f, data };
        let r = FailureCallback::new(get(inner, "inner")?, retries, move |bytes| cb.call(bytes));
        // SAFETY: `out` as the header says.
        unsafe { made(out, Resource::plain(Arc::new(r))) }
    })
}

/// The location a resource allocates at, into `buf` (see `LOCUS_ERROR_BUFFER_TOO_SMALL`).
///
/// # Safety
/// `buf` is NULL or holds `capacity` bytes; `needed` is NULL or points to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn locus_resource_location(
    resource: *const LocusResource,
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> LocusStatus {
    call("locus_resource_location", || {
        text_out(
            &get(resource, "resource")?.location().to_string(),
            buf,
            capacity,
            needed,
        )
    })
}

/// Allocates `bytes` from `resource` into `*out` (free with `locus_memory_free`: the
/// block goes back to the resource).
///
/// # Safety
/// `out` is NULL or points to a `LocusMemory *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_from_resource(
    resource: *const LocusResource,
    bytes: usize,
    out: *mut *mut LocusMemory,
) -> LocusStatus {
    call("locus_memory_from_resource", || {
        let r = get(resource, "resource")?;
        let out = out_arg(out, "out")?;
        *out = MEMORY.insert(Memory::from_resource(&r, bytes)?);
        Ok(())
    })
}

/// Frees a resource handle (memory allocated from it stays valid). NULL does nothing.
#[no_mangle]
pub extern "C" fn locus_resource_free(resource: *mut LocusResource) -> LocusStatus {
    call("locus_resource_free", || {
        RESOURCES.remove(resource, "the resource")
    })
}
