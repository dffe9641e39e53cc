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
    CL_MEM_READ_WRITE,
};
use opencl3::types::{cl_event, cl_int, cl_mem, CL_BLOCKING, CL_NON_BLOCKING};

use crate::core::completion::{native_deps, Completion, Dependency, NativeWork};
use crate::core::device::{fill_by_writes, Device, DeviceInfo, Discovery, HostAccess};
use crate::core::error::{Error, Result};
use crate::core::launch::{bad_argument, cache_key, LaunchArg, LaunchSpec};
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::core::native::Native;

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
}

impl std::fmt::Debug for OpenClDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenClDevice({}, {})", self.location, self.info.name)
    }
}

fn cl_text(code: cl_int) -> String {
    format!("{code} ({})", opencl3::error_codes::error_text(code))
}

pub(crate) fn discover() -> Result<Discovery, String> {
    if let Err(e) = cl3::load_library() {
        return Err(format!(
            "libOpenCL.so.1 could not be loaded ({e}); install an OpenCL ICD loader and driver, e.g. \
             `apt-get install ocl-icd-libopencl1 pocl-opencl-icd`"
        ));
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
        ));
    }
    Ok(Discovery {
        devices,
        skipped,
        paths: vec![],
    })
}

impl OpenClDevice {
    fn open(location: Location, device: ClDevice, platform: &str) -> Result<OpenClDevice, String> {
        let name = device.name().unwrap_or_else(|_| "unknown device".into());
        let kind = match device.dev_type().unwrap_or(0) {
            t if t & CL_DEVICE_TYPE_CPU != 0 => "cpu",
            t if t & CL_DEVICE_TYPE_GPU != 0 => "gpu",
            t if t & CL_DEVICE_TYPE_ACCELERATOR != 0 => "accelerator",
            _ => "other",
        };
        let host_unified = device.host_unified_memory().unwrap_or(false) || kind == "cpu";
        let context = Context::from_device(&device)
            .map_err(|e| format!("{name}: clCreateContext failed: {}", cl_text(e.0)))?;
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, 0)
            .map_err(|e| format!("{name}: clCreateCommandQueue failed: {}", cl_text(e.0)))?;
        let max_allocation = device.max_mem_alloc_size().unwrap_or(0);
        let mut notes = vec![format!(
            "version: {}",
            device.version().unwrap_or_else(|_| "?".into())
        )];
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
                notes,
            },
            device,
            context,
            queue,
            host_unified,
            live: AtomicUsize::new(0),
            kernels: Mutex::new(HashMap::new()),
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

/// A buffer argument of a kernel: the whole buffer, or a sub-buffer made for a range at
/// an offset (released when the launch is enqueued: OpenCL keeps it until the kernel is
/// done).
struct KernelBuffer {
    mem: cl_mem,
    /// A sub-buffer made for this launch (released on drop).
    made: bool,
}

impl Drop for KernelBuffer {
    fn drop(&mut self) {
        if self.made {
            // SAFETY: a sub-buffer made by `kernel_buffer`, released once; the runtime
            // defers the release until enqueued commands using it finish.
            let _ = unsafe { release_mem_object(self.mem) };
        }
    }
}

impl OpenClDevice {
    /// The kernel argument for `len` bytes at `offset` of `mem`.
    fn kernel_buffer(&self, mem: cl_mem, offset: usize, len: usize) -> Result<KernelBuffer> {
        if offset == 0 {
            return Ok(KernelBuffer { mem, made: false });
        }
        let region = opencl3::types::cl_buffer_region {
            origin: offset,
            size: len.max(1),
        };
        // SAFETY: a region inside a live buffer of this context (the pool keeps it in
        // range and aligned to `sub_alignment`, CL_DEVICE_MEM_BASE_ADDR_ALIGN).
        let sub = unsafe {
            opencl3::memory::create_sub_buffer(
                mem,
                CL_MEM_READ_WRITE,
                opencl3::memory::CL_BUFFER_CREATE_TYPE_REGION,
                (&region as *const opencl3::types::cl_buffer_region).cast(),
            )
        }
        .map_err(|code| self.fail("clCreateSubBuffer", code))?;
        Ok(KernelBuffer {
            mem: sub,
            made: true,
        })
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

/// An OpenCL command's event: the OpenCL backend's own queued work. Commands run on
/// the device's in-order queue, which every later locus operation there goes through.
pub struct ClWork(opencl3::event::Event);

impl ClWork {
    /// The `cl_event` (valid while this lives).
    pub fn event(&self) -> cl_event {
        self.0.get()
    }
}

impl NativeWork for ClWork {
    fn poll(&self) -> bool {
        self.0
            .command_execution_status()
            .is_ok_and(|s| s.0 == opencl3::event::CL_COMPLETE)
    }

    fn block(&self) -> Result<()> {
        self.0
            .wait()
            .map_err(|e| Error::Invalid(format!("waiting for an OpenCL command: {e}")))
    }

    fn is_queue_ordered(&self) -> bool {
        true
    }
}

/// One native asynchronous copy: (source buffer, offset, destination buffer, offset),
/// host address to (buffer, offset), or (buffer, offset) to host address.
enum Enqueue {
    Copy(cl_mem, usize, cl_mem, usize),
    Write(*mut u8, cl_mem, usize),
    Read(cl_mem, usize, *mut u8),
}

impl Device for OpenClDevice {
    /// An asynchronous copy within one OpenCL device (`clEnqueueCopyBuffer`), or between
    /// it and host memory (non-blocking `clEnqueueWriteBuffer` / `clEnqueueReadBuffer`
    /// from or into the host allocation, which the event keeps alive), enqueued natively
    /// after `after` (OpenCL events of this context as the wait list). `None` for other
    /// pairs, overlapping ranges, and still-running dependencies OpenCL cannot wait for.
    fn copy_async(
        &self,
        src: &Memory,
        src_offset: usize,
        dst: &Memory,
        dst_offset: usize,
        len: usize,
        after: &[&dyn Dependency],
    ) -> Result<Option<Completion>> {
        let mine = |m: &Memory| m.location() == self.location;
        let host = |m: &Memory| match m.native() {
            Native::Host { ptr } if m.location() == Location::Host => Some(*ptr),
            _ => None,
        };
        let (call, enqueue): (&'static str, Enqueue) = match (src.native(), dst.native()) {
            (Native::OpenCl { mem: s, offset: so }, Native::OpenCl { mem: d, offset: d0 })
                if mine(src) && mine(dst) && !src.overlaps(src_offset, dst, dst_offset, len) =>
            {
                (
                    "clEnqueueCopyBuffer",
                    Enqueue::Copy(*s, so + src_offset, *d, d0 + dst_offset),
                )
            }
            (_, Native::OpenCl { mem: d, offset: d0 }) if mine(dst) => match host(src) {
                Some(p) => (
                    "clEnqueueWriteBuffer",
                    Enqueue::Write(p.wrapping_add(src_offset), *d, d0 + dst_offset),
                ),
                None => return Ok(None),
            },
            (Native::OpenCl { mem: s, offset: so }, _) if mine(src) => match host(dst) {
                Some(p) => (
                    "clEnqueueReadBuffer",
                    Enqueue::Read(*s, so + src_offset, p.wrapping_add(dst_offset)),
                ),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        // Only OpenCL events of this context can be in a wait list.
        let own = |c: &Completion| {
            c.work_as::<ClWork>()
                .map(ClWork::event)
                .filter(|&ev| self.owns_event(ev))
        };
        let Some(wait_list) = native_deps(after, own)? else {
            return Ok(None);
        };
        let (count, list) = match wait_list.len() {
            0 => (0, ptr::null()),
            n => (n as u32, wait_list.as_ptr()),
        };
        let queue = self.queue.get();
        // SAFETY: the buffers belong to this device's context (checked by location); the
        // ranges were bounds-checked by the caller (device copies do not overlap); host
        // pointers are into live host allocations of `len` bytes, which the returned Event
        // keeps alive (with the buffers) until the command is done, and nothing else in
        // locus writes them meanwhile (the caller owns that rule, as with any async copy);
        // the wait-list events are of this context and alive for the call (an Event
        // keeps its OpenCL event while it lives; `after` holds them).
        let event = unsafe {
            match enqueue {
                Enqueue::Copy(s, so, d, d0) => {
                    enqueue_copy_buffer(queue, s, d, so, d0, len, count, list)
                }
                Enqueue::Write(p, d, d0) => {
                    enqueue_write_buffer(queue, d, CL_NON_BLOCKING, d0, len, p.cast(), count, list)
                }
                Enqueue::Read(s, so, p) => {
                    enqueue_read_buffer(queue, s, CL_NON_BLOCKING, so, len, p.cast(), count, list)
                }
            }
        }
        .map_err(|code| self.fail(call, code))?;
        let _ = opencl3::command_queue::flush(queue);
        Ok(Some(Completion::new(ClWork(opencl3::event::Event::new(
            event,
        )))))
    }

    fn synchronize(&self) -> Result<()> {
        self.queue.finish().map_err(|e| self.fail("clFinish", e.0))
    }

    fn location(&self) -> Location {
        self.location
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn allocate(&self, bytes: usize) -> Result<Native> {
        let flags = if self.host_unified {
            CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR
        } else {
            CL_MEM_READ_WRITE
        };
        // SAFETY: a valid context, no host pointer; OpenCL rejects size 0, so at least 1.
        let mem =
            unsafe { create_buffer(self.context.get(), flags, bytes.max(1), ptr::null_mut()) }
                .map_err(|code| match self.fail("clCreateBuffer", code) {
                    Error::OutOfMemory {
                        location, by, reason, ..
                    } => Error::OutOfMemory {
                        location,
                        requested: bytes,
                        by,
                        reason,
                    },
                    other => other,
                })?;
        self.live.fetch_add(1, Ordering::Relaxed);
        Ok(Native::OpenCl { mem, offset: 0 })
    }

    unsafe fn free(&self, native: &Native, _bytes: usize) {
        // SAFETY: the caller guarantees this buffer came from `allocate` and is unused.
        let _ = unsafe { release_mem_object(mem_of(native).0) };
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    fn host_access(&self, native: &Native) -> HostAccess {
        match native {
            #[allow(unreachable_patterns)]
            Native::OpenCl { .. } if self.host_unified => HostAccess::Mapped,
            _ => HostAccess::None,
        }
    }

    fn host_access_default(&self) -> HostAccess {
        if self.host_unified {
            HostAccess::Mapped
        } else {
            HostAccess::None
        }
    }

    fn host_access_reason(&self) -> String {
        if self.host_unified {
            format!(
                "{} is host-unified: its buffers map in place, no copy",
                self.location
            )
        } else {
            format!(
                "{} is not host-unified: its buffers need a copy",
                self.location
            )
        }
    }

    fn executes_on_host(&self) -> bool {
        false
    }

    fn write(&self, dst: &Native, offset: usize, src: &[u8]) -> Result<()> {
        let (mem, base) = mem_of(dst);
        // SAFETY: a blocking write from a live host slice into a bounds-checked range.
        let event = unsafe {
            enqueue_write_buffer(
                self.queue.get(),
                mem,
                CL_BLOCKING,
                base + offset,
                src.len(),
                src.as_ptr() as *const c_void,
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueWriteBuffer", code))?;
        self.finish_event("clEnqueueWriteBuffer", event)
    }

    fn read(&self, src: &Native, offset: usize, dst: &mut [u8]) -> Result<()> {
        let (mem, base) = mem_of(src);
        // SAFETY: a blocking read of a bounds-checked range into an exclusive host slice.
        let event = unsafe {
            enqueue_read_buffer(
                self.queue.get(),
                mem,
                CL_BLOCKING,
                base + offset,
                dst.len(),
                dst.as_mut_ptr() as *mut c_void,
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueReadBuffer", code))?;
        self.finish_event("clEnqueueReadBuffer", event)
    }

    fn copy_within(
        &self,
        src: &Native,
        src_offset: usize,
        dst: &Native,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        let ((s, s_base), (d, d_base)) = (mem_of(src), mem_of(dst));
        // SAFETY: both buffers belong to this context; ranges checked and not overlapping.
        let event = unsafe {
            enqueue_copy_buffer(
                self.queue.get(),
                s,
                d,
                s_base + src_offset,
                d_base + dst_offset,
                len,
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueCopyBuffer", code))?;
        self.finish_event("clEnqueueCopyBuffer", event)
    }

    fn fill(&self, dst: &Native, offset: usize, len: usize, pattern: &[u8]) -> Result<()> {
        let native_size = matches!(pattern.len(), 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128);
        if !native_size || !offset.is_multiple_of(pattern.len()) {
            return fill_by_writes(self, dst, offset, len, pattern);
        }
        let (mem, base) = mem_of(dst);
        // SAFETY: the pattern outlives the (waited-for) command; range checked.
        let event = unsafe {
            enqueue_fill_buffer(
                self.queue.get(),
                mem,
                pattern.as_ptr() as *const c_void,
                pattern.len(),
                base + offset,
                len,
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueFillBuffer", code))?;
        self.finish_event("clEnqueueFillBuffer", event)
    }

    fn map(&self, native: &Native, offset: usize, len: usize, write: bool) -> Result<*mut u8> {
        let flags = if write {
            CL_MAP_READ | CL_MAP_WRITE
        } else {
            CL_MAP_READ
        };
        let mut host: cl_mem = ptr::null_mut();
        let (mem, base) = mem_of(native);
        // SAFETY: a blocking map of a bounds-checked range of a live buffer.
        let event = unsafe {
            enqueue_map_buffer(
                self.queue.get(),
                mem,
                CL_BLOCKING,
                flags,
                base + offset,
                len,
                &mut host,
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueMapBuffer", code))?;
        self.finish_event("clEnqueueMapBuffer", event)?;
        Ok(host.cast())
    }

    unsafe fn unmap(&self, native: &Native, ptr: *mut u8) -> Result<()> {
        // SAFETY: `ptr` came from `map` on this buffer (caller's contract).
        let event = unsafe {
            enqueue_unmap_mem_object(
                self.queue.get(),
                mem_of(native).0,
                ptr.cast(),
                0,
                ptr::null(),
            )
        }
        .map_err(|code| self.fail("clEnqueueUnmapMemObject", code))?;
        self.finish_event("clEnqueueUnmapMemObject", event)
    }

    fn live_allocations(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    fn sub_native(&self, parent: &Native, offset: usize, _len: usize) -> Result<Native> {
        // An offset into the parent buffer: no OpenCL object per block (a sub-buffer
        // is made only when a kernel takes the range as an argument).
        let (mem, base) = mem_of(parent);
        Ok(Native::OpenCl {
            mem,
            offset: base + offset,
        })
    }

    fn sub_alignment(&self) -> usize {
        let bits = self.device.mem_base_addr_align().unwrap_or(1024) as usize;
        (bits / 8).max(crate::core::device::ALIGNMENT)
    }

    fn launch(&self, spec: &LaunchSpec<'_>, args: &[LaunchArg<'_>]) -> Result<Completion> {
        let kernel = self.kernel(spec.source, spec.entry)?;
        // One launch at a time per kernel object: argument setting is not thread-safe.
        let kernel = kernel.lock().unwrap_or_else(|e| e.into_inner());
        let mems: Vec<Option<KernelBuffer>> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                LaunchArg::Memory(m) => match m.native() {
                    Native::OpenCl { mem, offset } if m.location() == self.location => {
                        self.kernel_buffer(*mem, *offset, m.len()).map(Some)
                    }
                    _ => Err(bad_argument(
                        self.location,
                        i,
                        &format!(
                            "memory at {} is not an OpenCL buffer of this device",
                            m.location()
                        ),
                    )),
                },
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;
        let mut exec = ExecuteKernel::new(&kernel);
        for (arg, mem) in args.iter().zip(&mems) {
            // SAFETY: each value matches the kind of the kernel parameter the codelet
            // declared (checked there): a cl_mem of this context or a 4-byte scalar.
            unsafe {
                match (arg, mem) {
                    (_, Some(buffer)) => exec.set_arg(&buffer.mem),
                    (LaunchArg::F32(v), None) => exec.set_arg(v),
                    (LaunchArg::U32(v), None) => exec.set_arg(v),
                    (LaunchArg::I32(v), None) => exec.set_arg(v),
                    (LaunchArg::Memory(_), None) => unreachable!("buffers were resolved above"),
                };
            }
        }
        exec.set_global_work_sizes(&spec.global[..spec.dims.clamp(1, 2)]);
        // SAFETY: every argument is set; the buffers stay alive until the completion is
        // waited for (the codelet holds them).
        let event = unsafe { exec.enqueue_nd_range(&self.queue) }
            .map_err(|e| self.fail("clEnqueueNDRangeKernel", e.0))?;
        Ok(Completion::new(ClWork(event)))
    }
}
