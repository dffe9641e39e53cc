//! IPC memory handles in the simulated driver (`cuIpcGetMemHandle`,
//! `cuIpcOpenMemHandle`, `cuIpcCloseMemHandle`), with each [`Strict`] a process of its
//! own: a handle names its maker and the allocation's start; only device memory from
//! `cuMemAlloc`, at its start, is exported (the driver refuses pool, pinned and managed
//! memory), and an export of an allocation that is not a multiple of 2 MiB is a
//! violation (the driver may share the whole block it sub-allocated it from); the
//! maker's own handle does not open in it (`CUDA_ERROR_INVALID_CONTEXT`, as
//! the driver refuses a process its own handle); a handle of memory its maker freed does
//! not open; opened memory is the maker's memory in place, and closing it twice, or
//! closing what was never opened, is an error.

use std::sync::Weak;

use super::*;

/// Exported allocations by (maker, start): the maker's table, to ask whether it lives.
type Exports = std::collections::BTreeMap<(u64, u64), Weak<Mutex<Allocations>>>;

static EXPORTS: Mutex<Exports> = Mutex::new(Exports::new());

const MAGIC: &[u8; 8] = b"LCSIMIPC";

impl Strict {
    pub(super) fn ipc_handle_now(&self, ptr: u64) -> Result<[u8; 64], GpuError> {
        const CALL: &str = "cuIpcGetMemHandle";
        self.enter(CALL)?;
        match self.sizes().get(&ptr) {
            Some(&(n, _, GpuMemory::Device)) if n % super::super::ipc::IPC_GRANULARITY != 0 => {
                self.lock().violations.push(format!(
                    "{CALL}: an allocation of {n} bytes exported: the driver may have \
                     sub-allocated it from a block the handle shares whole (with the \
                     maker's neighbouring allocations); allocate a multiple of 2 MiB"
                ));
            }
            Some(&(_, _, GpuMemory::Device)) => {}
            _ => {
                return Err(error(
                    CALL,
                    INVALID_VALUE,
                    "CUDA_ERROR_INVALID_VALUE: not the start of device memory from cuMemAlloc",
                ))
            }
        }
        EXPORTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((self.id, ptr), Arc::downgrade(&self.sizes));
        let mut handle = [0u8; 64];
        handle[..8].copy_from_slice(MAGIC);
        handle[8..16].copy_from_slice(&self.id.to_le_bytes());
        handle[16..24].copy_from_slice(&ptr.to_le_bytes());
        Ok(handle)
    }

    pub(super) fn ipc_open_now(&self, handle: &[u8; 64]) -> Result<u64, GpuError> {
        const CALL: &str = "cuIpcOpenMemHandle";
        self.enter(CALL)?;
        let word = |at: usize| u64::from_le_bytes(handle[at..at + 8].try_into().unwrap_or([0; 8]));
        let (maker, ptr) = (word(8), word(16));
        if &handle[..8] != MAGIC {
            return Err(error(
                CALL,
                INVALID_VALUE,
                "CUDA_ERROR_INVALID_VALUE: not an IPC handle",
            ));
        }
        if maker == self.id {
            return Err(error(
                CALL,
                INVALID_CONTEXT,
                "CUDA_ERROR_INVALID_CONTEXT: a process cannot open its own IPC handle",
            ));
        }
        let exports = EXPORTS.lock().unwrap_or_else(|e| e.into_inner());
        let live = exports
            .get(&(maker, ptr))
            .and_then(Weak::upgrade)
            .is_some_and(|sizes| {
                sizes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains_key(&ptr)
            });
        if !live {
            return Err(error(
                CALL,
                INVALID_VALUE,
                "CUDA_ERROR_INVALID_VALUE: the handle's memory was freed in its process",
            ));
        }
        self.lock().opened_ipc.push(ptr);
        Ok(ptr)
    }

    pub(super) fn ipc_close_now(&self, ptr: u64) -> Result<(), GpuError> {
        const CALL: &str = "cuIpcCloseMemHandle";
        self.enter(CALL)?;
        let mut state = self.lock();
        match state.opened_ipc.iter().position(|&p| p == ptr) {
            Some(i) => {
                state.opened_ipc.swap_remove(i);
                Ok(())
            }
            None => Err(error(
                CALL,
                INVALID_VALUE,
                "CUDA_ERROR_INVALID_VALUE: not memory this process opened from an IPC handle",
            )),
        }
    }

    /// The IPC memory this process has open now.
    pub(crate) fn opened_ipc(&self) -> Vec<u64> {
        self.lock().opened_ipc.clone()
    }
}
