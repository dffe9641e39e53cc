//! Asynchronous copies, queues and events in C: a copy that returns at once with an event
//! (on a queue, after everything submitted there before), waits, and the runtime's own
//! event for a C program's device-side wait.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

use locus_rs::{AdoptedQueue, Event, Queue};

use crate::handles::{Handles, LocusMemory, MEMORY};
use crate::text::out_arg;
use crate::{call, LocusStatus};

/// An ordered stream of work (locus's `Queue`): work submitted on it runs after the work
/// submitted on it before. Made by `locus_queue_new`, freed by `locus_queue_free`.
pub struct LocusQueue {
    _opaque: [u8; 0],
}

/// The completion of asynchronous work, made by `locus_memory_copy_async` and freed by
/// `locus_event_free` (freeing does not wait: the work finishes on its own, and the
/// memory it uses stays alive until then).
pub struct LocusEvent {
    _opaque: [u8; 0],
}

pub(crate) static QUEUES: Handles<Queue> = Handles::new("locus queue handle", "locus_queue_new");
pub(crate) static EVENTS: Handles<Event> =
    Handles::new("locus event handle", "locus_memory_copy_async");

/// Which runtime a [`LocusNativeEvent`] belongs to.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocusNativeEventKind {
    /// The work has no event of a runtime (it ran on a locus thread, or is done):
    /// wait with `locus_event_wait`.
    LocusEventNone = 0,
    /// `handle` is a `cl_event`.
    LocusEventOpencl = 1,
    /// `handle` is a `DPCTLSyclEventRef` (a `sycl::event *`).
    LocusEventSycl = 2,
    /// `handle` is a `CUevent` recorded on device `device`'s stream.
    LocusEventCuda = 3,
    /// `handle` is a `hipEvent_t` recorded on device `device`'s stream.
    LocusEventHip = 4,
}

/// The runtime's own event of asynchronous work, for a wait on the device
/// (`cuStreamWaitEvent`, an OpenCL wait list, SYCL's `depends_on`, ...). Owned by the
/// `LocusEvent`: valid while it is, never released by C.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LocusNativeEvent {
    pub kind: LocusNativeEventKind,
    pub handle: *mut c_void,
    pub device: u32,
}

/// Makes a new queue, into `*out`.
///
/// # Safety
/// `out` is NULL or points to a `LocusQueue *`.
#[no_mangle]
pub unsafe extern "C" fn locus_queue_new(out: *mut *mut LocusQueue) -> LocusStatus {
    call("locus_queue_new", || {
        *out_arg(out, "out")? = QUEUES.insert(Queue::new());
        Ok(())
    })
}

/// The adoptions behind C queue handles (`locus_queue_from_native`), by queue id; let
/// go by `locus_queue_free`.
pub(crate) fn adoptions() -> &'static Mutex<HashMap<u64, AdoptedQueue>> {
    static ADOPTIONS: OnceLock<Mutex<HashMap<u64, AdoptedQueue>>> = OnceLock::new();
    ADOPTIONS.get_or_init(Mutex::default)
}

/// Lets go of the adoption behind `queue`, if any (its native queue is never destroyed).
fn forget_adoption(queue: Queue) {
    let taken = adoptions()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&queue.id());
    drop(taken);
}

/// Frees a queue (work on it goes on; an adopted native queue is let go, never
/// destroyed). NULL does nothing.
#[no_mangle]
pub extern "C" fn locus_queue_free(queue: *mut LocusQueue) -> LocusStatus {
    call("locus_queue_free", || {
        if queue.is_null() {
            return Ok(());
        }
        let taken = QUEUES.take(queue, "the queue")?;
        forget_adoption(*taken);
        Ok(())
    })
}

/// Waits for everything submitted on the queue so far; the first failure among it is the
/// status.
#[no_mangle]
pub extern "C" fn locus_queue_wait(queue: *const LocusQueue) -> LocusStatus {
    call("locus_queue_wait", || {
        Ok(QUEUES.get(queue, "queue")?.wait()?)
    })
}

/// Starts a copy of `len` bytes from `src` at `src_offset` to `dst` at `dst_offset` and
/// returns at once; the event of its completion goes into `*event` (NULL: no event; the
/// copy still completes). On `queue` (NULL: none) it runs after the work submitted there
/// before. Both ranges are checked first; nothing starts when either is out of range.
/// Do not touch the destination range before the event completes.
///
/// # Safety
/// `event` is NULL or points to a `LocusEvent *`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_copy_async(
    src: *const LocusMemory,
    src_offset: usize,
    dst: *const LocusMemory,
    dst_offset: usize,
    len: usize,
    queue: *const LocusQueue,
    event: *mut *mut LocusEvent,
) -> LocusStatus {
    call("locus_memory_copy_async", || {
        let (s, d) = (MEMORY.get(src, "src")?, MEMORY.get(dst, "dst")?);
        let queue = if queue.is_null() {
            None
        } else {
            Some(*QUEUES.get(queue, "queue")?)
        };
        let out = if event.is_null() {
            None
        } else {
            Some(out_arg(event, "event")?)
        };
        let done = match queue {
            Some(q) => s.copy_to_async_on(q, src_offset, &d, dst_offset, len, &[])?,
            None => s.copy_to_async(src_offset, &d, dst_offset, len, &[])?,
        };
        if let Some(out) = out {
            *out = EVENTS.insert(done);
        }
        Ok(())
    })
}

/// Waits for the work; its failure, if it failed, is the status.
#[no_mangle]
pub extern "C" fn locus_event_wait(event: *const LocusEvent) -> LocusStatus {
    call("locus_event_wait", || {
        Ok(EVENTS.get(event, "event")?.wait()?)
    })
}

/// Whether the work has completed (successfully or not), into `*done`, without waiting.
///
/// # Safety
/// `done` is NULL or points to a `bool`.
#[no_mangle]
pub unsafe extern "C" fn locus_event_is_complete(
    event: *const LocusEvent,
    done: *mut bool,
) -> LocusStatus {
    call("locus_event_is_complete", || {
        let e = EVENTS.get(event, "event")?;
        *out_arg(done, "done")? = e.is_complete();
        Ok(())
    })
}

/// The runtime's own event of the work, into `*native` (`LOCUS_EVENT_NONE` when it has
/// none).
///
/// # Safety
/// `native` is NULL or points to a `LocusNativeEvent`.
#[no_mangle]
pub unsafe extern "C" fn locus_event_native(
    event: *const LocusEvent,
    native: *mut LocusNativeEvent,
) -> LocusStatus {
    call("locus_event_native", || {
        use locus_rs::NativeEvent;
        let e = EVENTS.get(event, "event")?;
        let out = out_arg(native, "native")?;
        let (kind, handle, device) = match e.native_event() {
            None => (
                LocusNativeEventKind::LocusEventNone,
                std::ptr::null_mut(),
                0,
            ),
            Some(NativeEvent::OpenCl(h)) => (LocusNativeEventKind::LocusEventOpencl, h, 0),
            Some(NativeEvent::Sycl(h)) => (LocusNativeEventKind::LocusEventSycl, h, 0),
            Some(NativeEvent::Cuda { event, ordinal }) => (
                LocusNativeEventKind::LocusEventCuda,
                std::ptr::without_provenance_mut(event as usize),
                ordinal,
            ),
            Some(NativeEvent::Hip { event, ordinal }) => (
                LocusNativeEventKind::LocusEventHip,
                std::ptr::without_provenance_mut(event as usize),
                ordinal,
            ),
            // A runtime added to locus after this C API was written.
            Some(_) => (
                LocusNativeEventKind::LocusEventNone,
                std::ptr::null_mut(),
                0,
            ),
        };
        *out = LocusNativeEvent {
            kind,
            handle,
            device,
        };
        Ok(())
    })
}

/// A function locus calls once work is done, with the pointer it was given and the
/// work's status (`LOCUS_OK`, or why it failed).
pub type LocusEventCallback = Option<unsafe extern "C" fn(data: *mut c_void, status: LocusStatus)>;

/// The caller's pointer, carried to the thread that calls back.
struct CallbackData(*mut c_void);

// SAFETY: locus never dereferences it; the caller's contract makes it usable from the
// thread that calls back.
unsafe impl Send for CallbackData {}

/// Calls `done(data, status)` once the work is done: at once, on this thread, when it
/// already is; otherwise on a locus thread (this call never blocks). For code that must
/// start after locus's work with no host wait of its own: `omp_fulfill_event` of an
/// OpenMP detached task (examples/c/openmp_target.c), an OpenCL user event. The event
/// handle may be freed meanwhile.
///
/// # Safety
/// `done` is safe to call once, from any thread, with `data`; it must not unwind.
#[no_mangle]
pub unsafe extern "C" fn locus_event_on_complete(
    event: *const LocusEvent,
    done: LocusEventCallback,
    data: *mut c_void,
) -> LocusStatus {
    call("locus_event_on_complete", || {
        let e = EVENTS.get(event, "event")?;
        let done = done.ok_or_else(|| {
            crate::Fail::new(
                LocusStatus::LocusErrorNull,
                "done is NULL; pass the function to call",
            )
        })?;
        let data = CallbackData(data);
        e.on_complete(move |outcome| {
            // The whole wrapper moves in (a closure capturing only `data.0` would take
            // the raw pointer, which is not `Send`).
            let data = data;
            let status =
                outcome.map_or_else(|e| crate::Fail::from(e).status(), |()| LocusStatus::LocusOk);
            // SAFETY: the caller's contract: callable once, from any thread, with `data`.
            unsafe { done(data.0, status) };
        });
        Ok(())
    })
}

/// Starts moving `len` bytes from `offset` of `memory` to `location` ahead of their use
/// there, when the memory migrates (SYCL USM shared memory to its device), and returns at
/// once: the move's event goes into `*event` (NULL: no event) and whether anything moves
/// into `*moved` (NULL: not said). Memory that does not migrate is left where it is
/// (`*moved` false, the event already complete); the data is valid either way. The range
/// is checked first.
///
/// # Safety
/// `location` is a NUL-terminated string; `event` is NULL or points to a `LocusEvent *`;
/// `moved` is NULL or points to a `bool`.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_prefetch(
    memory: *const LocusMemory,
    location: *const std::ffi::c_char,
    offset: usize,
    len: usize,
    event: *mut *mut LocusEvent,
    moved: *mut bool,
) -> LocusStatus {
    call("locus_memory_prefetch", || {
        let m = MEMORY.get(memory, "memory")?;
        let to = crate::text::location_arg(location, "location")?;
        let end = offset.checked_add(len).ok_or_else(|| {
            crate::Fail::new(
                LocusStatus::LocusErrorInvalid,
                format!("{len} bytes at {offset} run past the end of memory sizes"),
            )
        })?;
        let outcome = m.prefetch_to(to, offset..end)?;
        if !moved.is_null() {
            *out_arg(moved, "moved")? = outcome.moved;
        }
        if !event.is_null() {
            *out_arg(event, "event")? = EVENTS.insert(outcome.event);
        }
        Ok(())
    })
}

/// Frees the event handle without waiting. NULL does nothing.
#[no_mangle]
pub extern "C" fn locus_event_free(event: *mut LocusEvent) -> LocusStatus {
    call("locus_event_free", || EVENTS.remove(event, "the event"))
}

/// One copy of a batch (`locus_memory_copy_batch`): `len` bytes from `src` at
/// `src_offset` to `dst` at `dst_offset`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LocusCopy {
    pub src: *const LocusMemory,
    pub src_offset: usize,
    pub dst: *const LocusMemory,
    pub dst_offset: usize,
    pub len: usize,
}

/// Runs `count` copies between any locations and returns when all are done. Every copy
/// is checked first (handles, ranges, two copies writing the same bytes or one reading
/// what another writes): on bad input nothing is copied. A runtime's fixed cost is paid
/// once per batch where its queue carries the copies (OpenCL, CUDA, HIP). When a started
/// copy fails the message names each failed copy and how many completed.
///
/// # Safety
/// `copies` is NULL (with `count` 0) or points to `count` `LocusCopy` values.
#[no_mangle]
pub unsafe extern "C" fn locus_memory_copy_batch(
    copies: *const LocusCopy,
    count: usize,
) -> LocusStatus {
    call("locus_memory_copy_batch", || {
        if count == 0 {
            return Ok(());
        }
        if copies.is_null() {
            return Err(crate::Fail::new(
                LocusStatus::LocusErrorNull,
                format!("copies is NULL for {count} copies"),
            ));
        }
        // SAFETY: `copies` points to `count` values (the caller's contract).
        let copies = unsafe { std::slice::from_raw_parts(copies, count) };
        let batch = copies
            .iter()
            .enumerate()
            .map(|(i, c)| {
                Ok(locus_rs::BatchCopy::new(
                    &MEMORY.get(c.src, &format!("copies[{i}].src"))?,
                    c.src_offset,
                    &MEMORY.get(c.dst, &format!("copies[{i}].dst"))?,
                    c.dst_offset,
                    c.len,
                ))
            })
            .collect::<Result<Vec<_>, crate::Fail>>()?;
        Ok(locus_rs::copy_batch(&batch)?)
    })
}
