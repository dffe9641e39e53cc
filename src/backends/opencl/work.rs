//! OpenCL's queued work: [`ClWork`] (a command's event) and the native asynchronous
//! copies that make it (`clEnqueueCopyBuffer`, non-blocking reads and writes).

use super::*;

/// An OpenCL command's event: the OpenCL backend's own queued work. Commands run on
/// the device's in-order queue, which every later locus operation there goes through
/// (except markers and gates on a user's queue locus adopted).
///
/// It releases its `cl_event` itself (not through `opencl3::event::Event`, whose drop
/// panics when the release fails): a failed release is ignored, and none is made once
/// the process is exiting ([`crate::core::shutdown`]), since the runtime may be gone.
pub struct ClWork(cl_event, bool);

// SAFETY: OpenCL objects may be used and released from any thread (OpenCL 1.1+: every
// API call is thread-safe except clSetKernelArg, which this does not call).
unsafe impl Send for ClWork {}
// SAFETY: as above; shared references only query and wait.
unsafe impl Sync for ClWork {}

impl ClWork {
    /// Takes the event out of `event` (released by this value from now on).
    pub(super) fn adopt(event: opencl3::event::Event) -> ClWork {
        let event = std::mem::ManuallyDrop::new(event);
        ClWork(event.get(), true)
    }

    /// An event of work on another queue (a user's, adopted): not ordered by locus's
    /// queue (released by this value).
    pub(super) fn elsewhere(event: cl_event) -> ClWork {
        ClWork(event, false)
    }

    /// The `cl_event` (valid while this lives).
    pub fn event(&self) -> cl_event {
        self.0
    }
}

impl Drop for ClWork {
    fn drop(&mut self) {
        if crate::core::shutdown::is_shutting_down() {
            return;
        }
        // SAFETY: the event this value owns, released once, here.
        let _ = unsafe { release_event(self.0) };
    }
}

impl NativeWork for ClWork {
    fn poll(&self) -> bool {
        opencl3::event::get_event_info(self.0, opencl3::event::CL_EVENT_COMMAND_EXECUTION_STATUS)
            .is_ok_and(|s| cl_int::from(s) == opencl3::event::CL_COMPLETE)
    }

    fn block(&self) -> Result<()> {
        wait_for_events(&[self.0]).map_err(|code| {
            Error::Invalid(format!(
                "waiting for an OpenCL command: clWaitForEvents returned {code}"
            ))
        })
    }

    fn is_queue_ordered(&self) -> bool {
        self.1
    }

    fn native_event(&self) -> Option<crate::core::completion::NativeEvent> {
        Some(crate::core::completion::NativeEvent::OpenCl(self.0.cast()))
    }

    /// `clGetEventProfilingInfo`, on a queue made with profiling (`LOCUS_TRACE`).
    fn device_times(&self) -> Option<crate::core::completion::DeviceTimes> {
        use opencl3::event::{
            get_event_profiling_info, CL_PROFILING_COMMAND_END, CL_PROFILING_COMMAND_QUEUED,
            CL_PROFILING_COMMAND_START,
        };
        let at = |what| match get_event_profiling_info(self.0, what) {
            Ok(cl3::info_type::InfoType::Ulong(ns)) => Some(ns),
            _ => None,
        };
        Some(crate::core::completion::DeviceTimes {
            queued_ns: at(CL_PROFILING_COMMAND_QUEUED)?,
            started_ns: at(CL_PROFILING_COMMAND_START)?,
            ended_ns: at(CL_PROFILING_COMMAND_END)?,
        })
    }
}

/// One native asynchronous copy: (source buffer, offset, destination buffer, offset),
/// host address to (buffer, offset), or (buffer, offset) to host address.
enum Enqueue {
    Copy(cl_mem, usize, cl_mem, usize),
    Write(*mut u8, cl_mem, usize),
    Read(cl_mem, usize, *mut u8),
}

impl OpenClDevice {
    /// An asynchronous copy within one OpenCL device (`clEnqueueCopyBuffer`), or between
    /// it and memory at a host address (non-blocking `clEnqueueWriteBuffer` /
    /// `clEnqueueReadBuffer` from or into the host allocation, an OpenMP initial-device
    /// one or SYCL USM of a CPU device, which the event keeps alive), enqueued natively
    /// after `after` (OpenCL events of this context as the wait list). `None` for other
    /// pairs, overlapping ranges, and still-running dependencies OpenCL cannot wait for.
    pub(super) fn start_copy(
        &self,
        src: &Memory,
        dst: &Memory,
        span: CopySpan,
        after: &dyn Dependencies,
    ) -> Result<Option<Completion>> {
        let CopySpan {
            src_offset,
            dst_offset,
            len,
        } = span;
        let mine = |m: &Memory| m.location() == self.location;
        // Memory whose native handle is a host address: the host's, and any other whose
        // host access is a plain pointer (OpenMP's initial device, SYCL USM of a CPU
        // device). The runtime reads or writes it on its own queue, as its own copy
        // would (on a CPU device with its own threads, not a locus worker's).
        let host = |m: &Memory| m.host_pointer();
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
        // A non-blocking write may take its bytes from the host pointer when it is
        // enqueued, before its wait list is done: NVIDIA's OpenCL stages pageable memory
        // at once (as `cuMemcpyHtoDAsync` does), so a write after a still-running read
        // into that memory sent stale bytes (tests/stress.rs found it). Such a write
        // goes to a worker, which waits first.
        if matches!(enqueue, Enqueue::Write(..))
            && (0..after.count()).any(|i| !after.at(i).is_complete())
        {
            return Ok(None);
        }
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
        Ok(Some(Completion::new(ClWork(event, true))))
    }
}
