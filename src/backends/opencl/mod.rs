//! OpenCL through `opencl3`, which loads libOpenCL at run time (the `ocl` crate links it
//! at load time, so a binary using it does not even start without an ICD loader).
//!
//! Every device of every platform becomes its own `opencl:N`, with its own context and
//! in-order queue. On a host-unified device (a CPU device, an integrated GPU) buffers
//! are made with `CL_MEM_ALLOC_HOST_PTR` and host access maps them in place.

use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::program::Program;

use opencl3::command_queue::{
    enqueue_copy_buffer, enqueue_fill_buffer, enqueue_map_buffer, enqueue_read_buffer,
    enqueue_unmap_mem_object, enqueue_write_buffer, CommandQueue,
};
use opencl3::context::Context;
use opencl3::device::{
    Device as ClDevice, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU,
    CL_DEVICE_TYPE_GPU,
};
use opencl3::event::{release_event, wait_for_events};
use opencl3::memory::{
    create_buffer, release_mem_object, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR,
    CL_MEM_READ_WRITE, CL_MEM_SIZE, CL_MEM_USE_HOST_PTR,
};
use opencl3::types::{cl_event, cl_int, cl_mem, CL_BLOCKING, CL_NON_BLOCKING};

use crate::core::capability::{
    native_calls_are_own, HostMemoryInPlace, InPlace, Kernels, MemoryKinds, NativeCalls,
    QueueAdoption, QueuedCopies,
};
use crate::core::completion::{native_deps, Completion, Dependencies, NativeWork, NoDependencies};
use crate::core::copy_span::CopySpan;
use crate::core::device::{
    fill_by_writes, Device, DeviceInfo, Direction, HostAccess, HostReach, PhysicalDevice,
};
use crate::core::discovery::{Discovery, Unavailable};
use crate::core::error::{Error, Result};
use crate::core::launch::{bad_argument, cache_key, LaunchArg, LaunchSpec};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::{MemoryKind, Native};

mod adopted;
mod context_adoption;
mod device;
mod kernels;
mod kinds;
mod mappings;
mod rect;
mod work;

pub(crate) use context_adoption::buffer_facts;
pub use work::ClWork;

/// One OpenCL device with its own context and queue.
pub struct OpenClDevice {
    location: Location,
    info: DeviceInfo,
    device: ClDevice,
    context: Context,
    queue: CommandQueue,
    host_unified: bool,
    live: AtomicUsize,
    kernels: Mutex<HashMap<u64, Arc<Mutex<Kernel>>>>,
    /// Buffers made as a kind other than the default, by `cl_mem` address.
    made: Mutex<HashMap<usize, kinds::Made>>,
    /// Held around `clSVMAlloc` and `clSVMFree`: NVIDIA's OpenCL returned no memory to
    /// one of two threads allocating SVM at once.
    svm: Mutex<()>,
    /// Host mappings open now, one per buffer, shared (`map` / `unmap`).
    mappings: mappings::Mappings,
}

/// Every `cl_mem` locus made and has not released, by address. OpenCL has no safe way
/// to tell a memory object from any other pointer (`clGetMemObjectInfo` on a non-object
/// crashes inside the ICD loader), so a handle presented from outside (a DLPack
/// capsule) is looked up here before any OpenCL call is made on it.
static MADE_BY_LOCUS: Mutex<std::collections::BTreeSet<usize>> =
    Mutex::new(std::collections::BTreeSet::new());

/// True when `mem` is a memory object locus made (at any OpenCL location) and has not
/// released: only then may [`OpenClDevice::owns`] be asked about it.
pub fn made_by_locus(mem: cl_mem) -> bool {
    MADE_BY_LOCUS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&(mem as usize))
}

fn remember_made(mem: cl_mem) {
    MADE_BY_LOCUS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(mem as usize);
}

fn forget_made_by_locus(mem: cl_mem) {
    MADE_BY_LOCUS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(mem as usize));
}

impl std::fmt::Debug for OpenClDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenClDevice({}, {})", self.location, self.info.name)
    }
}

fn cl_text(code: cl_int) -> String {
    format!("{code} ({})", opencl3::error_codes::error_text(code))
}

pub(crate) fn discover() -> Result<Discovery, Unavailable> {
    if let Err(e) = cl3::load_library() {
        return Err(format!(
            "libOpenCL.so.1 could not be loaded ({e}); install an OpenCL ICD loader and driver, e.g. \
             `apt-get install ocl-icd-libopencl1 pocl-opencl-icd`"
        ).into());
    }
    let platforms = opencl3::platform::get_platforms().map_err(|e| {
        format!(
            "clGetPlatformIDs failed: {}; no OpenCL driver is registered: install one such as pocl-opencl-icd",
            cl_text(e.0)
        )
    })?;
    let mut devices: Vec<Arc<dyn Device>> = Vec::new();
    let mut skipped = Vec::new();
    for platform in platforms {
        let platform_name = platform
            .name()
            .unwrap_or_else(|_| "unknown platform".into());
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) => {
                skipped.push(format!(
                    "{platform_name}: clGetDeviceIDs failed: {}",
                    cl_text(e.0)
                ));
                continue;
            }
        };
        for id in ids {
            let location = Location::OpenCl(devices.len() as u32);
            match OpenClDevice::open(location, ClDevice::new(id), &platform_name) {
                Ok(device) => devices.push(Arc::new(device)),
                Err(e) => skipped.push(format!("{platform_name}: {e}")),
            }
        }
    }
    if devices.is_empty() {
        return Err(format!(
            "the OpenCL loader found no usable device{}; install a driver such as pocl-opencl-icd",
            if skipped.is_empty() {
                String::new()
            } else {
                format!(" ({})", skipped.join("; "))
            }
        )
        .into());
    }
    Ok(Discovery {
        devices,
        skipped,
        paths: vec![],
    })
}

/// The hardware an OpenCL device runs on: the host's CPUs for a CPU device; a GPU's
/// PCI address from `cl_khr_pci_bus_info`, or NVIDIA's own query
/// (`cl_nv_device_attribute_query`: the bus, the slot as device << 3 | function, and
/// the domain) where the driver lacks the extension.
fn physical_device(device: &ClDevice, kind: &str) -> Option<PhysicalDevice> {
    if kind == "cpu" {
        return Some(PhysicalDevice::HostCpu);
    }
    // A device query's answer as cl_uints.
    let words = |param: u32| -> Option<Vec<u32>> {
        let bytes = opencl3::device::get_device_data(device.id(), param).ok()?;
        Some(
            bytes
                .chunks_exact(4)
                .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
                .collect(),
        )
    };
    let word = |param: u32| words(param)?.first().copied();
    let extensions = device.extensions().unwrap_or_default();
    if extensions
        .split_whitespace()
        .any(|e| e == "cl_khr_pci_bus_info")
    {
        const CL_DEVICE_PCI_BUS_INFO_KHR: u32 = 0x410F;
        let info = words(CL_DEVICE_PCI_BUS_INFO_KHR)?;
        let &[domain, bus, device, function, ..] = info.as_slice() else {
            return None;
        };
        return Some(PhysicalDevice::Pci {
            domain,
            bus,
            device,
            function,
        });
    }
    if extensions
        .split_whitespace()
        .any(|e| e == "cl_nv_device_attribute_query")
    {
        const CL_DEVICE_PCI_BUS_ID_NV: u32 = 0x4008;
        const CL_DEVICE_PCI_SLOT_ID_NV: u32 = 0x4009;
        const CL_DEVICE_PCI_DOMAIN_ID_NV: u32 = 0x400A;
        let slot = word(CL_DEVICE_PCI_SLOT_ID_NV)?;
        return Some(PhysicalDevice::Pci {
            domain: word(CL_DEVICE_PCI_DOMAIN_ID_NV).unwrap_or(0),
            bus: word(CL_DEVICE_PCI_BUS_ID_NV)?,
            device: slot >> 3,
            function: slot & 7,
        });
    }
    None
}

impl OpenClDevice {
    fn open(
        location: Location,
        device: ClDevice,
        platform: &str,
    ) -> Result<OpenClDevice, Unavailable> {
        let name = device.name().unwrap_or_else(|_| "unknown device".into());
        let context = Context::from_device(&device)
            .map_err(|e| format!("{name}: clCreateContext failed: {}", cl_text(e.0)))?;
        Self::with_context(location, device, platform, context, None)
    }

    /// The device in `context` (locus's own, or an application's adopted one, whose
    /// `cl_context` `adopted` names for `locus info`), with an in-order queue of locus's
    /// own in it.
    fn with_context(
        location: Location,
        device: ClDevice,
        platform: &str,
        context: Context,
        adopted: Option<usize>,
    ) -> Result<OpenClDevice, Unavailable> {
        let name = device.name().unwrap_or_else(|_| "unknown device".into());
        let kind = match device.dev_type().unwrap_or(0) {
            t if t & CL_DEVICE_TYPE_CPU != 0 => "cpu",
            t if t & CL_DEVICE_TYPE_GPU != 0 => "gpu",
            t if t & CL_DEVICE_TYPE_ACCELERATOR != 0 => "accelerator",
            _ => "other",
        };
        let host_unified = device.host_unified_memory().unwrap_or(false) || kind == "cpu";
        // With profiling when the trace listens as the queue is made (`LOCUS_TRACE`): its
        // queued copies then carry the device's own times.
        let properties = if crate::core::trace::listening() {
            opencl3::command_queue::CL_QUEUE_PROFILING_ENABLE
        } else {
            0
        };
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, properties)
            .map_err(|e| format!("{name}: clCreateCommandQueue failed: {}", cl_text(e.0)))?;
        let max_allocation = device.max_mem_alloc_size().unwrap_or(0);
        let version = format!(
            "{}, driver {}",
            device.version().unwrap_or_else(|_| "?".into()),
            device.driver_version().unwrap_or_else(|_| "?".into())
        );
        let mut notes = Vec::new();
        if let Some(context) = adopted {
            notes.push(format!(
                "adopted: the application's own context ({context:#x}), retained while locus runs"
            ));
        }
        if host_unified {
            notes.push("host-unified: buffers use CL_MEM_ALLOC_HOST_PTR and map in place".into());
        }
        Ok(OpenClDevice {
            location,
            info: DeviceInfo {
                name,
                platform: platform.to_string(),
                kind: kind.into(),
                memory_bytes: device.global_mem_size().ok(),
                max_allocation,
                shares_host_memory: host_unified,
                version: Some(version),
                notes,
                physical: physical_device(&device, kind),
            },
            device,
            context,
            queue,
            host_unified,
            live: AtomicUsize::new(0),
            kernels: Mutex::new(HashMap::new()),
            made: Mutex::new(HashMap::new()),
            svm: Mutex::new(()),
            mappings: mappings::Mappings::default(),
        })
    }

    /// The OpenCL context of this device (for building programs).
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The in-order command queue locus uses on this device.
    pub fn queue(&self) -> &CommandQueue {
        &self.queue
    }

    /// The raw `cl_context`, `cl_device_id` and `cl_command_queue` (locus's in-order
    /// queue) as integers: what another OpenCL library takes to work on locus's memory
    /// in place (pyopencl's `Context.from_int_ptr`, `CommandQueue.from_int_ptr`). Work
    /// enqueued on that queue is ordered with locus's own.
    pub fn raw_handles(&self) -> (usize, usize, usize) {
        (
            self.context.get() as usize,
            self.device.id() as usize,
            self.queue.get() as usize,
        )
    }

    /// True when `mem` is a buffer of this device's context (`CL_MEM_CONTEXT`): what a
    /// buffer made elsewhere must be before [`crate::Memory::adopt`] may use it here.
    ///
    /// # Safety
    /// `mem` is a live OpenCL memory object (of any context).
    pub unsafe fn owns(&self, mem: cl_mem) -> bool {
        self.is_mine(opencl3::memory::get_mem_object_info(
            mem,
            opencl3::memory::CL_MEM_CONTEXT,
        ))
    }

    /// True when `event` belongs to this device's context (OpenCL takes only those in
    /// a command's wait list).
    fn owns_event(&self, event: cl_event) -> bool {
        self.is_mine(opencl3::event::get_event_info(
            event,
            opencl3::event::CL_EVENT_CONTEXT,
        ))
    }

    /// True when a `*_CONTEXT` info query answered this device's context.
    fn is_mine(&self, context: std::result::Result<cl3::info_type::InfoType, cl_int>) -> bool {
        matches!(context, Ok(cl3::info_type::InfoType::Ptr(c)) if c as usize == self.context.get() as usize)
    }

    /// The OpenCL device.
    pub fn cl_device(&self) -> &ClDevice {
        &self.device
    }

    fn fail(&self, call: &'static str, code: cl_int) -> Error {
        use opencl3::error_codes::{
            CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_HOST_MEMORY, CL_OUT_OF_RESOURCES,
        };
        if matches!(
            code,
            CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_RESOURCES | CL_OUT_OF_HOST_MEMORY
        ) {
            return Error::OutOfMemory {
                location: self.location,
                requested: 0,
                by: call.into(),
                reason: cl_text(code),
            };
        }
        Error::Backend {
            location: self.location,
            call,
            message: cl_text(code),
            hint: "check the device's memory limits and driver (clinfo lists them)".into(),
        }
    }

    /// The kernel `entry` of OpenCL C `source`, built once per device and cached.
    fn kernel(&self, source: &str, entry: &str) -> Result<Arc<Mutex<Kernel>>> {
        let key = cache_key(source, entry);
        let mut cache = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = cache.get(&key) {
            return Ok(Arc::clone(k));
        }
        let program =
            Program::create_and_build_from_source(&self.context, source, "").map_err(|log| {
                Error::Backend {
                    location: self.location,
                    call: "clBuildProgram",
                    message: log.trim().to_string(),
                    hint: format!("fix the OpenCL C source of `{entry}`"),
                }
            })?;
        let kernel =
            Kernel::create(&program, entry).map_err(|e| self.fail("clCreateKernel", e.0))?;
        let kernel = Arc::new(Mutex::new(kernel));
        cache.insert(key, Arc::clone(&kernel));
        Ok(kernel)
    }

    /// Waits for `event` and releases it.
    fn finish_event(&self, call: &'static str, event: cl_event) -> Result<()> {
        let waited = wait_for_events(&[event]);
        // SAFETY: `event` was returned by an enqueue call and is released exactly once.
        let _ = unsafe { release_event(event) };
        waited.map_err(|code| self.fail(call, code))
    }
}

/// The buffer and the offset of the allocation inside it.
fn mem_of(native: &Native) -> (cl_mem, usize) {
    match native {
        Native::OpenCl { mem, offset } => (*mem, *offset),
        #[allow(unreachable_patterns)]
        other => unreachable!("OpenCL device given a foreign handle {other:?}"),
    }
}
