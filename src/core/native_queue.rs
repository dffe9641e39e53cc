//! A runtime's own queue, as a user made it: [`NativeQueue`] names one (a CUDA or HIP
//! stream, an OpenCL command queue, a SYCL queue, a wgpu queue), and [`ForeignQueue`] is
//! how a backend orders locus's work against one it adopted
//! ([`QueueAdoption::adopt_queue`](super::capability::QueueAdoption::adopt_queue)), without a host wait
//! where the runtime allows it.

use super::completion::Completion;
use super::error::{Error, Result};
use super::location::Location;

/// A runtime's own queue: one a user made (to adopt it, `locus::Queue::from_native`), or
/// the one locus submits to at a location (`locus::Queue::native_at`). Raw handles are
/// the runtime's own types as integers or pointers; locus never destroys one it did not
/// create.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NativeQueue {
    /// A `cl_command_queue`.
    OpenCl(*mut std::ffi::c_void),
    /// A `DPCTLSyclQueueRef`: a pointer to a `sycl::queue` (dpctl's C API; dpctl's
    /// `SyclQueue.addressof_ref()`).
    Sycl(*mut std::ffi::c_void),
    /// A `CUstream` / `cudaStream_t` of device `ordinal` (0 is the legacy default
    /// stream).
    Cuda {
        /// The stream.
        stream: u64,
        /// The device whose context it belongs to.
        ordinal: u32,
    },
    /// A `hipStream_t` of device `ordinal`.
    Hip {
        /// The stream.
        stream: u64,
        /// The device.
        ordinal: u32,
    },
    /// The `wgpu::Queue` of locus's WebGPU device (WebGPU has one queue per device).
    #[cfg(feature = "webgpu")]
    WebGpu(wgpu::Queue),
}

// SAFETY: the raw handles are names of runtime objects every one of these runtimes lets
// any thread use (OpenCL 1.1+, SYCL, CUDA and HIP streams); the enum only carries them.
unsafe impl Send for NativeQueue {}
// SAFETY: as above; shared references only read the names.
unsafe impl Sync for NativeQueue {}

impl NativeQueue {
    /// The queue a raw handle names at `at` (a `cl_command_queue`, a `DPCTLSyclQueueRef`,
    /// a `CUstream` or `hipStream_t` of that device), for callers that hold the handle as
    /// a number (C, Python); `None` where the technology has no queue to adopt by number.
    pub fn from_raw(at: Location, handle: u64) -> Option<NativeQueue> {
        Some(match at {
            Location::OpenCl(_) => NativeQueue::OpenCl(handle as usize as *mut _),
            Location::Sycl(_) => NativeQueue::Sycl(handle as usize as *mut _),
            Location::Cuda(ordinal) => NativeQueue::Cuda {
                stream: handle,
                ordinal,
            },
            Location::Hip(ordinal) => NativeQueue::Hip {
                stream: handle,
                ordinal,
            },
            _ => return None,
        })
    }

    /// The error of a backend at `at` handed this queue of another technology; `takes`
    /// names what it adopts (`OpenCL command queues`).
    pub fn refused_at(&self, at: Location, takes: &str) -> Error {
        Error::Invalid(format!(
            "{at}: cannot adopt {}: a {} location adopts {takes}",
            self.describe(),
            at.technology().name()
        ))
    }

    /// The technology's name and the handle, for messages (`OpenCL queue 0x55d0...`).
    pub fn describe(&self) -> String {
        match self {
            NativeQueue::OpenCl(q) => format!("OpenCL command queue {q:?}"),
            NativeQueue::Sycl(q) => format!("SYCL queue {q:?}"),
            NativeQueue::Cuda { stream, ordinal } => {
                format!("CUDA stream {stream:#x} of device {ordinal}")
            }
            NativeQueue::Hip { stream, ordinal } => {
                format!("HIP stream {stream:#x} of device {ordinal}")
            }
            #[cfg(feature = "webgpu")]
            NativeQueue::WebGpu(_) => "a wgpu queue".into(),
        }
    }
}

/// Opens a gate [`ForeignQueue::gate`] queued: `true` once the work it stood for
/// succeeded, `false` to fail what waits behind it.
pub type Gate = Box<dyn FnOnce(bool) + Send>;

/// A queue a backend adopted: what the run-time layer asks of it to order locus's work
/// after the work a user submitted there, and the user's later work after locus's.
pub trait ForeignQueue: Send + Sync {
    /// The handle adopted.
    fn native(&self) -> NativeQueue;
    /// Work that completes once everything submitted to the queue so far has (a marker
    /// or barrier the runtime queues); `None` where locus's own work is already ordered
    /// after the queue's (the queue is the device's only queue: WebGPU).
    fn marker(&self) -> Result<Option<Completion>>;
    /// Orders the queue's later work after `work` on the device (a barrier with its
    /// event, `cuStreamWaitEvent`); false, queuing nothing, where this runtime cannot
    /// wait for that work.
    fn follow(&self, work: &Completion) -> Result<bool>;
    /// Holds the queue's later work until the returned gate is opened (an OpenCL user
    /// event in a barrier): for work of another runtime or a worker thread that
    /// [`ForeignQueue::follow`] cannot take. `None` where the runtime has no such
    /// thing; the caller then waits on the host.
    fn gate(&self) -> Result<Option<Gate>> {
        Ok(None)
    }
    /// Blocks until everything submitted to the queue is done (`clFinish`,
    /// `queue.wait()`, `cuStreamSynchronize`).
    fn synchronize(&self) -> Result<()>;
}
