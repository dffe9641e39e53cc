//! How the simulated driver resolves the stream and event handles a call names, with
//! the driver's errors for a handle of another context or none at all.

use super::*;

impl Strict {
    /// The stream `handle` names on the current device `device`.
    pub(super) fn stream(
        &self,
        call: &'static str,
        handle: u64,
        device: u32,
    ) -> Result<StreamId, GpuError> {
        self.lock().streams.resolve(handle, device).ok_or_else(|| {
            error(
                call,
                INVALID_HANDLE,
                "CUDA_ERROR_INVALID_HANDLE: not a stream of the current context",
            )
        })
    }

    pub(super) fn event(&self, call: &'static str, event: u64) -> Result<u32, GpuError> {
        let current = self.enter(call)?;
        let state = self.lock();
        match state.events.get(&event) {
            None => Err(error(
                call,
                INVALID_HANDLE,
                "CUDA_ERROR_INVALID_HANDLE: no such event",
            )),
            Some(e) if e.ordinal != current => Err(error(
                call,
                INVALID_CONTEXT,
                "CUDA_ERROR_INVALID_CONTEXT: the event belongs to another device's context",
            )),
            Some(_) => Ok(current),
        }
    }
}
