//! DLPack's export side: a tensor handed to a consumer in a capsule (versioned or
//! legacy), what it keeps alive until the consumer's deleter runs, and the capsule's
//! destructor for a capsule nobody consumed.
//!
//! A consumer may call the deleter and still leave the capsule under its unconsumed
//! name (PyTorch does when its import fails: it frees the tensor, then raises). The
//! capsule's context holds a flag the deleter sets, so the capsule's destructor then
//! leaves the tensor alone instead of reading freed memory and freeing it again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::*;

/// What an exported tensor keeps alive, and its shape and strides storage.
pub struct Export<K: Send + 'static> {
    /// Keeps the data alive until the consumer's deleter runs (held, never read).
    #[allow(dead_code)]
    keep: K,
    /// Extents (the tensor points here).
    shape: Vec<i64>,
    /// Strides in elements (the tensor points here).
    strides: Vec<i64>,
}

impl<K: Send + 'static> Export<K> {
    /// What keeps a compact row-major tensor of `shape` alive. The strides are spelled
    /// out although DLPack allows null for this layout: dpnp / dpctl's importer reads
    /// `strides[i]` without a null check (a null there crashed the interpreter).
    pub fn new(keep: K, shape: Vec<i64>) -> Export<K> {
        let mut strides = vec![1i64; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1].saturating_mul(shape[i + 1]);
        }
        Export {
            keep,
            shape,
            strides,
        }
    }
}

impl<K: Send + 'static> Export<K> {
    /// What keeps a strided tensor alive: `shape` and `strides` (in elements) as given.
    pub fn strided(keep: K, shape: Vec<i64>, strides: Vec<i64>) -> Export<K> {
        Export {
            keep,
            shape,
            strides,
        }
    }
}

/// A tensor description to export.
pub struct Description {
    /// The data handle.
    pub data: *mut c_void,
    /// Its device.
    pub device: DLDevice,
    /// Element type.
    pub dtype: DLDataType,
    /// Bytes to the first element.
    pub byte_offset: u64,
    /// Read-only (versioned capsules carry the flag).
    pub read_only: bool,
    /// A fresh copy made for this export.
    pub copied: bool,
}

/// Set by the deleter: the tensor is freed (shared with the capsule's context).
type Deleted = Arc<AtomicBool>;

struct Versioned<K: Send + 'static> {
    managed: DLManagedTensorVersioned,
    deleted: Deleted,
    /// Held for its drop: the deleter frees it.
    #[allow(dead_code)]
    export: Export<K>,
}

struct Legacy<K: Send + 'static> {
    managed: DLManagedTensor,
    deleted: Deleted,
    /// Held for its drop: the deleter frees it.
    #[allow(dead_code)]
    export: Export<K>,
}

/// The deleter of the versioned tensors locus exports: frees the box behind them.
///
/// # Safety
/// `t` is a tensor made by [`capsule`], and this is the one call of its deleter.
unsafe extern "C" fn delete_versioned<K: Send + 'static>(t: *mut DLManagedTensorVersioned) {
    // SAFETY: `manager_ctx` is the Box made in `capsule`; DLPack calls the deleter once.
    let boxed = unsafe { Box::from_raw((*t).manager_ctx.cast::<Versioned<K>>()) };
    boxed.deleted.store(true, Ordering::Release);
}

/// The deleter of the legacy tensors locus exports.
///
/// # Safety
/// As for `delete_versioned`.
unsafe extern "C" fn delete_legacy<K: Send + 'static>(t: *mut DLManagedTensor) {
    // SAFETY: as in `delete_versioned`.
    let boxed = unsafe { Box::from_raw((*t).manager_ctx.cast::<Legacy<K>>()) };
    boxed.deleted.store(true, Ordering::Release);
}

/// Frees the tensor of a capsule that nobody consumed (its name is still the original).
///
/// # Safety
/// Called by Python, holding the GIL, once, on a capsule made by [`capsule`].
unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python with the GIL on a capsule made by `capsule` below; when it
    // still carries an unconsumed name, the tensor is ours to free. The error indicator is
    // saved and restored around it (the DLPack rule for destructors): a capsule dropped
    // while an exception propagates must not swallow it.
    unsafe {
        let (mut kind, mut value, mut traceback) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        ffi::PyErr_Fetch(&mut kind, &mut value, &mut traceback);
        // The flag `capsule` put in the context (taken back here, once).
        let context = ffi::PyCapsule_GetContext(capsule);
        let deleted =
            (!context.is_null()).then(|| Arc::from_raw(context.cast::<AtomicBool>().cast_const()));
        if deleted.as_ref().is_some_and(|d| d.load(Ordering::Acquire)) {
            // A consumer called the deleter without renaming the capsule.
        } else if ffi::PyCapsule_IsValid(capsule, VERSIONED.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(capsule, VERSIONED.as_ptr())
                .cast::<DLManagedTensorVersioned>();
            if let Some(d) = (*t).deleter {
                d(t);
            }
        } else if ffi::PyCapsule_IsValid(capsule, LEGACY.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(capsule, LEGACY.as_ptr()).cast::<DLManagedTensor>();
            if let Some(d) = (*t).deleter {
                d(t);
            }
        }
        // Otherwise consumed: the consumer owns the tensor now.
        drop(deleted);
        ffi::PyErr_Restore(kind, value, traceback);
    }
}

/// A new capsule for `description` (1-D or n-D compact, strides given), versioned when
/// `versioned`.
pub fn capsule<K: Send + 'static>(
    py: Python<'_>,
    description: Description,
    export: Export<K>,
    versioned: bool,
) -> PyResult<Py<PyAny>> {
    let tensor = |export: &Export<K>| DLTensor {
        data: description.data,
        device: description.device,
        ndim: export.shape.len() as i32,
        dtype: description.dtype,
        shape: export.shape.as_ptr().cast_mut(),
        strides: export.strides.as_ptr().cast_mut(),
        byte_offset: description.byte_offset,
    };
    let deleted: Deleted = Arc::new(AtomicBool::new(false));
    let (raw, name): (*mut c_void, &CStr) = if versioned {
        let mut flags = 0;
        if description.read_only {
            flags |= FLAG_READ_ONLY;
        }
        if description.copied {
            flags |= FLAG_IS_COPIED;
        }
        let boxed = Box::into_raw(Box::new(Versioned {
            managed: DLManagedTensorVersioned {
                version: DLPackVersion { major: 1, minor: 0 },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_versioned::<K>),
                flags,
                dl_tensor: tensor(&export),
            },
            deleted: Arc::clone(&deleted),
            export,
        }));
        // SAFETY: `boxed` is a live, uniquely owned allocation; the shape and strides
        // vectors' heap buffers do not move when the Box is made.
        unsafe { (*boxed).managed.manager_ctx = boxed.cast() };
        (boxed.cast(), VERSIONED)
    } else {
        let boxed = Box::into_raw(Box::new(Legacy {
            managed: DLManagedTensor {
                dl_tensor: tensor(&export),
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_legacy::<K>),
            },
            deleted: Arc::clone(&deleted),
            export,
        }));
        // SAFETY: as above.
        unsafe { (*boxed).managed.manager_ctx = boxed.cast() };
        (boxed.cast(), LEGACY)
    };
    // SAFETY: `raw` points at the managed tensor (first field of the box, repr(C) not
    // needed: we pass the field's address below). The destructor frees it unless a
    // consumer renamed the capsule.
    unsafe {
        let managed: *mut c_void = if versioned {
            std::ptr::addr_of_mut!((*raw.cast::<Versioned<K>>()).managed).cast()
        } else {
            std::ptr::addr_of_mut!((*raw.cast::<Legacy<K>>()).managed).cast()
        };
        let cap = ffi::PyCapsule_New(managed, name.as_ptr(), Some(capsule_destructor));
        if cap.is_null() {
            if versioned {
                delete_versioned::<K>(managed.cast());
            } else {
                delete_legacy::<K>(managed.cast());
            }
            return Err(PyErr::fetch(py));
        }
        // The destructor's flag, owned by the capsule (taken back in its destructor).
        let context = Arc::into_raw(deleted).cast_mut().cast::<c_void>();
        if ffi::PyCapsule_SetContext(cap, context) != 0 {
            drop(Arc::from_raw(context.cast::<AtomicBool>().cast_const()));
            ffi::PyErr_Clear();
        }
        Ok(Py::from_owned_ptr(py, cap))
    }
}
