//! Memory adopted from elsewhere: a native allocation with the deleter that frees it
//! (an application's buffer, an IPC handle, shared memory) and a host vector taken
//! without a copy.

use std::sync::Arc;

use super::{Memory, Owner};
use crate::core::device::Device;
use crate::core::error::{Error, Result};
use crate::core::native::Native;
use crate::core::registration::HostRegistration;

impl Memory {
    /// Memory whose allocation `deleter` frees; `source` names it in the trace.
    fn with_deleter(
        device: Arc<dyn Device>,
        native: Native,
        len: usize,
        source: &'static str,
        deleter: Box<dyn FnOnce(&Native) + Send + Sync>,
    ) -> Memory {
        Memory::assemble(device, native, len, Owner::Deleter(deleter, source))
    }

    /// Adopts `native` on `device` without copying; `deleter` runs when the memory is
    /// dropped (pass a no-op to keep ownership elsewhere).
    ///
    /// # Safety
    /// `native` must be a live allocation of at least `len` bytes that belongs to
    /// `device` (for OpenCL: its context; for OpenMP: its device number; for WebGPU: its
    /// `wgpu::Device`) and stays valid until `deleter` runs.
    pub unsafe fn adopt_on(
        device: Arc<dyn Device>,
        native: Native,
        len: usize,
        deleter: impl FnOnce(&Native) + Send + Sync + 'static,
    ) -> Result<Memory> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Memory::adopt_on_as(device, native, len, "adopted", deleter) }
    }

    /// [`Memory::adopt_on`], named `source` in the trace (`ipc handle`, `shared memory`).
    ///
    /// # Safety
    /// As [`Memory::adopt_on`].
    pub(crate) unsafe fn adopt_on_as(
        device: Arc<dyn Device>,
        native: Native,
        len: usize,
        source: &'static str,
        deleter: impl FnOnce(&Native) + Send + Sync + 'static,
    ) -> Result<Memory> {
        let location = device.location();
        if native.technology() != location.technology() {
            return Err(Error::Invalid(format!(
                "cannot adopt a {} handle at {location}: the handle must belong to the location's technology",
                native.technology()
            )));
        }
        device.check_adopted(&native)?;
        if native.is_pointer() && native.address().checked_add(len as u64).is_none() {
            return Err(Error::Invalid(format!(
                "{location}: cannot adopt {len} bytes at {:#x}: the range runs past the end of the address space; pass the allocation's real start and length",
                native.address()
            )));
        }
        Ok(Memory::with_deleter(
            device,
            native,
            len,
            source,
            Box::new(deleter),
        ))
    }

    /// Adopts a host vector without copying; the vector is dropped with the memory.
    /// `host` must be the host device.
    pub(crate) fn host_vec<T: bytemuck::Pod + Send + Sync>(
        host: Arc<dyn Device>,
        vec: Vec<T>,
    ) -> Memory {
        Memory::host_vec_with(host, vec, Vec::new())
    }

    /// As [`Memory::host_vec`], with `registrations` of the vector's buffer, dropped
    /// (undone) before the vector is freed.
    pub(crate) fn host_vec_with<T: bytemuck::Pod + Send + Sync>(
        host: Arc<dyn Device>,
        mut vec: Vec<T>,
        registrations: Vec<HostRegistration>,
    ) -> Memory {
        let len = std::mem::size_of_val(vec.as_slice());
        let ptr = vec.as_mut_ptr().cast::<u8>();
        // The vector's buffer is `len` live bytes of host memory, kept (moved into the
        // deleter, never touched through it) until the memory is dropped.
        let source = if registrations.is_empty() {
            "host vector"
        } else {
            "registered host vector"
        };
        Memory::with_deleter(
            host,
            Native::Host { ptr },
            len,
            source,
            Box::new(move |_| {
                drop(registrations);
                drop(vec);
            }),
        )
    }
}
