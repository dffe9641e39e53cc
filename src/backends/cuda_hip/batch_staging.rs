//! One batch in the driver's batch form, with small reads into pageable host memory
//! taken through pinned staging. A driver's batch (`cuMemcpyBatchAsync`) copies into
//! memory it does not know one synchronous staged copy at a time, which makes a batch of
//! small reads slower than the same reads one by one; pointed at a pinned chunk instead,
//! they run as DMA in the same call as the batch's other copies, and the CPU copies
//! them out of the chunk once the call returns.

use super::*;

/// A batch's reads up to this size into pageable memory go through staging; larger
/// ones are bound by bandwidth, not by the call, and go to the driver as they are.
pub(super) const STAGED_READ_MAX: usize = 64 << 10;

/// One copy of a batch for the driver: `(dst, src, n)` and its index in the caller's
/// batch (to name it when the driver names it).
pub(super) type Range = ((u64, u64, usize), usize);

/// A read taken through staging: the device address, the destination and its index in
/// the caller's batch.
pub(super) type StagedRead<'a> = (u64, &'a mut [u8], usize);

impl<A: GpuApi> GpuDevice<A> {
    /// Whether a batch's read into `dst` goes through staging: small, and into memory
    /// the driver does not know (pageable). The device is current.
    pub(super) fn stages_batch_read(&self, dst: &[u8]) -> bool {
        dst.len() <= STAGED_READ_MAX && !self.known_to_driver(dst.as_ptr())
    }

    /// Runs `ranges` and `staged` in the driver's batch form: one call while the staged
    /// reads fit a pinned chunk (another call per further chunk of them), each call
    /// waited for and followed by the CPU's copies out of the chunk. The device is
    /// current.
    pub(super) fn run_batch(
        &self,
        ranges: Vec<Range>,
        mut staged: Vec<StagedRead<'_>>,
    ) -> Result<()> {
        if staged.is_empty() {
            return self.call_batch(&ranges);
        }
        self.with_staging(|chunks, _events| {
            let chunk = chunks[0];
            let mut round = ranges;
            let mut start = 0;
            while start < staged.len() || !round.is_empty() {
                let (mut end, mut used) = (start, 0usize);
                while end < staged.len() && used + staged[end].1.len() <= STAGING {
                    let (src, dst, index) = &staged[end];
                    round.push(((chunk + used as u64, *src, dst.len()), *index));
                    used += dst.len();
                    end += 1;
                }
                self.call_batch(&round)?;
                let mut at = 0u64;
                for (_, dst, _) in staged[start..end].iter_mut() {
                    // SAFETY: the chunk's bytes at..at + len were written by the batch
                    // just waited for; `dst` is the caller's slice of that length.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            (chunk + at) as *const u8,
                            dst.as_mut_ptr(),
                            dst.len(),
                        )
                    };
                    at += dst.len() as u64;
                }
                round = Vec::new();
                start = end;
            }
            Ok(())
        })
    }

    /// One call of the driver's batch form, waited for; a failure names the copy the
    /// driver names, by its place in the caller's batch.
    fn call_batch(&self, round: &[Range]) -> Result<()> {
        if round.is_empty() {
            return Ok(());
        }
        let copies: Vec<(u64, u64, usize)> = round.iter().map(|(r, _)| *r).collect();
        // SAFETY: every range was bounds-checked by its memory (or lies in the pinned
        // staging chunk) and lives until the waited call returns; the caller checked
        // that no destination overlaps another copy's ranges.
        unsafe { self.api.copy_batch(&copies) }.map_err(|failure| {
            let mut e = failure.error;
            if let Some(((dst, src, n), at)) = failure.copy.and_then(|k| round.get(k)) {
                e.name = format!(
                    "{} (the driver names copy {at} of the batch: {n} bytes from {src:#x} \
                     to {dst:#x})",
                    e.name
                );
            }
            self.fail("copy batch", e)
        })
    }
}
