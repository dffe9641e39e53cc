//! Copies: those queued on locus's stream ([`Strict::copy_op`]), and the vendor's
//! synchronous copies (`cuMemcpyHtoD`, `cuMemcpyDtoH`, `cuMemcpyDtoD`): the
//! raw baseline that `Device::native_write` / `native_read` / `native_copy_within` time.
//! Like every call they need the device current on the calling thread; they run on the
//! legacy NULL stream, which does not wait for locus's non-blocking stream, so they copy
//! at once, whatever that stream still has queued.

use super::*;

/// What a driver call that returns nothing else gives back.
pub(crate) type CallResult = Result<(), GpuError>;

impl Strict {
    /// A copy of `n` bytes, made when the queued work runs (locus's stream-ordered copies).
    pub(super) fn copy_op(dst: u64, src: u64, n: usize) -> Op {
        Box::new(move || {
            // SAFETY: simulated device memory is host memory; the caller of the copy
            // keeps both ranges valid until the work completes (the contract that the
            // strictness checks: a range freed or refilled early shows as wrong data).
            unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
        })
    }

    /// # Safety
    /// `dst` and `src` are valid for `n` bytes (simulated device memory is host memory).
    pub(super) unsafe fn native_copy_now(
        &self,
        direction: Direction,
        dst: u64,
        src: u64,
        n: usize,
    ) -> CallResult {
        let call = match direction {
            Direction::HostToDevice => "cuMemcpyHtoD",
            Direction::DeviceToHost => "cuMemcpyDtoH",
            Direction::WithinDevice => "cuMemcpyDtoD",
        };
        self.enter(call)?;
        // SAFETY: per the caller's contract.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
        Ok(())
    }
}
