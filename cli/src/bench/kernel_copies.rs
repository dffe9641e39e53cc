//! Kernel copies across devices, for `locus bench --stream`: where code at one location
//! can use another location's memory in place (`locus::is_accessible_from`: peer access,
//! host memory a device maps, a CPU runtime's USM), BabelStream's Copy kernel at the
//! reader copies the other location's array in place into its own, beside the API's copy
//! of the same bytes between the two (`Memory::copy_to`, the planner's route): a copy
//! engine against the reader's cores. Within one location the Copy kernel and the API
//! copy already stand side by side in the stream table.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use locus::access::location_accessibility;
use locus::codelet::kernels::stream::{self as kernels, Precision};
use locus::codelet::{Arg, Codelet, Launch};
use locus::{Buffer, Location, Memory, Registry, Result, RouteKind};

use super::stream_model::{figures, StreamConfig, StreamKernel};

/// One pair: the Copy kernel at `by` reading memory at `memory`, and the API's copy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelCopy {
    /// Where the array read lives.
    pub memory: String,
    /// Where the kernel runs and the copy lands.
    pub by: String,
    /// Bytes per copy (one f32 array).
    pub bytes: u64,
    /// The Copy kernel at `by` over the array in place.
    pub kernel: StreamKernel,
    /// `Memory::copy_to` from `memory` to `by`.
    pub api: StreamKernel,
    /// The route the API copy took.
    pub api_route: String,
}

/// Every ordered pair of distinct locations where code at the second can use the
/// first's memory in place and has the Copy kernel; f32 arrays of `config.elements`. A
/// pair whose call moved the array after all is left out, said in `notes`.
pub fn run(
    registry: &Registry,
    locations: &[Location],
    config: &StreamConfig,
    notes: &mut Vec<String>,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<KernelCopy>> {
    let copy = kernels::copy(Precision::F32);
    let n = config.elements;
    let bytes = n * 4;
    let mut out = Vec::new();
    for &memory in locations {
        for &by in locations {
            if by == memory
                || !copy.has_source_for(by.technology())
                || !location_accessibility(registry, memory, by)?.0
            {
                continue;
            }
            progress(&format!("kernel copy {memory} -> {by}"));
            let codelet = Codelet::new(&copy, &[by])?;
            let a = Buffer::filled(memory, n, 0.1f32)?;
            let mut c = Buffer::<f32>::zeroed(by, n)?;
            let mut samples = Vec::with_capacity(config.times);
            for _ in 0..config.times {
                let started = Instant::now();
                codelet
                    .call_async(
                        vec![Arg::buf(&a), Arg::buf_mut(&mut c), Arg::u32(n as u32)],
                        Launch::d1(n),
                    )?
                    .synchronize()?;
                samples.push(started.elapsed());
            }
            // The kernel read the array where it lives: nothing was copied for it.
            let moved = a.stats();
            let copied: u64 = RouteKind::ALL
                .iter()
                .filter(|k| **k != RouteKind::InPlace)
                .map(|k| moved.calls_of(*k))
                .sum();
            if c.to_vec()?.iter().any(|v| *v != 0.1) {
                return Err(locus::Error::Invalid(format!(
                    "kernel copy {memory} -> {by}: the Copy kernel copied wrong values; its results are not to be trusted there"
                )));
            }
            if copied > 0 {
                notes.push(format!(
                    "kernel copy {memory} -> {by} skipped: the call moved the array ({copied} copies), though {by} can use {memory}'s memory in place"
                ));
                continue;
            }
            drop((a, c));
            let (src, dst) = (Memory::new(memory, bytes)?, Memory::new(by, bytes)?);
            src.fill(0..bytes, &[0x5A])?;
            let mut route = String::new();
            let mut api = Vec::with_capacity(config.times);
            for _ in 0..config.times {
                let started = Instant::now();
                route = src.copy_to(0, &dst, 0, bytes)?.kind.to_string();
                api.push(started.elapsed());
            }
            out.push(KernelCopy {
                memory: memory.to_string(),
                by: by.to_string(),
                bytes: bytes as u64,
                kernel: figures("Copy kernel", 2 * bytes as u64, &samples),
                api: figures("API copy", 2 * bytes as u64, &api),
                api_route: route,
            });
        }
    }
    Ok(out)
}
