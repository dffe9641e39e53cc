//! The live memory handles. C holds a `LocusMemory *`, which locus never dereferences:
//! it is a number (counted up from one, never reused, so a stale handle cannot come to
//! name newer memory) and a key into this table, which holds the memory. A call clones
//! the memory's `Arc` out of the table under its lock and works on that, so a handle
//! freed on another thread meanwhile stays valid for the call, and a stale or made-up
//! handle is an error instead of undefined behaviour.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use locus_rs::Memory;

use crate::{Fail, LocusStatus};

/// An allocation at one location, made by `locus_memory_new` and freed by
/// `locus_memory_free`. Opaque to C.
pub struct LocusMemory {
    _opaque: [u8; 0],
}

type Table = HashMap<usize, Arc<Memory>>;

fn table() -> MutexGuard<'static, Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Makes a handle for `memory`.
pub(crate) fn insert(memory: Memory) -> *mut LocusMemory {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    table().insert(id, Arc::new(memory));
    // A number, never dereferenced (by locus or, the header says, by C).
    std::ptr::without_provenance_mut(id)
}

/// The memory behind a live handle.
pub(crate) fn get(handle: *const LocusMemory, what: &str) -> Result<Arc<Memory>, Fail> {
    if handle.is_null() {
        return Err(Fail::new(
            LocusStatus::LocusErrorNull,
            format!("{what} is NULL"),
        ));
    }
    table()
        .get(&(handle as usize))
        .map(Arc::clone)
        .ok_or_else(|| not_live(handle, what))
}

/// Removes a live handle; the memory is freed once no call is using it.
pub(crate) fn remove(handle: *mut LocusMemory) -> Result<(), Fail> {
    if handle.is_null() {
        return Ok(());
    }
    let removed = table().remove(&(handle as usize));
    match removed {
        Some(entry) => {
            drop(entry);
            Ok(())
        }
        None => Err(not_live(handle, "the memory")),
    }
}

fn not_live(handle: *const LocusMemory, what: &str) -> Fail {
    Fail::new(
        LocusStatus::LocusErrorBadHandle,
        format!(
            "{what} ({handle:p}) is not a live locus memory handle: it was freed already, or \
             it did not come from locus_memory_new"
        ),
    )
}
