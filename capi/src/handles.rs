//! The live handles. C holds a pointer to an opaque type (`LocusMemory *`,
//! `LocusQueue *`, ...), which locus never dereferences: it is a number (counted up
//! from one, shared by every kind of handle and never reused, so a stale handle cannot
//! come to name a newer object, nor a handle of one kind pass for another) and a key
//! into its kind's table, which holds the object. A call clones the object's `Arc` out
//! of the table under its lock and works on that, so a handle freed on another thread
//! meanwhile stays valid for the call, and a stale or made-up handle is an error instead
//! of undefined behaviour.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::{Fail, LocusStatus};

/// One kind of handle: its opaque C type `P`, the Rust object `T` it names.
pub(crate) struct Handles<T> {
    /// What C calls this kind of handle ("a locus memory handle").
    name: &'static str,
    /// The function that makes one ("locus_memory_new").
    made_by: &'static str,
    table: Mutex<Option<HashMap<usize, Arc<T>>>>,
}

impl<T> Handles<T> {
    pub(crate) const fn new(name: &'static str, made_by: &'static str) -> Handles<T> {
        Handles {
            name,
            made_by,
            table: Mutex::new(None),
        }
    }

    fn table(&self) -> MutexGuard<'_, Option<HashMap<usize, Arc<T>>>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes a handle for `object`.
    pub(crate) fn insert<P>(&self, object: T) -> *mut P {
        static NEXT: AtomicUsize = AtomicUsize::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        self.table()
            .get_or_insert_with(HashMap::new)
            .insert(id, Arc::new(object));
        // A number, never dereferenced (by locus or, the header says, by C).
        std::ptr::without_provenance_mut(id)
    }

    /// The object behind a live handle.
    pub(crate) fn get<P>(&self, handle: *const P, what: &str) -> Result<Arc<T>, Fail> {
        if handle.is_null() {
            return Err(Fail::new(
                LocusStatus::LocusErrorNull,
                format!("{what} is NULL"),
            ));
        }
        self.table()
            .as_ref()
            .and_then(|t| t.get(&(handle as usize)))
            .map(Arc::clone)
            .ok_or_else(|| self.not_live(handle as usize, what))
    }

    /// Removes a live handle; the object is dropped once no call is using it. NULL does
    /// nothing.
    pub(crate) fn remove<P>(&self, handle: *mut P, what: &str) -> Result<(), Fail> {
        if handle.is_null() {
            return Ok(());
        }
        self.take(handle, what).map(drop)
    }

    /// Removes a live handle and returns its object: of two calls ending one handle at
    /// once, exactly one gets it.
    pub(crate) fn take<P>(&self, handle: *mut P, what: &str) -> Result<Arc<T>, Fail> {
        if handle.is_null() {
            return Err(Fail::new(
                LocusStatus::LocusErrorNull,
                format!("{what} is NULL"),
            ));
        }
        let taken = self
            .table()
            .as_mut()
            .and_then(|t| t.remove(&(handle as usize)));
        taken.ok_or_else(|| self.not_live(handle as usize, what))
    }

    fn not_live(&self, handle: usize, what: &str) -> Fail {
        Fail::new(
            LocusStatus::LocusErrorBadHandle,
            format!(
                "{what} ({handle:#x}) is not a live {}: it was freed already, or it did not \
                 come from {}",
                self.name, self.made_by
            ),
        )
    }
}

/// An allocation at one location, made by `locus_memory_new` and freed by
/// `locus_memory_free`. Opaque to C.
pub struct LocusMemory {
    _opaque: [u8; 0],
}

/// The live memory handles.
pub(crate) static MEMORY: Handles<locus_rs::Memory> =
    Handles::new("locus memory handle", "locus_memory_new");
