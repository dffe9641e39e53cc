//! SYCL's queued work: [`SyclWork`] (a SYCL event, deleted on drop) and the native
//! asynchronous copies that make it (`queue.memcpy` with events as dependencies).

use super::*;

/// A SYCL event: the SYCL backend's own queued work (deleted when dropped).
pub struct SyclWork {
    pub(super) api: &'static DpctlApi,
    pub(super) event: DPCTLSyclEventRef,
    /// Submitted to a queue made with profiling (its times can be asked for).
    pub(super) profiled: bool,
}

/// Whether locus's SYCL queues are made with profiling: when the trace listens as they
/// are made (`LOCUS_TRACE`), so that their work carries the device's own times.
pub(super) fn queue_properties() -> (i32, bool) {
    let profiled = crate::core::trace::listening();
    let mut properties = DPCTLQueuePropertyType_DPCTL_IN_ORDER as i32;
    if profiled {
        properties |= DPCTLQueuePropertyType_DPCTL_ENABLE_PROFILING as i32;
    }
    (properties, profiled)
}

// SAFETY: a SYCL event may be queried, waited on and deleted from any thread.
unsafe impl Send for SyclWork {}
// SAFETY: its `&self` methods only query or wait on the event, which SYCL allows from
// several threads at once.
unsafe impl Sync for SyclWork {}

impl SyclWork {
    /// The SYCL event (valid while this lives).
    pub fn event(&self) -> DPCTLSyclEventRef {
        self.event
    }
}

impl NativeWork for SyclWork {
    fn poll(&self) -> bool {
        // SAFETY: a live event owned by this value.
        let status = unsafe { self.api.DPCTLEvent_GetCommandExecutionStatus(self.event) };
        status == DPCTLSyclEventStatusType_DPCTL_COMPLETE
    }

    fn block(&self) -> Result<()> {
        // SAFETY: a live event owned by this value (deleted only at drop).
        unsafe { self.api.DPCTLEvent_Wait(self.event) };
        Ok(())
    }

    fn native_event(&self) -> Option<crate::core::completion::NativeEvent> {
        Some(crate::core::completion::NativeEvent::Sycl(
            self.event.cast(),
        ))
    }

    /// The event's profiling info, on a queue made with profiling (dpctl reports an
    /// error on any other, so it is not asked).
    fn device_times(&self) -> Option<crate::core::completion::DeviceTimes> {
        if !self.profiled {
            return None;
        }
        // SAFETY: a live, finished event owned by this value, of a profiling queue.
        let (queued_ns, started_ns, ended_ns) = unsafe {
            (
                self.api.DPCTLEvent_GetProfilingInfoSubmit(self.event),
                self.api.DPCTLEvent_GetProfilingInfoStart(self.event),
                self.api.DPCTLEvent_GetProfilingInfoEnd(self.event),
            )
        };
        (ended_ns != 0).then_some(crate::core::completion::DeviceTimes {
            queued_ns,
            started_ns,
            ended_ns,
        })
    }
}

impl Drop for SyclWork {
    fn drop(&mut self) {
        // The runtime may be gone once the process is exiting: the event is left to it.
        if crate::core::shutdown::is_shutting_down() {
            return;
        }
        // SAFETY: a live event from a submission, deleted once, here. Dropped only after
        // the holding `Completion` waited (SYCL work is not queue-ordered).
        unsafe { self.api.DPCTLEvent_Delete(self.event) };
    }
}

impl SyclDevice {
    /// Starts a copy natively on the SYCL queue when one side is SYCL USM of a device and the
    /// other is USM of the same device, plain host memory or OpenMP initial-device memory
    /// (host memory too; `sycl::queue::memcpy` takes them all); SYCL events among `after` become native dependencies, others are waited for
    /// first. `None`: not a SYCL copy.
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
        // USM of this device's context, and memory host code reaches by pointer (the
        // host's, OpenMP's initial device's, ...): memcpy takes it as host memory.
        let sycl_location = match (src.native(), dst.native()) {
            (Native::Sycl { .. }, Native::Sycl { .. }) if src.location() == dst.location() => {
                src.location()
            }
            (Native::Sycl { .. }, Native::Sycl { .. }) => return Ok(None),
            (Native::Sycl { .. }, _) if dst.host_pointer().is_some() => src.location(),
            (_, Native::Sycl { .. }) if src.host_pointer().is_some() => dst.location(),
            _ => return Ok(None),
        };
        if sycl_location != self.location || src.overlaps(src_offset, dst, dst_offset, len) {
            return Ok(None);
        }
        let address = |m: &Memory, offset: usize| -> *mut u8 {
            let base = match m.native() {
                Native::Sycl { ptr, .. } => *ptr,
                _ => m.host_pointer().unwrap_or(ptr::null_mut()),
            };
            base.wrapping_add(offset)
        };
        let sycl_event = |c: &Completion| c.work_as::<SyclWork>().map(|w| w.event);
        let Some(deps) = native_deps(after, sycl_event)? else {
            return Ok(None);
        };
        // SAFETY: both ranges were bounds-checked by the caller and do not overlap; the
        // pointers are USM of this queue's context or host memory; the dependency events
        // are alive (held by `after`) during the call, and the returned Event keeps both
        // memories alive until the copy is done.
        let event = unsafe {
            result::memcpy(
                self.api,
                self.queue,
                address(dst, dst_offset),
                address(src, src_offset),
                len,
                &deps,
            )
        }
        .map_err(|e| self.fail(e, COPY_HINT))?;
        Ok(Some(Completion::new(SyclWork {
            api: self.api,
            event,
            profiled: self.profiled,
        })))
    }
}
