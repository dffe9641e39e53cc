//! Memory shared between processes on one node (issue 45, item 4): made with
//! [`Memory::new_shared`], its [`IpcHandle`] sent to another process (as text), opened
//! there with [`Memory::open_ipc`]: both use the same pages in place, no copy. Host
//! memory, through a POSIX shared memory object (`backends/host/ipc.rs`), at the host
//! and at an OpenMP device whose memory is the host's (the initial device).

use crate::backends::host::ipc::{self, IpcHandle};
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::Native;
use crate::runtime::registry::registry;

/// Why `at` has no memory shared between processes yet, and what to use.
fn not_offered(at: Location, call: &str) -> Error {
    Error::Invalid(format!(
        "{at}: {call}: memory shared between processes is offered for host memory only (a \
         POSIX shared memory object; at the host, or an OpenMP device that uses host \
         memory); share host memory (`Memory::new_shared(Location::Host, n)`) and copy it \
         to {at} in each process"
    ))
}

/// The native handle of shared host memory at `ptr` for `at`: where the device there
/// uses host memory as its own ([`Device::host_memory_as_native`]).
///
/// [`Device::host_memory_as_native`]: crate::core::device::Device::host_memory_as_native
fn native_at(at: Location, ptr: *mut u8, call: &str) -> Result<Native> {
    registry()
        .device(at)?
        .host_memory_as_native(ptr)
        .ok_or_else(|| not_offered(at, call))
}

/// The mapping of `len` bytes at `ptr` (from `ipc::create` or `ipc::open`) as memory at
/// `at`, unmapped (and, for the maker, unlinked) when dropped; unmapped at once if `at`
/// cannot take it.
fn adopt_mapping(at: Location, ptr: *mut u8, len: usize, call: &str) -> Result<Memory> {
    let native = match native_at(at, ptr, call) {
        Ok(n) => n,
        Err(e) => {
            // SAFETY: the mapping just made, not used.
            unsafe { ipc::close(ptr, len) };
            return Err(e);
        }
    };
    let addr = ptr as usize;
    // SAFETY: a fresh mapping of `len` bytes of host memory, unmapped exactly once, by
    // the deleter, when the memory is dropped.
    unsafe { Memory::adopt(at, native, len, move |_| ipc::close(addr as *mut u8, len)) }
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
        // Checked before anything is made.
        native_at(location, std::ptr::null_mut(), CALL)?;
        adopt_mapping(location, ipc::create(location, bytes)?, bytes, CALL)
    }

    /// The handle another process on this node opens this memory with
    /// ([`Memory::open_ipc`]); for memory made by [`Memory::new_shared`] only.
    pub fn ipc_handle(&self) -> Result<IpcHandle> {
        let at = self.location();
        // Made by `new_shared`: host memory at every location that takes it.
        let ptr = self.native().address() as *mut u8;
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
        // Checked before anything is opened.
        native_at(handle.location, std::ptr::null_mut(), CALL)?;
        adopt_mapping(
            handle.location,
            ipc::open(handle.location, handle)?,
            handle.len,
            CALL,
        )
    }
}
