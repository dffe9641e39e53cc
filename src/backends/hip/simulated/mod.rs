//! A simulated HIP runtime behind [`HipRuntime`], [`HipPool`] and [`Hiprtc`] (issue 48:
//! the simulator serves HIP's entry points too; issue 61, item 2: all of them), for
//! HipApi's real call layer on a machine with no AMD GPU. Every entry point of the three
//! traits is served under a rule of the real runtime's (`tests/simulators.rs` fails on
//! one left to the traits' "not supported" default):
//!
//! - the shared model's rules (`cuda_hip/sim_model/`): asynchronous streams, no
//!   NULL-stream work, device memory limits, kinds of memory, registration (ROCm's
//!   `hipHostUnregister` and `hipFree` wait for the whole device: recorded), IPC between
//!   simulated processes, modules and launches, sticky errors after an illegal address;
//! - a current device per thread; discovery's devices (streams made on the current
//!   device; a stream creation that fails on a chosen device); peer access where the
//!   test allows it;
//! - stream-ordered pools: allocations only from a pool made with `hipMemPoolCreate`;
//!   an attribute set on any other pool (the device's default one, shared with other
//!   libraries) recorded as a violation (`pool.rs`);
//! - hiprtc (`rtc.rs`): no `--offload-arch`, or an included `<hip/hip_runtime.h>`,
//!   fails the compile; the code object names the source's kernels.

use std::cell::Cell;
use std::os::raw::{c_char, c_int};
use std::sync::{Arc, Mutex};

use super::sys::*;
use crate::backends::cuda_hip::sim_model::{Refusal, SimModel};

mod pool;
mod rect;
mod rtc;
mod runtime;

pub(super) use rtc::SimHiprtc;

thread_local! {
    static DEVICE: Cell<c_int> = const { Cell::new(0) };
}

/// The simulated runtime; a clone is the same runtime (a test keeps one for its records).
#[derive(Clone)]
pub(super) struct SimHip(pub(super) SimModel, pub(super) Arc<Mutex<Devices>>);

/// What discovery finds: how many devices, the device (if any) whose stream creation
/// fails, the pools made, and peer access.
pub(super) struct Devices {
    pub(super) count: c_int,
    pub(super) fail_stream_on: Option<c_int>,
    /// The pools `hipMemPoolCreate` made (0: destroyed).
    pub(super) pools: Vec<usize>,
    /// Device pairs (from, to) that may access each other's memory.
    pub(super) peer: Vec<(c_int, c_int)>,
    /// Peer access enabled so far (from, to).
    pub(super) peer_enabled: Vec<(c_int, c_int)>,
}

impl SimHip {
    /// A runtime whose one device has `memory` bytes.
    pub(super) fn new(memory: usize) -> SimHip {
        SimHip::with_devices(memory, 1)
    }

    /// A runtime with `count` devices (discovery's tests).
    pub(super) fn with_devices(memory: usize, count: c_int) -> SimHip {
        let devices = Devices {
            count,
            fail_stream_on: None,
            pools: Vec::new(),
            peer: Vec::new(),
            peer_enabled: Vec::new(),
        };
        SimHip(SimModel::new(memory), Arc::new(Mutex::new(devices)))
    }

    /// As [`SimHip::new`], its streams also progressing on their own.
    pub(super) fn progressing(memory: usize) -> SimHip {
        let sim = SimHip::new(memory);
        SimHip(SimModel::progressing(memory), sim.1)
    }

    /// The device current on this thread.
    pub(super) fn current_device() -> c_int {
        DEVICE.with(Cell::get)
    }

    /// Makes `device` current on this thread, as another library would.
    pub(super) fn set_current_device(device: c_int) {
        DEVICE.with(|d| d.set(device));
    }

    pub(super) fn devices(&self) -> std::sync::MutexGuard<'_, Devices> {
        self.1.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn valid(&self, device: c_int) -> bool {
        (0..self.devices().count).contains(&device)
    }

    /// The current device, or the illegal address that lost the context, or the
    /// runtime's end.
    fn gate(&self) -> Result<c_int, hipError_t> {
        if self.0.called_after_deinitialisation("a HIP runtime call") {
            return Err(hipError_t_hipErrorDeinitialized);
        }
        match self.0.poisoned() {
            Some(_) => Err(hipError_t_hipErrorIllegalAddress),
            None => Ok(DEVICE.with(Cell::get)),
        }
    }

    fn known(found: bool) -> hipError_t {
        match found {
            true => hipError_t_hipSuccess,
            false => hipError_t_hipErrorInvalidHandle,
        }
    }

    /// The runtime's code for a refusal of the shared model.
    fn code(refusal: Refusal) -> hipError_t {
        match refusal {
            Refusal::InvalidValue => hipError_t_hipErrorInvalidValue,
            Refusal::AlreadyRegistered => hipError_t_hipErrorHostMemoryAlreadyRegistered,
            Refusal::NotRegistered => hipError_t_hipErrorHostMemoryNotRegistered,
            Refusal::IllegalAddress => hipError_t_hipErrorIllegalAddress,
            Refusal::InvalidContext => hipError_t_hipErrorInvalidContext,
            Refusal::NotFound => hipError_t_hipErrorNotFound,
            Refusal::InvalidHandle => hipError_t_hipErrorInvalidHandle,
        }
    }

    /// `Ok` as success, a refusal as its code.
    fn result<T>(r: Result<T, Refusal>) -> hipError_t {
        r.map_or_else(Self::code, |_| hipError_t_hipSuccess)
    }
}

/// Writes `value` through a caller's out-pointer.
///
/// # Safety
/// `out` is valid for a write of `T`.
unsafe fn out<T>(out: *mut T, value: T) -> hipError_t {
    // SAFETY: per the caller's contract.
    unsafe { out.write(value) };
    hipError_t_hipSuccess
}

/// The runtime's name of `code` (`hipErrorIllegalAddress`), for the codes the
/// simulator gives.
#[allow(non_upper_case_globals)]
fn error_name(code: hipError_t) -> *const c_char {
    let name = match code {
        hipError_t_hipSuccess => c"hipSuccess",
        hipError_t_hipErrorInvalidValue => c"hipErrorInvalidValue",
        hipError_t_hipErrorOutOfMemory => c"hipErrorOutOfMemory",
        hipError_t_hipErrorInvalidDevice => c"hipErrorInvalidDevice",
        hipError_t_hipErrorInvalidImage => c"hipErrorInvalidImage",
        hipError_t_hipErrorInvalidContext => c"hipErrorInvalidContext",
        hipError_t_hipErrorInvalidHandle => c"hipErrorInvalidHandle",
        hipError_t_hipErrorNotFound => c"hipErrorNotFound",
        hipError_t_hipErrorIllegalAddress => c"hipErrorIllegalAddress",
        hipError_t_hipErrorPeerAccessUnsupported => c"hipErrorPeerAccessUnsupported",
        hipError_t_hipErrorPeerAccessAlreadyEnabled => c"hipErrorPeerAccessAlreadyEnabled",
        hipError_t_hipErrorHostMemoryAlreadyRegistered => c"hipErrorHostMemoryAlreadyRegistered",
        hipError_t_hipErrorHostMemoryNotRegistered => c"hipErrorHostMemoryNotRegistered",
        hipError_t_hipErrorNotSupported => c"hipErrorNotSupported",
        hipError_t_hipErrorDeinitialized => c"hipErrorDeinitialized",
        _ => c"hipErrorUnknown",
    };
    name.as_ptr()
}
