//! Copies: those queued on locus's stream ([`Strict::copy_op`]), and the vendor's
//! synchronous copies (`cuMemcpyHtoD`, `cuMemcpyDtoH`, `cuMemcpyDtoD`): the
//! raw baseline that `NativeCalls::native_write` / `native_read` / `native_copy_within` time.
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
        // At once (not queued): the caller's contract keeps both ranges valid for it.
        Self::copy_op(dst, src, n)();
        Ok(())
    }
}

/// `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`.
const ALREADY_REGISTERED: i32 = 712;
/// `CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED`.
const NOT_REGISTERED: i32 = 713;

/// Host memory registered in place (`cuMemHostRegister`): the driver's rules on ranges.
impl Strict {
    /// Registers `[start, start + len)`: an empty range is `CUDA_ERROR_INVALID_VALUE`, one
    /// that overlaps a registered range `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`.
    pub(super) fn register(&self, start: u64, len: usize) -> CallResult {
        let mut state = self.lock();
        if len == 0 {
            return Err(error(
                "cuMemHostRegister",
                INVALID_VALUE,
                "CUDA_ERROR_INVALID_VALUE: an empty range",
            ));
        }
        let end = start + len as u64;
        if state
            .registered
            .iter()
            .any(|&(s, l)| start < s + l as u64 && s < end)
        {
            return Err(error(
                "cuMemHostRegister",
                ALREADY_REGISTERED,
                "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: part of the range is registered",
            ));
        }
        state.registered.push((start, len));
        Ok(())
    }

    /// Unregisters the range that starts at `start`.
    pub(super) fn unregister(&self, start: u64) -> CallResult {
        let mut state = self.lock();
        match state.registered.iter().position(|&(s, _)| s == start) {
            Some(i) => {
                state.registered.remove(i);
                Ok(())
            }
            None => Err(error(
                "cuMemHostUnregister",
                NOT_REGISTERED,
                "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: no range starts there",
            )),
        }
    }

    /// Whether `ptr` is in a registered range.
    pub(super) fn is_registered(&self, ptr: u64) -> bool {
        self.lock()
            .registered
            .iter()
            .any(|&(s, l)| (s..s + l as u64).contains(&ptr))
    }

    /// The registered ranges (start, length), for tests.
    pub(crate) fn registered(&self) -> Vec<(u64, usize)> {
        self.lock().registered.clone()
    }
}

impl Strict {
    /// `cuMemcpyBatchAsync` on locus's stream, waited for: an empty batch is
    /// `CUDA_ERROR_INVALID_VALUE`, and so is one whose copies depend on each other (a
    /// destination overlapping another copy's source or destination: the driver leaves
    /// their order undefined, and the simulated driver refuses what a real one would run
    /// in an unknown order).
    ///
    /// # Safety
    /// Every range is valid for its `n` bytes until the copies complete.
    pub(super) unsafe fn copy_batch_now(
        &self,
        copies: &[(u64, u64, usize)],
    ) -> Result<(), BatchFailure> {
        const CALL: &str = "cuMemcpyBatchAsync";
        let device = self.enter(CALL)?;
        let dependent = crate::backends::cuda_hip::sim_model::depend_on_each_other(copies);
        if copies.is_empty() || dependent {
            return Err(BatchFailure::from(error(
                CALL,
                INVALID_VALUE,
                "CUDA_ERROR_INVALID_VALUE: an empty batch, or copies that depend on each other",
            )));
        }
        if let Some(at) = self.lock().fail_batch_copy.take() {
            return Err(BatchFailure {
                error: error(
                    CALL,
                    ILLEGAL_ADDRESS,
                    "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered",
                ),
                copy: Some(at),
            });
        }
        let ops: Vec<Op> = copies
            .iter()
            .map(|&(d, s, n)| Self::copy_op(d, s, n))
            .collect();
        self.queue(
            device,
            true,
            Box::new(move || ops.into_iter().for_each(|op| op())),
        );
        Ok(())
    }
}
