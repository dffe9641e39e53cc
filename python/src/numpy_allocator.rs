//! numpy's arrays from a locus memory resource (NEP 49, `PyDataMem_SetHandler`): a
//! handler whose `malloc`, `calloc`, `realloc` and `free` take array data of at least
//! `min_bytes` from the resource (page-locked host memory of a GPU, by default, so that
//! uploads of ordinary numpy arrays run at pinned speed) and leave smaller arrays to the
//! handler that was current before (numpy's own, with its cache of small blocks).
//!
//! numpy keeps the handler in a context variable: setting one applies to the calling
//! thread's context, and every array remembers the handler that allocated it (the
//! capsule below is kept alive by each such array, so its `free` is always there).

use std::collections::HashMap;
use std::ffi::{c_char, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;

use locus::resource::MemoryResource;
use locus::Memory;

/// numpy's `PyDataMemAllocator` (version 1).
#[repr(C)]
#[derive(Clone, Copy)]
struct Allocator {
    ctx: *mut c_void,
    malloc: Option<unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void>,
    calloc: Option<unsafe extern "C" fn(*mut c_void, usize, usize) -> *mut c_void>,
    realloc: Option<unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> *mut c_void>,
    free: Option<unsafe extern "C" fn(*mut c_void, *mut c_void, usize)>,
}

/// numpy's `PyDataMem_Handler`: what the capsule named `mem_handler` points to.
#[repr(C)]
struct Handler {
    name: [c_char; 127],
    version: u8,
    allocator: Allocator,
}

/// The capsule's contents: numpy reads the handler at its start; `ctx` points to
/// `state`.
#[repr(C)]
struct Owned {
    handler: Handler,
    state: State,
}

struct State {
    resource: Arc<dyn MemoryResource>,
    min_bytes: usize,
    /// The handler current when this one was made, for small arrays and for what the
    /// resource refuses; its capsule is kept alive by `_previous_capsule`.
    previous: Allocator,
    _previous_capsule: Py<PyAny>,
    /// The resource's memory handed to numpy, by address: each a `Memory`, so that
    /// `locus.lookup` names an array's data and the resource it is on loan from.
    blocks: Mutex<HashMap<usize, Memory>>,
    /// Every address `blocks` ever held lies in `lo..hi` (widened, never narrowed): an
    /// address outside is the previous handler's, freed without taking the lock (the
    /// pool's memory and malloc's small blocks lie apart, so small arrays pay nothing).
    lo: AtomicUsize,
    hi: AtomicUsize,
}

const CAPSULE_NAME: &CStr = c"mem_handler";
/// numpy's C API table: `PyArray_GetNDArrayCFeatureVersion`, `PyDataMem_SetHandler`,
/// `PyDataMem_GetHandler` (`__multiarray_api.h`); handlers came with feature version
/// 0x0f (numpy 1.22).
const FEATURE_VERSION_SLOT: usize = 211;
const SET_HANDLER_SLOT: usize = 304;
const GET_HANDLER_SLOT: usize = 305;
const HANDLER_FEATURE_VERSION: c_uint = 0x0f;

impl State {
    fn blocks(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Memory>> {
        self.blocks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `size` bytes from the resource, entered in `blocks`; NULL where it refuses.
    fn take(&self, size: usize) -> *mut c_void {
        match Memory::from_resource_aligned(&self.resource, size, 64) {
            Ok(memory) => {
                let ptr = memory.native().address() as usize;
                self.lo.fetch_min(ptr, Ordering::AcqRel);
                self.hi
                    .fetch_max(ptr.saturating_add(size.max(1)), Ordering::AcqRel);
                self.blocks().insert(ptr, memory);
                ptr as *mut c_void
            }
            Err(_) => std::ptr::null_mut(),
        }
    }

    /// Takes `ptr`'s entry out of `blocks`, if it is one of ours.
    fn remove(&self, ptr: usize) -> Option<Memory> {
        let inside =
            (self.lo.load(Ordering::Acquire)..self.hi.load(Ordering::Acquire)).contains(&ptr);
        match inside {
            true => self.blocks().remove(&ptr),
            false => None,
        }
    }

    /// The previous handler's `malloc`.
    fn previous_malloc(&self, size: usize) -> *mut c_void {
        match self.previous.malloc {
            // SAFETY: the previous handler's own function and context, kept alive by
            // `_previous_capsule`.
            Some(f) => unsafe { f(self.previous.ctx, size) },
            None => std::ptr::null_mut(),
        }
    }

    fn malloc(&self, size: usize) -> *mut c_void {
        if size >= self.min_bytes {
            let ptr = self.take(size);
            if !ptr.is_null() {
                return ptr;
            }
        }
        self.previous_malloc(size)
    }

    fn calloc(&self, nelem: usize, elsize: usize) -> *mut c_void {
        let Some(size) = nelem.checked_mul(elsize) else {
            return std::ptr::null_mut();
        };
        if size >= self.min_bytes {
            let ptr = self.take(size);
            if !ptr.is_null() {
                // SAFETY: a fresh block of `size` bytes the host reaches (the resource
                // allocates host or pinned host memory: checked when the handler was made).
                unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, size) };
                return ptr;
            }
        }
        match self.previous.calloc {
            // SAFETY: the previous handler's own function and context.
            Some(f) => unsafe { f(self.previous.ctx, nelem, elsize) },
            None => std::ptr::null_mut(),
        }
    }

    /// # Safety
    /// `ptr` is NULL or data this handler's `malloc` / `calloc` / `realloc` returned and
    /// not yet freed.
    unsafe fn realloc(&self, ptr: *mut c_void, new_size: usize) -> *mut c_void {
        if ptr.is_null() {
            return self.malloc(new_size);
        }
        let Some(old) = self.remove(ptr as usize) else {
            // The previous handler's memory stays with it.
            return match self.previous.realloc {
                // SAFETY: `ptr` came from the previous handler (it is not one of ours).
                Some(f) => unsafe { f(self.previous.ctx, ptr, new_size) },
                None => std::ptr::null_mut(),
            };
        };
        if new_size >= self.min_bytes && new_size <= old.len() {
            self.blocks().insert(ptr as usize, old);
            return ptr;
        }
        // A larger block, or an array shrunk below `min_bytes`, which moves to the
        // previous handler as a new array of that size would.
        let fresh = self.malloc(new_size);
        if fresh.is_null() {
            self.blocks().insert(ptr as usize, old);
            return fresh;
        }
        // SAFETY: both are host memory of at least the bytes copied; distinct blocks.
        unsafe {
            std::ptr::copy_nonoverlapping(
                ptr.cast::<u8>(),
                fresh.cast::<u8>(),
                old.len().min(new_size),
            )
        };
        drop(old);
        fresh
    }

    /// # Safety
    /// As for [`State::realloc`].
    unsafe fn free(&self, ptr: *mut c_void, size: usize) {
        if ptr.is_null() {
            return;
        }
        match self.remove(ptr as usize) {
            Some(memory) => drop(memory),
            None => {
                if let Some(f) = self.previous.free {
                    // SAFETY: `ptr` came from the previous handler.
                    unsafe { f(self.previous.ctx, ptr, size) }
                }
            }
        }
    }
}

/// Runs `body` without letting a panic cross into numpy (C); `fallback` on one.
fn contained<R>(fallback: R, body: impl FnOnce() -> R) -> R {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(fallback)
}

unsafe extern "C" fn handler_malloc(ctx: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: numpy passes the `ctx` of this handler: its `State`, alive with the capsule.
    let state = unsafe { &*ctx.cast::<State>() };
    contained(std::ptr::null_mut(), || state.malloc(size))
}

unsafe extern "C" fn handler_calloc(ctx: *mut c_void, nelem: usize, elsize: usize) -> *mut c_void {
    // SAFETY: as in `handler_malloc`.
    let state = unsafe { &*ctx.cast::<State>() };
    contained(std::ptr::null_mut(), || state.calloc(nelem, elsize))
}

unsafe extern "C" fn handler_realloc(
    ctx: *mut c_void,
    ptr: *mut c_void,
    size: usize,
) -> *mut c_void {
    // SAFETY: as in `handler_malloc`.
    let state = unsafe { &*ctx.cast::<State>() };
    // SAFETY: numpy reallocates only data this handler allocated.
    contained(std::ptr::null_mut(), || unsafe { state.realloc(ptr, size) })
}

unsafe extern "C" fn handler_free(ctx: *mut c_void, ptr: *mut c_void, size: usize) {
    // SAFETY: as in `handler_malloc`.
    let state = unsafe { &*ctx.cast::<State>() };
    // SAFETY: numpy frees only data this handler allocated, once.
    contained((), || unsafe { state.free(ptr, size) })
}

unsafe extern "C" fn destroy(capsule: *mut ffi::PyObject) {
    // SAFETY: the capsule this module made, named CAPSULE_NAME, over a boxed `Owned`;
    // numpy's arrays hold it, so its destructor runs after the last of them freed its
    // data (with the GIL held, as capsule destructors are).
    unsafe {
        let owned = ffi::PyCapsule_GetPointer(capsule, CAPSULE_NAME.as_ptr()).cast::<Owned>();
        if !owned.is_null() {
            drop(Box::from_raw(owned));
        }
    }
}

/// numpy's C API table.
fn numpy_api(py: Python<'_>) -> PyResult<*const *const c_void> {
    let module = py
        .import("numpy._core._multiarray_umath")
        .or_else(|_| py.import("numpy.core._multiarray_umath"))?;
    let capsule = module.getattr("_ARRAY_API")?;
    // SAFETY: `_ARRAY_API` is numpy's capsule (no name) over its C API table, which
    // lives as long as numpy is loaded (for the process).
    let table = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), std::ptr::null()) };
    if table.is_null() {
        return Err(PyErr::fetch(py));
    }
    let table = table as *const *const c_void;
    // SAFETY: slot 211 is PyArray_GetNDArrayCFeatureVersion in every numpy since 1.4.
    let version = unsafe {
        let f: unsafe extern "C" fn() -> c_uint =
            std::mem::transmute(*table.add(FEATURE_VERSION_SLOT));
        f()
    };
    if version < HANDLER_FEATURE_VERSION {
        return Err(PyRuntimeError::new_err(format!(
            "numpy_allocator: this numpy (C API feature version {version:#x}) has no memory \
             handlers (NEP 49); they came with numpy 1.22: upgrade numpy"
        )));
    }
    Ok(table)
}

/// The handler numpy allocates with now in this context (a new reference).
fn current_handler(py: Python<'_>, table: *const *const c_void) -> PyResult<Py<PyAny>> {
    // SAFETY: slot 305 is PyDataMem_GetHandler (feature version checked): a new
    // reference, or NULL with an exception set.
    unsafe {
        let f: unsafe extern "C" fn() -> *mut ffi::PyObject =
            std::mem::transmute(*table.add(GET_HANDLER_SLOT));
        Bound::from_owned_ptr_or_err(py, f()).map(Bound::unbind)
    }
}

/// A numpy memory handler over `resource` (the capsule `PyDataMem_SetHandler` takes)
/// for arrays of at least `min_bytes`; smaller ones and what the resource refuses come
/// from the handler current now. The resource's memory must be reachable by the host.
pub(crate) fn make_handler(
    py: Python<'_>,
    resource: Arc<dyn MemoryResource>,
    min_bytes: usize,
) -> PyResult<Py<PyAny>> {
    // numpy reads and writes array data in place: a block must be host-addressable.
    let probe = resource.allocate(64, 64).map_err(crate::py_err)?;
    let device = match resource.device() {
        Some(device) => device,
        None => Arc::clone(
            locus::registry()
                .device(resource.location())
                .map_err(crate::py_err)?,
        ),
    };
    let access = device.host_access(probe.native());
    resource.deallocate(probe);
    if access != locus::HostAccess::Pointer {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "numpy_allocator: {} hands out memory the host does not address in place; \
             numpy needs host memory: pass a resource over host or pinned host memory \
             (locus.mr.UpstreamMemoryResource(\"cuda:0\", kind=\"pinned-host\"))",
            resource.describe()
        )));
    }
    let table = numpy_api(py)?;
    let _previous_capsule = current_handler(py, table)?;
    // SAFETY: numpy's handler capsule, named "mem_handler", points to a
    // PyDataMem_Handler that lives as long as the capsule (kept in the state).
    let previous = unsafe {
        let handler = ffi::PyCapsule_GetPointer(_previous_capsule.as_ptr(), CAPSULE_NAME.as_ptr());
        if handler.is_null() {
            return Err(PyErr::fetch(py));
        }
        (*handler.cast::<Handler>()).allocator
    };
    let mut name = [0 as c_char; 127];
    for (to, from) in name
        .iter_mut()
        .zip(format!("locus: {}", resource.describe()).bytes().take(126))
    {
        *to = from as c_char;
    }
    let mut owned = Box::new(Owned {
        handler: Handler {
            name,
            version: 1,
            allocator: Allocator {
                ctx: std::ptr::null_mut(),
                malloc: Some(handler_malloc),
                calloc: Some(handler_calloc),
                realloc: Some(handler_realloc),
                free: Some(handler_free),
            },
        },
        state: State {
            resource,
            min_bytes,
            previous,
            _previous_capsule,
            blocks: Mutex::new(HashMap::new()),
            lo: AtomicUsize::new(usize::MAX),
            hi: AtomicUsize::new(0),
        },
    });
    owned.handler.allocator.ctx = (&mut owned.state as *mut State).cast();
    let raw = Box::into_raw(owned);
    // SAFETY: `raw` is a live box whose first field is the handler numpy reads; the
    // destructor frees it; the name is a static C string.
    unsafe {
        let capsule = ffi::PyCapsule_New(raw.cast(), CAPSULE_NAME.as_ptr(), Some(destroy));
        if capsule.is_null() {
            drop(Box::from_raw(raw));
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, capsule).unbind())
    }
}

/// Makes `handler` numpy's in the calling thread's context (`None`: numpy's default)
/// and returns the one it replaces.
pub(crate) fn set_handler(
    py: Python<'_>,
    handler: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    if let Some(h) = handler {
        // SAFETY: only checks the object's type and name.
        let valid = unsafe { ffi::PyCapsule_IsValid(h.as_ptr(), CAPSULE_NAME.as_ptr()) } == 1;
        if !valid {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "a numpy memory handler is a capsule named \"mem_handler\" (what \
                 numpy_allocator made, or numpy.core.multiarray.get_handler... gave)",
            ));
        }
    }
    let table = numpy_api(py)?;
    let arg = handler.map_or(std::ptr::null_mut(), |h| h.as_ptr());
    // SAFETY: slot 304 is PyDataMem_SetHandler (feature version checked): takes a
    // handler capsule or NULL (numpy's default), returns the previous one (a new
    // reference) or NULL with an exception set.
    unsafe {
        let f: unsafe extern "C" fn(*mut ffi::PyObject) -> *mut ffi::PyObject =
            std::mem::transmute(*table.add(SET_HANDLER_SLOT));
        Bound::from_owned_ptr_or_err(py, f(arg)).map(Bound::unbind)
    }
}
