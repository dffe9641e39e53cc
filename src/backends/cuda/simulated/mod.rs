//! A simulated CUDA driver behind [`CudaDriver`], for CudaApi's real call layer on a
//! machine with no NVIDIA GPU: it serves every entry point of the trait
//! (`driver.rs`), each under a rule of the real driver's (a call the simulator did not
//! model would answer `CUDA_ERROR_NOT_SUPPORTED`; `tests/simulators.rs` fails on one).
//!
//! - the shared model's rules (`cuda_hip/sim_model/`): asynchronous streams, NULL-stream
//!   work and synchronous copies recorded as violations, device memory limits, kinds of
//!   memory, registration, IPC between simulated processes, batches, modules and
//!   launches, sticky errors after an illegal address, device-wide synchronisation of
//!   `cuMemFree` / `cuMemFreeHost` / `cuCtxSynchronize` recorded;
//! - **a current context per thread**: every call but initialisation, discovery's
//!   queries and the context calls fails with `CUDA_ERROR_INVALID_CONTEXT` where no
//!   retained primary context of this driver is current;
//! - **discovery's devices**: primary contexts retained and released (counted), streams
//!   created only with a context current, a stream creation that fails on a chosen
//!   device, peer access where the test allows it;
//! - **stream-ordered pools**: allocations only from a pool made with `cuMemPoolCreate`,
//!   and an attribute set on any other pool (the device's default one, which other
//!   libraries share) recorded as a violation;
//! - **batches** (`copies.rs`): the driver's version, the stream, the attribute indices
//!   and access order checked before the shared rules; the failing copy's index written;
//! - **modules** (`modules.rs`): cubins of the CUDA ABI; PTX of an ISA version the
//!   driver knows.

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::*;

use crate::backends::cuda_hip::sim_model::{Refusal, SimModel};

mod copies;
mod driver;
mod memory;
mod modules;

thread_local! {
    static CONTEXT: Cell<usize> = const { Cell::new(0) };
}

/// The simulated driver; a clone is the same driver (a test keeps one for its records).
#[derive(Clone)]
pub(super) struct SimCuda(pub(super) SimModel, pub(super) Arc<Mutex<Devices>>);

/// What discovery finds: the devices, their primary contexts' retain counts, and the
/// device (if any) whose stream creation fails.
pub(super) struct Devices {
    pub(super) count: usize,
    pub(super) retained: Vec<u32>,
    pub(super) fail_stream_on: Option<usize>,
    /// The pools `cuMemPoolCreate` made.
    pub(super) pools: Vec<usize>,
    /// `cuDriverGetVersion`'s answer (12080: CUDA 12.8).
    pub(super) version: i32,
    /// Device pairs (from, to) that may access each other's memory.
    pub(super) peer: Vec<(usize, usize)>,
    /// Peer access enabled so far (from, to).
    pub(super) peer_enabled: Vec<(usize, usize)>,
    initialised: bool,
}

/// Device `d`'s primary context (the stream made on it is 0x100 above; device 0's are
/// the handles `CudaApi::simulated` uses).
fn context_of(d: usize) -> usize {
    0x7000 + 0x1000 * d
}

impl SimCuda {
    /// A driver whose one device has `memory` bytes, initialised and its primary
    /// context retained (as discovery leaves it: `CudaApi::simulated` stands for an api
    /// after discovery).
    pub(super) fn new(memory: usize) -> SimCuda {
        let sim = SimCuda::with_devices(memory, 1);
        let mut devices = sim.devices();
        devices.initialised = true;
        devices.retained[0] = 1;
        drop(devices);
        sim
    }

    /// A driver with `count` devices (discovery's tests).
    pub(super) fn with_devices(memory: usize, count: usize) -> SimCuda {
        let devices = Devices {
            count,
            retained: vec![0; count],
            fail_stream_on: None,
            pools: Vec::new(),
            version: 12080,
            peer: Vec::new(),
            peer_enabled: Vec::new(),
            initialised: false,
        };
        SimCuda(SimModel::new(memory), Arc::new(Mutex::new(devices)))
    }

    /// As [`SimCuda::new`], its streams also progressing on their own.
    pub(super) fn progressing(memory: usize) -> SimCuda {
        let sim = SimCuda::new(memory);
        SimCuda(SimModel::progressing(memory), sim.1)
    }

    /// The context current on this thread (0: none).
    pub(super) fn current_context() -> usize {
        CONTEXT.with(Cell::get)
    }

    /// Makes `ctx` current on this thread, as another library would.
    pub(super) fn set_current_context(ctx: usize) {
        CONTEXT.with(|c| c.set(ctx));
    }

    pub(super) fn devices(&self) -> std::sync::MutexGuard<'_, Devices> {
        self.1.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `Ok(device)` for a device handle discovery may use: the driver initialised and
    /// the ordinal below the count.
    fn device(&self, dev: i32) -> Result<usize, CUresult> {
        let devices = self.devices();
        if !devices.initialised {
            return Err(CUresult::CUDA_ERROR_NOT_INITIALIZED);
        }
        match usize::try_from(dev) {
            Ok(d) if d < devices.count => Ok(d),
            _ => Err(CUresult::CUDA_ERROR_INVALID_DEVICE),
        }
    }

    /// The device whose retained primary context is current on this thread; the
    /// illegal address that lost the context, if one did; the driver's end.
    fn gate(&self) -> Result<usize, CUresult> {
        if self.0.called_after_deinitialisation("a CUDA driver call") {
            return Err(CUresult::CUDA_ERROR_DEINITIALIZED);
        }
        if self.0.poisoned().is_some() {
            return Err(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        }
        let ctx = CONTEXT.with(Cell::get);
        let devices = self.devices();
        (0..devices.count)
            .find(|&d| context_of(d) == ctx && devices.retained[d] > 0)
            .ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)
    }

    fn status(ok: bool, otherwise: CUresult) -> CUresult {
        match ok {
            true => CUresult::CUDA_SUCCESS,
            false => otherwise,
        }
    }

    /// The driver's code for a refusal of the shared model.
    fn code(refusal: Refusal) -> CUresult {
        match refusal {
            Refusal::InvalidValue => CUresult::CUDA_ERROR_INVALID_VALUE,
            Refusal::AlreadyRegistered => CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
            Refusal::NotRegistered => CUresult::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
            Refusal::IllegalAddress => CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            Refusal::InvalidContext => CUresult::CUDA_ERROR_INVALID_CONTEXT,
            Refusal::NotFound => CUresult::CUDA_ERROR_NOT_FOUND,
            Refusal::InvalidHandle => CUresult::CUDA_ERROR_INVALID_HANDLE,
        }
    }

    /// `Ok` as success, a refusal as its code.
    fn result<T>(r: Result<T, Refusal>) -> CUresult {
        r.map_or_else(Self::code, |_| CUresult::CUDA_SUCCESS)
    }
}

/// Writes `value` through a caller's out-pointer.
///
/// # Safety
/// `out` is valid for a write of `T`.
unsafe fn out<T>(out: *mut T, value: T) -> CUresult {
    // SAFETY: per the caller's contract.
    unsafe { out.write(value) };
    CUresult::CUDA_SUCCESS
}
