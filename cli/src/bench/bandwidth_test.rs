//! Host memory as a dimension, in the CUDA samples' `bandwidthTest` shape, next to the
//! matrix: for every device, host-to-device and device-to-host from each kind of host
//! memory a program has: pageable (a `Vec`, the C library's pages, as a user's array
//! is), huge pages (locus's own host memory: large allocations are mapped with
//! transparent huge pages advised), a `Vec` registered in place for CUDA and HIP
//! (`Memory::from_vec_registered`), and each page-locked or host-visible kind the device
//! offers (CUDA / HIP pinned host memory, SYCL USM host memory, an OpenCL
//! `CL_MEM_ALLOC_HOST_PTR` buffer: on a discrete device through its mapping, the host's
//! side of it, as the copy between two buffers may stay in device memory);
//! device-to-device on the device, and between devices of one technology (peer where
//! enabled), at one size (32 MiB, bandwidthTest's default).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{measure, Bandwidth, Config, Stats};
use locus::{Location, Memory, MemoryKind, Registry, Result, Technology};

/// bandwidthTest's default transfer size.
pub const BYTES: u64 = 32 << 20;

/// One bandwidthTest-shaped measurement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BandwidthCell {
    /// The device.
    pub location: String,
    /// `host-to-device`, `device-to-host`, `device-to-device`, or `to <location>` (between
    /// two devices of one technology).
    pub direction: String,
    /// The host side: `pageable`, `huge-pages`, `registered`, or the page-locked kind
    /// (`pinned-host`, `usm-host`);
    /// `-` for device-to-device.
    pub host_memory: String,
    /// The route the planner took.
    pub route: String,
    /// Bytes per copy.
    pub bytes: u64,
    /// Timing.
    pub stats: Stats,
    /// Bandwidth.
    pub gbps: Bandwidth,
}

/// The page-locked or host-visible host kinds a device offers.
fn locked_kinds(kinds: &[MemoryKind]) -> Vec<MemoryKind> {
    [
        MemoryKind::PinnedHost,
        MemoryKind::UsmHost,
        MemoryKind::HostVisible,
    ]
    .into_iter()
    .filter(|k| kinds.contains(k))
    .collect()
}

/// The system's transparent huge page policy (`always`, `madvise`, `never`), where Linux
/// says.
fn huge_page_policy() -> Option<String> {
    let text = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

/// Runs the host-memory dimension on every device of `config`; what a device lacks is
/// named in `notes`.
pub(super) fn run(
    registry: &Registry,
    config: &Config,
    notes: &mut Vec<String>,
) -> Result<Vec<BandwidthCell>> {
    let mut out = Vec::new();
    let mut without = Vec::new();
    for &l in config.locations.iter().filter(|l| !l.is_host()) {
        let device = registry.device(l)?;
        let n = BYTES.min(device.info().max_allocation) as usize;
        let mut hosts: Vec<(String, Arc<Memory>)> = vec![
            ("pageable".into(), Arc::new(Memory::from_vec(vec![0u8; n]))),
            (
                "huge-pages".into(),
                Arc::new(Memory::new(Location::Host, n)?),
            ),
        ];
        // A user's own array pinned where it lies, for the runtimes that register host
        // memory (`Memory::from_vec_registered`).
        if matches!(l.technology(), Technology::Cuda | Technology::Hip) {
            hosts.push((
                "registered".into(),
                Arc::new(Memory::from_vec_registered(vec![0u8; n])?),
            ));
        }
        let locked = locked_kinds(&device.memory_kinds());
        if locked.is_empty() {
            without.push(l.to_string());
        }
        for kind in locked {
            hosts.push((
                kind.to_string(),
                Arc::new(Memory::on_kind(device, kind, n)?),
            ));
        }
        let (a, b) = (Memory::new(l, n)?, Memory::new(l, n)?);
        a.fill(0..n, &[0x5A])?;
        for (_, h) in &hosts {
            h.fill(0..n, &[0x5A])?;
        }
        let mut timed =
            |direction: String, host: &str, op: &mut dyn FnMut() -> Result<String>| -> Result<()> {
                let mut route = None;
                let stats = measure(config.cell_seconds, config.min_runs, || {
                    route = Some(op()?);
                    Ok(())
                })?;
                out.push(BandwidthCell {
                    location: l.to_string(),
                    direction,
                    host_memory: host.to_string(),
                    route: route.unwrap_or_default(),
                    bytes: n as u64,
                    gbps: Bandwidth::of(n as u64, &stats),
                    stats,
                });
                Ok(())
            };
        // A copy by the planner's route, named by the route's kind.
        let copy = |src: &Memory, dst: &Memory| -> Result<String> {
            Ok(src.copy_to(0, dst, 0, n)?.kind.to_string())
        };
        for (name, h) in &hosts {
            if name == "host-visible" && !device.info().shares_host_memory {
                // A discrete device's host-visible buffer (OpenCL's CL_MEM_ALLOC_HOST_PTR)
                // may live in device memory with a pinned host copy: a copy between two
                // buffers then stays on the device. The host's side is its mapping,
                // written and read by the host as a program does (NVIDIA's documented
                // way to pinned transfers in OpenCL).
                let mut view = h.map(0..n, true)?;
                timed("host-to-device".into(), name, &mut || {
                    a.write(0, view.as_slice()).map(|()| "mapped".to_string())
                })?;
                timed("device-to-host".into(), name, &mut || {
                    a.read(0, view.as_mut_slice()?)
                        .map(|()| "mapped".to_string())
                })?;
                continue;
            }
            timed("host-to-device".into(), name, &mut || copy(h, &a))?;
            timed("device-to-host".into(), name, &mut || copy(&a, h))?;
        }
        timed("device-to-device".into(), "-", &mut || copy(&a, &b))?;
        for &other in config
            .locations
            .iter()
            .filter(|o| **o != l && o.technology() == l.technology())
        {
            let c = Memory::new(other, n)?;
            timed(format!("to {other}"), "-", &mut || copy(&a, &c))?;
        }
    }
    if !without.is_empty() {
        notes.push(format!(
            "host memory: no page-locked or host-visible host memory kind at {} (CUDA / HIP pinned host memory, SYCL USM host memory and OpenCL host-visible buffers are such kinds)",
            without.join(", ")
        ));
    }
    if let Some(policy) = huge_page_policy() {
        notes.push(format!(
            "host memory: `huge-pages` is locus's host memory, whose large allocations ask for transparent huge pages; the system's policy is `{policy}`{}",
            if policy == "never" { ", so they are plain pages here" } else { "" }
        ));
    }
    Ok(out)
}
