//! [`Entered`]: locus's device current on the calling thread for the length of one
//! locus call, and whatever the thread had before put back when it ends.
//!
//! CUDA's current context and HIP's current device are per thread and shared by every
//! library in the process. A call that left locus's device current would move the next
//! operation of CuPy, PyTorch or the user's own code on that thread to locus's device.

use super::*;

/// Made by [`GpuApi::enter`]; dropping it makes current again what the thread had
/// before (nothing to do when that was locus's device already).
#[must_use = "the device is current only while this value lives"]
pub struct Entered<'a, A: GpuApi> {
    api: &'a A,
    before: Option<A::Current>,
}

impl<'a, A: GpuApi> Entered<'a, A> {
    pub(super) fn new(api: &'a A, before: Option<A::Current>) -> Entered<'a, A> {
        Entered { api, before }
    }
}

impl<A: GpuApi> Drop for Entered<'_, A> {
    fn drop(&mut self) {
        if let Some(before) = self.before.take() {
            self.api.restore(before);
        }
    }
}
