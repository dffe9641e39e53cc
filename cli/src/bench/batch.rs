//! `locus bench --batch`: many small copies per pair (1000 of 4 KiB, each to its own
//! place), made one by one through locus, as one `copy_batch`, and one by one through
//! the raw native calls, in the same run: what a runtime's fixed cost per copy is, and
//! how much of it a batch saves.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{measure, Config, Stats};
use locus::{copy_batch, BatchCopy, Memory, Registry, Result};

/// Copies per batch.
pub const COPIES: usize = 1000;
/// Bytes per copy.
pub const BYTES: usize = 4 << 10;

/// One pair's small copies, three ways.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BatchCell {
    /// Source location.
    pub src: String,
    /// Destination location.
    pub dst: String,
    /// Copies per round.
    pub copies: usize,
    /// Bytes per copy.
    pub bytes: u64,
    /// A round of copies one by one through locus (`copy_to` each).
    pub one_by_one: Stats,
    /// The same copies as one `copy_batch`.
    pub batch: Stats,
    /// The same copies one by one through the raw native calls.
    pub raw: Stats,
    /// Microseconds per copy (median round / copies): one by one, batched, raw.
    pub us_per_copy: [f64; 3],
}

/// Runs `--batch` on every ordered pair of `config`'s locations.
pub(super) fn run(
    registry: &Registry,
    config: &Config,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<BatchCell>> {
    let mut out = Vec::new();
    let total = COPIES * BYTES;
    for &from in &config.locations {
        for &to in &config.locations {
            progress(&format!("batch {from} -> {to}"));
            let cap = registry
                .device(from)?
                .info()
                .max_allocation
                .min(registry.device(to)?.info().max_allocation);
            if (total as u64) > cap {
                continue;
            }
            let src = Arc::new(Memory::new(from, total)?);
            let dst = Arc::new(Memory::new(to, total)?);
            src.fill(0..total, &[0x5A])?;
            let copies: Vec<BatchCopy> = (0..COPIES)
                .map(|i| BatchCopy::new(&src, i * BYTES, &dst, (COPIES - 1 - i) * BYTES, BYTES))
                .collect();
            let one_by_one = measure(config.cell_seconds, config.min_runs, || {
                for c in &copies {
                    c.src.copy_to(c.src_offset, &c.dst, c.dst_offset, c.len)?;
                }
                Ok(())
            })?;
            let batch = measure(config.cell_seconds, config.min_runs, || copy_batch(&copies))?;
            let mut scratch = vec![0u8; BYTES];
            let raw = measure(config.cell_seconds, config.min_runs, || {
                for _ in 0..COPIES {
                    src.native_copy_to(&dst, BYTES, &mut scratch)?;
                }
                Ok(())
            })?;
            let per = |s: &Stats| s.median_s * 1e6 / COPIES as f64;
            out.push(BatchCell {
                src: from.to_string(),
                dst: to.to_string(),
                copies: COPIES,
                bytes: BYTES as u64,
                us_per_copy: [per(&one_by_one), per(&batch), per(&raw)],
                one_by_one,
                batch,
                raw,
            });
        }
    }
    Ok(out)
}
