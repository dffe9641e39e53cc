//! Kernel launches, backend-neutral: the arguments handed to a backend and the handle
//! it returns to wait on. Each backend builds and caches its kernels (OpenCL programs,
//! SYCL kernel bundles, wgpu pipelines) and launches them on its own queue.

use super::Memory;
use crate::error::{Error, Result};

/// One kernel argument, in the kernel's parameter order.
#[derive(Debug, Clone, Copy)]
pub enum LaunchArg<'a> {
    /// A buffer parameter: the allocation the kernel reads or writes.
    Memory(&'a Memory),
    /// A 32-bit float scalar.
    F32(f32),
    /// A 32-bit unsigned scalar.
    U32(u32),
    /// A 32-bit signed scalar.
    I32(i32),
}

impl LaunchArg<'_> {
    /// The scalar's bytes (native endian), or `None` for a buffer.
    pub fn scalar_bytes(&self) -> Option<[u8; 4]> {
        match self {
            LaunchArg::Memory(_) => None,
            LaunchArg::F32(v) => Some(v.to_ne_bytes()),
            LaunchArg::U32(v) => Some(v.to_ne_bytes()),
            LaunchArg::I32(v) => Some(v.to_ne_bytes()),
        }
    }
}

/// The work to launch: a kernel source in the technology's language, its entry point,
/// the workgroup size it declares (WGSL) and the global size.
#[derive(Debug, Clone, Copy)]
pub struct LaunchSpec<'a> {
    /// Kernel source text (WGSL, OpenCL C), or the OpenMP entry name.
    pub source: &'a str,
    /// Entry point (kernel function) name.
    pub entry: &'a str,
    /// Workgroup size the source declares (used by WebGPU to size the dispatch).
    pub workgroup: [u32; 3],
    /// Global size in work items, `[x, y]` (y = 1 for 1-D).
    pub global: [usize; 2],
    /// 1 or 2.
    pub dims: usize,
}

/// Completion of work on a queue that a backend tracks itself (a CUDA or HIP stream
/// event).
pub(crate) trait NativeWait: Send + Sync {
    /// True once the work is done (does not block).
    fn poll(&self) -> bool;
    /// Blocks until the work is done.
    fn wait(&self) -> Result<()>;
}

enum Pending {
    Done,
    #[allow(dead_code)] // made by the GPU backends (features)
    Custom(Box<dyn NativeWait>),
    #[cfg(feature = "opencl")]
    OpenCl(opencl3::event::Event),
    #[cfg(feature = "sycl")]
    Sycl {
        api: &'static super::sycl::bindings::DpctlApi,
        event: super::sycl::bindings::DPCTLSyclEventRef,
    },
    #[cfg(feature = "webgpu")]
    WebGpu {
        device: wgpu::Device,
        /// The device's location (work on one wgpu queue runs in submission order).
        location: crate::Location,
        index: wgpu::SubmissionIndex,
        /// Set by the queue's work-done callback (for polling without a wait).
        done: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    },
}

/// A launched kernel: wait on it with [`Completion::wait`]. Dropping it waits too, so
/// memory a kernel uses can never be freed or reused under it.
pub struct Completion {
    pending: Pending,
}

// SAFETY: the handles inside (an OpenCL event, a SYCL event, a wgpu submission index)
// may be waited on from any thread.
unsafe impl Send for Completion {}
// SAFETY: its `&self` methods only query or wait (clGetEventInfo / clWaitForEvents, the
// SYCL event's status and wait, wgpu's device poll, `NativeWait`, which is Sync): each
// runtime allows those on one handle from several threads at once.
unsafe impl Sync for Completion {}

impl Completion {
    /// Already finished (host and OpenMP launches run to completion).
    pub fn done() -> Completion {
        Completion {
            pending: Pending::Done,
        }
    }

    /// Work tracked by the backend itself.
    #[allow(dead_code)] // made by the GPU backends (features)
    pub(crate) fn custom(wait: Box<dyn NativeWait>) -> Completion {
        Completion {
            pending: Pending::Custom(wait),
        }
    }

    #[cfg(feature = "opencl")]
    pub(crate) fn opencl(event: opencl3::event::Event) -> Completion {
        Completion {
            pending: Pending::OpenCl(event),
        }
    }

    #[cfg(feature = "sycl")]
    pub(crate) fn sycl(
        api: &'static super::sycl::bindings::DpctlApi,
        event: super::sycl::bindings::DPCTLSyclEventRef,
    ) -> Completion {
        Completion {
            pending: Pending::Sycl { api, event },
        }
    }

    /// A wgpu submission on the device at `location`; `done`, when given, is set from
    /// `Queue::on_submitted_work_done` (polling without a wait).
    #[cfg(feature = "webgpu")]
    pub(crate) fn webgpu(
        device: wgpu::Device,
        location: crate::Location,
        index: wgpu::SubmissionIndex,
        done: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    ) -> Completion {
        Completion {
            pending: Pending::WebGpu {
                device,
                location,
                index,
                done,
            },
        }
    }

    /// The WebGPU device whose queue runs this work, if it is a wgpu submission (later
    /// submissions on that device run after it without a wait).
    #[cfg(feature = "webgpu")]
    pub(crate) fn webgpu_location(&self) -> Option<crate::Location> {
        match &self.pending {
            Pending::WebGpu { location, .. } => Some(*location),
            _ => None,
        }
    }

    /// The SYCL event behind this completion, if it is one (for native dependencies).
    #[cfg(feature = "sycl")]
    pub(crate) fn sycl_event(&self) -> Option<super::sycl::bindings::DPCTLSyclEventRef> {
        match &self.pending {
            Pending::Sycl { event, .. } => Some(*event),
            _ => None,
        }
    }

    /// The OpenCL event behind this completion, if it is one (for native dependencies).
    #[cfg(feature = "opencl")]
    pub(crate) fn opencl_event(&self) -> Option<opencl3::types::cl_event> {
        match &self.pending {
            Pending::OpenCl(e) => Some(e.get()),
            _ => None,
        }
    }

    /// True when the work is known to be finished, without blocking (OpenCL and SYCL
    /// events report it, and wgpu copies through their work-done callback; kernels of
    /// the others only once waited for).
    pub fn poll_complete(&self) -> bool {
        match &self.pending {
            Pending::Done => true,
            Pending::Custom(w) => w.poll(),
            #[cfg(feature = "opencl")]
            Pending::OpenCl(e) => e
                .command_execution_status()
                .is_ok_and(|s| s.0 == opencl3::event::CL_COMPLETE),
            #[cfg(feature = "sycl")]
            Pending::Sycl { api, event } => {
                // SAFETY: a live event owned by this completion.
                let status = unsafe { api.DPCTLEvent_GetCommandExecutionStatus(*event) };
                status == super::sycl::bindings::DPCTLSyclEventStatusType_DPCTL_COMPLETE
            }
            #[cfg(feature = "webgpu")]
            Pending::WebGpu {
                device,
                done: Some(done),
                ..
            } => {
                let _ = device.poll(wgpu::PollType::Poll);
                done.load(std::sync::atomic::Ordering::Acquire)
            }
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// Blocks until the kernel has finished.
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    /// Blocks until the work has finished, keeping the native handle (for an event
    /// whose handle others may still name as a dependency; released at drop).
    pub(crate) fn block(&self) -> Result<()> {
        match &self.pending {
            Pending::Done => Ok(()),
            Pending::Custom(w) => w.wait(),
            #[cfg(feature = "opencl")]
            Pending::OpenCl(event) => event
                .wait()
                .map_err(|e| Error::Invalid(format!("waiting for an OpenCL command: {e}"))),
            #[cfg(feature = "sycl")]
            Pending::Sycl { api, event } => {
                // SAFETY: a live event owned by this completion (deleted only at drop).
                unsafe { api.DPCTLEvent_Wait(*event) };
                Ok(())
            }
            #[cfg(feature = "webgpu")]
            Pending::WebGpu { device, index, .. } => device
                .poll(wgpu::PollType::Wait {
                    submission_index: Some(index.clone()),
                    timeout: None,
                })
                .map(|_| ())
                .map_err(|e| Error::Invalid(format!("waiting for a WebGPU submission: {e}"))),
        }
    }

    /// True when the kernel runs on the device's in-order queue that every later locus
    /// operation on its memory also goes through (OpenCL, WebGPU): those operations are
    /// ordered after it without a host wait.
    pub fn is_queue_ordered(&self) -> bool {
        match &self.pending {
            Pending::Done => true,
            Pending::Custom(_) => false,
            #[cfg(feature = "opencl")]
            Pending::OpenCl(_) => true,
            #[cfg(feature = "sycl")]
            Pending::Sycl { .. } => false,
            #[cfg(feature = "webgpu")]
            Pending::WebGpu { .. } => true,
        }
    }

    /// Lets the kernel run on without a host wait (only for a queue-ordered completion;
    /// others are waited for).
    pub fn detach(mut self) -> Result<()> {
        if self.is_queue_ordered() {
            self.pending = Pending::Done;
            Ok(())
        } else {
            self.finish()
        }
    }

    /// Waits, then lets go of the native handle (OpenCL's and wgpu's by drop, the SYCL
    /// event by hand).
    fn finish(&mut self) -> Result<()> {
        let outcome = self.block();
        #[cfg(feature = "sycl")]
        if let Pending::Sycl { api, event } = &self.pending {
            // SAFETY: a live event from a submission, waited for above and deleted once
            // (the completion forgets it next).
            unsafe { api.DPCTLEvent_Delete(*event) };
        }
        self.pending = Pending::Done;
        outcome
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The error for a kernel a backend cannot run with these arguments.
#[allow(dead_code)] // used by the kernel-launching backends (features)
pub(crate) fn bad_argument(location: crate::Location, index: usize, why: &str) -> Error {
    Error::Invalid(format!("{location}: kernel argument {index}: {why}"))
}

/// A stable key for caching a compiled kernel.
#[allow(dead_code)] // used by the kernel-launching backends (features)
pub(crate) fn cache_key(source: &str, entry: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut h);
    entry.hash(&mut h);
    h.finish()
}
