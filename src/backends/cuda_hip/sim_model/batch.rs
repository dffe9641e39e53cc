//! Batched copies (`cuMemcpyBatchAsync`) in the simulated runtime, the rules every
//! vendor's batch shares (the vendor's simulator checks its own arguments first): an
//! empty batch, or copies that depend on each other (a destination overlapping another
//! copy's source or destination, whose order the driver leaves undefined), is refused;
//! an address inside registered host memory that the device cannot read at its host
//! address (`CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM` 0, or registered without being
//! mapped) is an illegal address, which loses the context; a failure names the copy.

use super::memory::Found;
use super::{copy_op, Op, Refusal, SimModel};

/// Whether copies (destination, source, bytes) depend on each other: a destination
/// overlapping another copy's source or destination, whose order a batch leaves
/// undefined (the simulated drivers refuse what a real one would run in an unknown
/// order).
pub(crate) fn depend_on_each_other(copies: &[(u64, u64, usize)]) -> bool {
    let overlap = |a: u64, b: u64, n: usize, m: usize| a < b + m as u64 && b < a + n as u64;
    copies.iter().enumerate().any(|(i, &(d, _, n))| {
        copies
            .iter()
            .enumerate()
            .any(|(j, &(d2, s2, m))| i != j && (overlap(d, d2, n, m) || overlap(d, s2, n, m)))
    })
}

/// A failed batch: why, and the copy the driver names (`None`: the whole batch).
pub(crate) type BatchRefusal = (Refusal, Option<usize>);

impl SimModel {
    /// Queues `copies` (destination, source, bytes) on `stream` as one submission.
    pub(crate) fn batch(
        &self,
        call: &'static str,
        copies: &[(usize, usize, usize)],
        stream: usize,
    ) -> Result<(), BatchRefusal> {
        let wide: Vec<(u64, u64, usize)> = copies
            .iter()
            .map(|&(d, s, n)| (d as u64, s as u64, n))
            .collect();
        if copies.is_empty() || depend_on_each_other(&wide) {
            self.record(call, stream);
            return Err((Refusal::InvalidValue, None));
        }
        let usable = self.host_pointer_for_registered();
        let unreadable = copies.iter().position(|&(d, s, _)| {
            [d, s].iter().any(|&p| match self.find(p) {
                Some(Found::Registered(_, _, mapped)) => !(mapped && usable),
                _ => false,
            })
        });
        if let Some(at) = unreadable {
            self.record(call, stream);
            self.poison(
                call,
                format!(
                    "copy {at} names registered host memory at its host address, which \
                     this device reads only through the device pointer the driver gives \
                     for it"
                ),
            );
            return Err((Refusal::IllegalAddress, Some(at)));
        }
        let injected = self.lock().fail_batch_copy.take();
        if let Some(at) = injected {
            self.record(call, stream);
            self.poison(call, format!("copy {at} failed (injected)"));
            return Err((Refusal::IllegalAddress, Some(at)));
        }
        let ops: Vec<Op> = copies.iter().map(|&(d, s, n)| copy_op(d, s, n)).collect();
        self.enqueue(
            call,
            stream,
            Box::new(move || ops.into_iter().for_each(|op| op())),
        );
        Ok(())
    }

    /// Makes the next batch fail at copy `at`, as the driver reports it.
    pub(crate) fn fail_batch_copy(&self, at: usize) {
        self.lock().fail_batch_copy = Some(at);
    }
}
