//! Memory shared between processes on one node (issue 45, item 4): made with
//! [`Memory::new_shared`], its [`IpcHandle`] sent to another process (as text), opened
//! there with [`Memory::open_ipc`]: both use the same pages in place, no copy. Host
//! memory, through a POSIX shared memory object (`backends/host/ipc.rs`), at every
//! location that uses host memory in place: the host, an OpenMP device whose memory is
//! the host's (the initial device), a SYCL device with system USM, and an OpenCL CPU
//! device (a `CL_MEM_USE_HOST_PTR` buffer over the mapping). CUDA and HIP devices share
//! their own memory through the driver's IPC memory handles.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::backends::host::ipc::{self, IpcHandle};
use crate::core::capability::InPlace;
use crate::core::device::Device;
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

/// What starts the name of a handle of device memory shared through its runtime's IPC
/// handles (`gpu-PID-HEX`: the maker's process and the driver's 64 handle bytes); a
/// shared memory object's name starts with `/`.
const DEVICE_HANDLE: &str = "gpu-";

impl IpcHandle {
    /// Whether the handle names host pages (a shared memory object any process of the
    /// node maps), not device memory of a runtime's IPC handles (which only a process
    /// with that device opens).
    pub fn is_host_pages(&self) -> bool {
        !self.name.starts_with(DEVICE_HANDLE)
    }
}

/// Device memory made shareable through its runtime's IPC handles (CUDA, HIP), by its
/// handle's key: the handle's name (see [`DEVICE_HANDLE`]).
static EXPORTED: Mutex<BTreeMap<(u64, u64), String>> = Mutex::new(BTreeMap::new());

/// `bytes` of `device`'s own memory with an IPC handle of its runtime, forgotten (and
/// freed) when the memory is dropped. The allocation is rounded up to the runtime's IPC
/// granularity, so that the handle shares this memory and none of the maker's other
/// allocations.
pub(crate) fn new_exported(device: Arc<dyn Device>, bytes: usize) -> Result<Memory> {
    let Some(handles) = device.ipc_handles() else {
        return Err(not_offered(device.location(), "Memory::new_shared"));
    };
    let granularity = handles.ipc_granularity().max(1);
    let allocated = bytes
        .max(1)
        .checked_next_multiple_of(granularity)
        .ok_or(Error::TooLarge {
            location: device.location(),
            requested: bytes,
            max: usize::MAX / granularity * granularity,
        })?;
    let native = device.allocate(allocated)?;
    let handle = match handles.ipc_export(&native) {
        Ok(h) => h,
        Err(e) => {
            // SAFETY: allocated just above, used by nothing.
            unsafe { device.free(&native, allocated) };
            return Err(e);
        }
    };
    let hex: String = handle.iter().map(|b| format!("{b:02x}")).collect();
    let name = format!("{DEVICE_HANDLE}{}-{hex}", std::process::id());
    EXPORTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(native.key(), name);
    let owner = Arc::clone(&device);
    // SAFETY: `native` is `bytes` of `device`'s memory from its `allocate`, freed once, by
    // the deleter.
    unsafe {
        Memory::adopt_on_as(
            device,
            native,
            bytes,
            "memory shared between processes",
            move |native| {
                EXPORTED
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&native.key());
                // SAFETY: from `allocate` above; dropping the memory proves nothing uses it.
                owner.free(native, allocated)
            },
        )
    }
}

/// Opens a device IPC handle (`gpu-PID-HEX`) another process made, at `handle.location`.
fn open_exported(handle: &IpcHandle, rest: &str) -> Result<Memory> {
    let at = handle.location;
    let bad = |why: &str| {
        Error::Invalid(format!(
            "{at}: Memory::open_ipc: the handle {} {why}",
            handle.name
        ))
    };
    let (pid, hex) = rest.split_once('-').ok_or_else(|| bad("is garbled"))?;
    if pid.parse::<u32>().ok() == Some(std::process::id()) {
        return Err(bad(
            "was made by this process: the driver opens a process's IPC handles in other \
             processes only; use the memory itself here",
        ));
    }
    ipc::check_node(at, handle, "device memory")?;
    let bytes = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2).unwrap_or("zz"), 16))
        .collect::<std::result::Result<Vec<u8>, _>>()
        .map_err(|_| bad("is garbled"))?;
    let device = Arc::clone(registry().device(at)?);
    let Some(handles) = device.ipc_handles() else {
        return Err(not_offered(at, "Memory::open_ipc"));
    };
    // SAFETY: the maker keeps the memory until it frees it; a handle of freed memory is
    // the driver's error. Closed once, by the deleter.
    let native = unsafe { handles.ipc_open(&bytes) }?;
    let owner = Arc::clone(&device);
    // SAFETY: opened just above: `handle.len` bytes of `device`'s memory until closed.
    unsafe {
        Memory::adopt_on_as(device, native, handle.len, "ipc handle", move |native| {
            if let Some(handles) = owner.ipc_handles() {
                // SAFETY: from `ipc_open` above, used by nothing now.
                handles.ipc_close(native)
            }
        })
    }
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
    // SAFETY: the mapping stays until the deleters below (which free an object first).
    let in_place = device
        .host_memory_in_place()
        .map(|d| unsafe { d.use_host_memory(ptr, len) });
    let native = match in_place {
        Some(Ok(InPlace::Address(native))) => {
            // SAFETY: a fresh mapping of `len` bytes of host memory, unmapped exactly
            // once, by the deleter, when the memory is dropped.
            return unsafe {
                Memory::adopt_as(at, native, len, "ipc handle", move |_| {
                    ipc::close(addr as *mut u8, len)
                })
            };
        }
        Some(Ok(InPlace::Object(native))) => native,
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
        Memory::adopt_on_as(device, native, len, "ipc handle", move |native| {
            WRAPPED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&native.key());
            // SAFETY: made by `use_host_memory` above, used by nothing now.
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
        let device = registry().device(location)?;
        if device.ipc_handles().is_some() {
            return new_exported(Arc::clone(device), bytes);
        }
        adopt_mapping(location, ipc::create(location, bytes)?, bytes, CALL)
    }

    /// The handle another process on this node opens this memory with
    /// ([`Memory::open_ipc`]); for memory made by [`Memory::new_shared`] only.
    pub fn ipc_handle(&self) -> Result<IpcHandle> {
        let at = self.location();
        if let Some(name) = EXPORTED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&self.native().key())
        {
            return Ok(IpcHandle {
                location: at,
                node: IpcHandle::this_node(),
                name: name.clone(),
                len: self.len(),
            });
        }
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
        if let Some(rest) = handle.name.strip_prefix(DEVICE_HANDLE) {
            return open_exported(handle, rest);
        }
        adopt_mapping(
            handle.location,
            ipc::open(handle.location, handle)?,
            handle.len,
            CALL,
        )
    }
}
