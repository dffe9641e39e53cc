//! Device memory shared between processes through the driver's IPC memory handles
//! (`cuIpcGetMemHandle` / `cuIpcOpenMemHandle` / `cuIpcCloseMemHandle`, HIP's alike):
//! [`IpcHandles::ipc_export`], [`IpcHandles::ipc_open`] and [`IpcHandles::ipc_close`] of a GPU
//! device. Only memory from `allocate` (`cuMemAlloc`), at its start, is exported: the
//! drivers refuse their stream-ordered pool's memory, pinned and managed memory.

use super::*;

/// What memory to be shared is rounded up to ([`IpcHandles::ipc_granularity`]): the
/// drivers hand out allocations of at least this size as blocks of their own (NVIDIA's
/// guide recommends 2 MiB-aligned sizes for IPC; AMD's allocator sub-allocates below
/// it too).
pub(super) const IPC_GRANULARITY: usize = 2 << 20;

impl<A: GpuApi> GpuDevice<A> {
    pub(super) fn ipc_export_impl(&self, native: &Native) -> Result<Vec<u8>> {
        let (ptr, kind) = self.ptr(native)?;
        if kind != GpuMemory::Device {
            return Err(Error::Invalid(format!(
                "{}: {kind:?} memory has no IPC handle (the driver exports device memory \
                 from its plain allocation only); allocate it with Memory::new_shared",
                self.location
            )));
        }
        let _current = self.activate()?;
        // SAFETY: the device is current; `ptr` is the start of this allocation.
        let handle = unsafe { self.api.ipc_handle(ptr) }.map_err(|e| self.fail("IPC handle", e))?;
        Ok(handle.to_vec())
    }

    /// # Safety
    /// As for [`IpcHandles::ipc_open`].
    pub(super) unsafe fn ipc_open_impl(&self, handle: &[u8]) -> Result<Native> {
        let bytes: [u8; 64] = handle.try_into().map_err(|_| {
            Error::Invalid(format!(
                "{}: an IPC memory handle is 64 bytes, and this one is {}",
                self.location,
                handle.len()
            ))
        })?;
        let _current = self.activate()?;
        // SAFETY: the device is current; the caller keeps the memory allocated in its
        // process until it is closed.
        let ptr = unsafe { self.api.ipc_open(&bytes) }.map_err(|e| self.fail("IPC open", e))?;
        Ok(A::native(ptr, GpuMemory::Device))
    }

    /// # Safety
    /// As for [`IpcHandles::ipc_close`].
    pub(super) unsafe fn ipc_close_impl(&self, native: &Native) {
        if let (Ok(_current), Ok((ptr, _))) = (self.activate(), self.ptr(native)) {
            // SAFETY: per the caller's contract.
            let _ = unsafe { self.api.ipc_close(ptr) };
        }
    }
}
