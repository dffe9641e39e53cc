//! Memory shared between processes on one node (issue 45, item 4): made with
//! [`Memory::new_shared`], its [`IpcHandle`] sent to another process (as text), opened
//! there with [`Memory::open_ipc`]: both use the same pages in place, no copy. Host
//! memory, through a POSIX shared memory object (`backends/host/ipc.rs`), at every
//! location that uses host memory in place: the host, an OpenMP device whose memory is
//! the host's (the initial device), a SYCL device with system USM, and an OpenCL CPU
//! device (a `CL_MEM_USE_HOST_PTR` buffer over the mapping).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::backends::host::ipc::{self, IpcHandle};
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::runtime::registry::registry;

/// Why `at` has no memory shared between processes, and what to use.
fn not_offered(at: Location, call: &str) -> Error {
    Error::Invalid(format!(
        "{at}: {call}: memory shared between processes is host memory (a POSIX shared \
         memory object), offered where a location uses host memory in place (the host, an \
         OpenMP device that runs on the host, a SYCL device with system USM, an OpenCL CPU \
         device); {at} does not; share host memory (`Memory::new_shared(Location::Host, \
         n)`) and copy it to {at} in each process"
    ))
}

/// The mapping's address behind memory whose handle is an object (OpenCL), by the
/// handle's key: what [`Memory::ipc_handle`] names.
static WRAPPED: Mutex<BTreeMap<(u64, u64), usize>> = Mutex::new(BTreeMap::new());

/// The mapping of `len` bytes at `ptr` (from `ipc::create` or `ipc::open`) as memory at
/// `at`: host memory as the device's own where it takes host addresses, else a memory
/// object of the device over it; the object is released and the mapping unmapped (and,
/// for the maker, unlinked) when the memory is dropped. On a refusal the mapping is
/// unmapped at once.
fn adopt_mapping(at: Location, ptr: *mut u8, len: usize, call: &str) -> Result<Memory> {
    let device = match registry().device(at) {
        Ok(d) => Arc::clone(d),
        Err(e) => {
            // SAFETY: the mapping just made, not used.
            unsafe { ipc::close(ptr, len) };
            return Err(e);
        }
    };
    let addr = ptr as usize;
    if let Some(native) = device.host_memory_as_native(ptr) {
        // SAFETY: a fresh mapping of `len` bytes of host memory, unmapped exactly once,
        // by the deleter, when the memory is dropped.
        return unsafe {
            Memory::adopt(at, native, len, move |_| ipc::close(addr as *mut u8, len))
        };
    }
    // SAFETY: the mapping stays until the deleter below, which frees the object first.
    let native = match unsafe { device.wrap_host_memory(ptr, len) } {
        Some(Ok(native)) => native,
        refused => {
            // SAFETY: the mapping just made, not used.
            unsafe { ipc::close(ptr, len) };
            return Err(match refused {
                Some(Err(e)) => e,
                _ => not_offered(at, call),
            });
        }
    };
    let key = native.key();
    WRAPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, addr);
    let owner = Arc::clone(&device);
    // SAFETY: the object is `device`'s, over `len` live bytes of the mapping; the deleter
    // releases it (the device's `free` of a wrapped object), then unmaps.
    unsafe {
        Memory::adopt_on(device, native, len, move |native| {
            WRAPPED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&native.key());
            // SAFETY: made by `wrap_host_memory` above, used by nothing now.
            owner.free(native, len);
            ipc::close(addr as *mut u8, len)
        })
    }
}

impl Memory {
    /// Allocates `bytes` of memory at `location` that other processes on this node can
    /// open in place with its [`Memory::ipc_handle`]: host memory (a POSIX shared memory
    /// object, mapped in each process). Dropping it unlinks the name: processes that
    /// opened it keep their mapping, later opens fail.
    ///
    /// ```
    /// use locus::{IpcHandle, Location, Memory};
    /// let shared = Memory::new_shared(Location::Host, 4096)?;
    /// shared.write(0, b"hello")?;
    /// let text = shared.ipc_handle()?.to_string(); // send it to another process
    /// let there = Memory::open_ipc(&IpcHandle::parse(&text)?)?; // in that process
    /// let mut got = [0u8; 5];
    /// there.read(0, &mut got)?;
    /// assert_eq!(&got, b"hello");
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn new_shared(location: Location, bytes: usize) -> Result<Memory> {
        const CALL: &str = "Memory::new_shared";
        // An absent location is an error before anything is made.
        registry().device(location)?;
        adopt_mapping(location, ipc::create(location, bytes)?, bytes, CALL)
    }

    /// The handle another process on this node opens this memory with
    /// ([`Memory::open_ipc`]); for memory made by [`Memory::new_shared`] only.
    pub fn ipc_handle(&self) -> Result<IpcHandle> {
        let at = self.location();
        // Made by `new_shared`: host memory at every location that takes it, or an
        // object over it.
        let ptr = WRAPPED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&self.native().key())
            .map_or(self.native().address() as *const u8, |&a| a as *const u8);
        ipc::handle_of(at, ptr).ok_or_else(|| {
            Error::Invalid(format!(
                "{at}: Memory::ipc_handle: this memory was not made shareable; allocate it \
                 with Memory::new_shared"
            ))
        })
    }

    /// Opens memory another process on this node made shareable, from its handle: the
    /// same pages, used in place. Errors name what is wrong: a handle of another node, of
    /// memory its maker freed already, of a location that shares nothing.
    pub fn open_ipc(handle: &IpcHandle) -> Result<Memory> {
        const CALL: &str = "Memory::open_ipc";
        registry().device(handle.location)?;
        adopt_mapping(
            handle.location,
            ipc::open(handle.location, handle)?,
            handle.len,
            CALL,
        )
    }
}
