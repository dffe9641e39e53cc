//! IPC memory handles between simulated runtimes, each a process of its own: only
//! device memory, at its start, is exported (pool, pinned and managed memory are
//! refused), and an export of an allocation that is not a multiple of the driver's
//! granularity is a violation (the handle shares the whole block the driver
//! sub-allocated it from, with the maker's neighbouring allocations); a process cannot
//! open its own handle; opening one handle twice in a process gives the same address
//! and counts (each open needs its close); memory its maker frees while another
//! process has it open stays until the last close there; closing what was not opened is
//! an error.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, Weak};

use super::memory::{Found, Kind};
use super::{Refusal, SimModel, State, ALIGN};
use crate::backends::cuda_hip::ipc::IPC_GRANULARITY;

/// One exported allocation: its maker's state, and how often each other process has
/// it open.
struct Export {
    maker: Weak<Mutex<State>>,
    opened_by: HashMap<usize, u32>,
}

/// Exported allocations by (maker, start).
static EXPORTS: Mutex<BTreeMap<(usize, usize), Export>> = Mutex::new(BTreeMap::new());

const MAGIC: &[u8; 8] = b"LCSIMIPC";

fn exports() -> std::sync::MutexGuard<'static, BTreeMap<(usize, usize), Export>> {
    EXPORTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether another process has `maker`'s allocation at `ptr` open.
pub(super) fn opened_elsewhere(maker: usize, ptr: usize) -> bool {
    exports()
        .get(&(maker, ptr))
        .is_some_and(|e| e.opened_by.values().any(|&n| n > 0))
}

impl SimModel {
    /// The handle of the device memory that starts at `ptr`.
    pub(crate) fn ipc_export(&self, call: &'static str, ptr: usize) -> Result<[u8; 64], Refusal> {
        self.record(call, 0);
        match self.find(ptr) {
            Some(Found::Allocation(start, size, Kind::Device)) if start == ptr => {
                if size % IPC_GRANULARITY != 0 {
                    self.violation(format!(
                        "{call}: an allocation of {size} bytes exported: the driver may have \
                         sub-allocated it from a block the handle shares whole (with the \
                         maker's neighbouring allocations); allocate a multiple of 2 MiB"
                    ));
                }
            }
            _ => return Err(Refusal::InvalidValue),
        }
        exports().entry((self.id(), ptr)).or_insert_with(|| Export {
            maker: std::sync::Arc::downgrade(&self.state),
            opened_by: HashMap::new(),
        });
        let mut handle = [0u8; 64];
        handle[..8].copy_from_slice(MAGIC);
        handle[8..16].copy_from_slice(&(self.id() as u64).to_le_bytes());
        handle[16..24].copy_from_slice(&(ptr as u64).to_le_bytes());
        Ok(handle)
    }

    /// The memory of another process's handle, mapped into this one.
    pub(crate) fn ipc_open(&self, call: &'static str, handle: &[u8; 64]) -> Result<usize, Refusal> {
        self.record(call, 0);
        let word = |at: usize| {
            u64::from_le_bytes(handle[at..at + 8].try_into().unwrap_or([0; 8])) as usize
        };
        let (maker, ptr) = (word(8), word(16));
        if &handle[..8] != MAGIC {
            return Err(Refusal::InvalidValue);
        }
        if maker == self.id() {
            return Err(Refusal::InvalidContext);
        }
        let mut all = exports();
        let Some(export) = all.get_mut(&(maker, ptr)) else {
            return Err(Refusal::InvalidValue);
        };
        let live = export.maker.upgrade().is_some_and(|state| {
            let state = state.lock().unwrap_or_else(|e| e.into_inner());
            state.sizes.contains_key(&ptr) || state.kept_for_ipc.contains_key(&ptr)
        });
        if !live {
            return Err(Refusal::InvalidValue);
        }
        *export.opened_by.entry(self.id()).or_default() += 1;
        drop(all);
        *self.lock().opened.entry(ptr).or_default() += 1;
        Ok(ptr)
    }

    /// Closes one open of the memory at `ptr`; the last close lets the maker's freed
    /// memory go.
    pub(crate) fn ipc_close(&self, call: &'static str, ptr: usize) -> Result<(), Refusal> {
        self.record(call, 0);
        {
            let mut state = self.lock();
            match state.opened.get_mut(&ptr) {
                Some(n) if *n > 1 => *n -= 1,
                Some(_) => {
                    state.opened.remove(&ptr);
                }
                None => return Err(Refusal::InvalidValue),
            }
        }
        let maker = {
            let mut all = exports();
            let me = self.id();
            let entry = all
                .iter_mut()
                .find(|(&(_, p), e)| p == ptr && e.opened_by.get(&me).is_some_and(|&n| n > 0));
            entry.and_then(|(_, e)| {
                let n = e.opened_by.entry(me).or_default();
                *n -= 1;
                let last = e.opened_by.values().all(|&n| n == 0);
                last.then(|| e.maker.upgrade()).flatten()
            })
        };
        if let Some(maker) = maker {
            let kept = maker
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .kept_for_ipc
                .remove(&ptr);
            if let Some(size) = kept {
                if let Ok(layout) = std::alloc::Layout::from_size_align(size.max(1), ALIGN) {
                    // SAFETY: allocated by `allocate_kind` with this layout; its maker
                    // freed it and the last process that had it open closed it.
                    unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
                }
            }
        }
        Ok(())
    }

    /// The IPC memory this process has open now, with how often each is open.
    pub(crate) fn ipc_opened(&self) -> Vec<(usize, u32)> {
        self.lock().opened.iter().map(|(&p, &n)| (p, n)).collect()
    }
}
