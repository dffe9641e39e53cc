//! The simulated runtime's memory rules beyond allocation: each allocation's kind, the
//! pointer queries that find an allocation from any address in it, advice (for memory
//! paged in on use only), and host memory registered in place: a range overlapping one
//! registered already, or inside the driver's own pinned memory, is refused
//! (`CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`); unregistering needs the registered
//! start (an interior pointer is `..._NOT_REGISTERED`); a registration the device
//! cannot reach (no `DEVICEMAP` / `hipHostRegisterMapped`) is recorded as a violation,
//! since a device-side use of it then faults.

use super::{Refusal, SimModel};

/// What an allocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Device memory (`cuMemAlloc`, `hipMalloc`).
    Device,
    /// The driver's pinned host memory (`cuMemHostAlloc`, `hipHostMalloc`).
    Pinned,
    /// Managed memory, paged in on use (`cuMemAllocManaged`, `hipMallocManaged`).
    Managed,
    /// Stream-ordered memory from a pool (`cuMemAllocFromPoolAsync`).
    Pool,
}

/// What a pointer query finds at an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Inside an allocation: its start, size and kind.
    Allocation(usize, usize, Kind),
    /// Inside registered host memory: its start, length and whether it was registered
    /// device-mapped.
    Registered(usize, usize, bool),
}

impl Found {
    /// The start and length of what the address lies in.
    pub(crate) fn range(self) -> (usize, usize) {
        match self {
            Found::Allocation(start, size, _) | Found::Registered(start, size, _) => (start, size),
        }
    }
}

impl SimModel {
    /// What lies at `ptr`: an allocation it points into, or registered host memory.
    pub(crate) fn find(&self, ptr: usize) -> Option<Found> {
        let state = self.lock();
        let allocation = state.sizes.iter().find_map(|(&start, &size)| {
            (start..start + size.max(1))
                .contains(&ptr)
                .then(|| Found::Allocation(start, size, state.kinds[&start]))
        });
        allocation.or_else(|| {
            state
                .registered
                .iter()
                .find(|&&(s, l, _)| (s..s + l).contains(&ptr))
                .map(|&(start, len, mapped)| Found::Registered(start, len, mapped))
        })
    }

    /// Advice for `len` bytes at `ptr`: only for managed memory.
    pub(crate) fn advise(&self, call: &'static str, ptr: usize, len: usize) -> Result<(), Refusal> {
        self.record(call, 0);
        match self.find(ptr) {
            Some(Found::Allocation(start, size, Kind::Managed)) if ptr + len <= start + size => {
                Ok(())
            }
            _ => Err(Refusal::InvalidValue),
        }
    }

    /// Registers `len` bytes of host memory at `ptr` in place; `mapped`: with the flag
    /// that maps it into the device's address space.
    pub(crate) fn register(
        &self,
        call: &'static str,
        ptr: usize,
        len: usize,
        mapped: bool,
    ) -> Result<(), Refusal> {
        self.record(call, 0);
        if ptr == 0 || len == 0 {
            return Err(Refusal::InvalidValue);
        }
        let overlaps = |s: usize, l: usize| ptr < s + l.max(1) && s < ptr + len;
        let mut state = self.lock();
        let pinned = state
            .sizes
            .iter()
            .any(|(&s, &l)| state.kinds[&s] == Kind::Pinned && overlaps(s, l));
        if pinned || state.registered.iter().any(|&(s, l, _)| overlaps(s, l)) {
            return Err(Refusal::AlreadyRegistered);
        }
        if !mapped {
            state.violations.push(format!(
                "{call} of {len} bytes at {ptr:#x} without the flag that maps it into the \
                 device: the device faults where it reads it"
            ));
        }
        state.registered.push((ptr, len, mapped));
        Ok(())
    }

    /// Ends the registration that starts at `ptr`; the call waits for the whole device
    /// where `device_wide` (ROCm's `hipHostUnregister`).
    pub(crate) fn unregister(
        &self,
        call: &'static str,
        ptr: usize,
        device_wide: bool,
    ) -> Result<(), Refusal> {
        match device_wide {
            true => self.synchronize_device(call),
            false => self.record(call, 0),
        }
        let mut state = self.lock();
        match state.registered.iter().position(|&(s, _, _)| s == ptr) {
            Some(i) => {
                state.registered.swap_remove(i);
                Ok(())
            }
            None => Err(Refusal::NotRegistered),
        }
    }

    /// The registered ranges now (start, length, mapped).
    pub(crate) fn registered(&self) -> Vec<(usize, usize, bool)> {
        self.lock().registered.clone()
    }

    /// Whether the device reads registered host memory at its host address
    /// (`CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`).
    pub(crate) fn host_pointer_for_registered(&self) -> bool {
        self.lock().host_pointer_for_registered
    }

    /// Makes the device read registered host memory at its host address, or not (then
    /// only through the device pointer the driver gives for it).
    pub(crate) fn set_host_pointer_for_registered(&self, usable: bool) {
        self.lock().host_pointer_for_registered = usable;
    }
}
