//! An application's own SYCL context adopted as a location of its own
//! ([`SyclDevice::adopt_context`]): an in-order queue of locus's own made in it
//! (`DPCTLQueue_Create`), so that the application's queues ([`crate::AdoptedQueue`]) and
//! USM pointers of that context join locus as those of locus's own context do.

use super::*;

impl SyclDevice {
    /// The device `device` of the application's `context` (dpctl references, kept by the
    /// caller), as `location`: an in-order queue of locus's own made in the context, and
    /// references of locus's own to the device and the context.
    ///
    /// # Safety
    /// `context` and `device` are live dpctl references.
    pub(crate) unsafe fn adopt_context(
        location: Location,
        context: DPCTLSyclContextRef,
        device: DPCTLSyclDeviceRef,
    ) -> Result<SyclDevice> {
        let fail = |what: String| {
            Error::Invalid(format!(
                "{location}: cannot adopt SYCL context {context:?}: {what}"
            ))
        };
        if context.is_null() || device.is_null() {
            return Err(fail(
                "a null context or device reference; pass dpctl's live references \
                 (SyclContext.addressof_ref(), SyclDevice.addressof_ref())"
                    .into(),
            ));
        }
        let api = api().map_err(|e| fail(e.to_string()))?;
        // SAFETY: live references (the caller's contract); every reference made here is
        // owned by the new device (the queue and its device) or deleted below.
        unsafe {
            let (name, platform, usm) = describe(api, device);
            if !usm[0] {
                return Err(fail(format!(
                    "its device `{name}` has no USM device allocations"
                )));
            }
            let (properties, profiled) = super::work::queue_properties();
            let queue = api.DPCTLQueue_Create(context, device, None, properties);
            if queue.is_null() {
                return Err(fail(format!(
                    "DPCTLQueue_Create failed: is `{name}` one of the context's devices?"
                )));
            }
            let own_device = api.DPCTLQueue_GetDevice(queue);
            Self::with_queue(
                api,
                location,
                own_device,
                queue,
                (name, platform),
                usm,
                Some(context as usize),
            )
            .map(|mut d| {
                d.profiled = profiled;
                d
            })
            .map_err(|e| fail(e.to_string()))
        }
    }

    /// True when this location is `device` in `context` (dpctl references).
    ///
    /// # Safety
    /// `context` and `device` are live dpctl references.
    pub(crate) unsafe fn is(
        &self,
        context: DPCTLSyclContextRef,
        device: DPCTLSyclDeviceRef,
    ) -> bool {
        // SAFETY: live references (the caller's contract) and this device's own.
        unsafe {
            self.api.DPCTLContext_AreEq(context, self.context)
                && self.api.DPCTLDevice_AreEq(device, self.device)
        }
    }
}
