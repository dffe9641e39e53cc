//! Host memory as a dimension, in the CUDA samples' `bandwidthTest` shape, next to the
//! matrix: for every device, host-to-device and device-to-host from each kind of host
//! memory a program has: pageable (a `Vec`, the C library's pages, as a user's array
//! is), huge pages (locus's own host memory: large allocations are mapped with
//! transparent huge pages advised), a `Vec` registered in place for CUDA and HIP
//! (`Memory::from_vec_registered`), and each page-locked or host-visible kind the device
//! offers (CUDA / HIP pinned host memory, SYCL USM host memory, an OpenCL
//! `CL_MEM_ALLOC_HOST_PTR` buffer); device-to-device on the device, and between devices
//! of one technology (peer where enabled), at one size (32 MiB, bandwidthTest's
//! default).

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
        let mut hosts: Vec<(String, Memory)> = vec![
            ("pageable".into(), Memory::from_vec(vec![0u8; n])),
            ("huge-pages".into(), Memory::new(Location::Host, n)?),
        ];
        // A user's own array pinned where it lies, for the runtimes that register host
        // memory (`Memory::from_vec_registered`).
        if matches!(l.technology(), Technology::Cuda | Technology::Hip) {
            hosts.push((
                "registered".into(),
                Memory::from_vec_registered(vec![0u8; n])?,
            ));
        }
        let locked = locked_kinds(&device.memory_kinds());
        if locked.is_empty() {
            without.push(l.to_string());
        }
        for kind in locked {
            hosts.push((kind.to_string(), Memory::on_kind(device, n, kind)?));
        }
        let (a, b) = (Memory::new(l, n)?, Memory::new(l, n)?);
        a.fill(0..n, &[0x5A])?;
        for (_, h) in &hosts {
            h.fill(0..n, &[0x5A])?;
        }
        let mut cell = |direction: String, host: &str, src: &Memory, dst: &Memory| -> Result<()> {
            let mut route = None;
            let stats = measure(config.cell_seconds, config.min_runs, || {
                route = Some(src.copy_to(0, dst, 0, n)?);
                Ok(())
            })?;
            out.push(BandwidthCell {
                location: l.to_string(),
                direction,
                host_memory: host.to_string(),
                route: route.map_or_else(String::new, |r| r.kind.to_string()),
                bytes: n as u64,
                gbps: Bandwidth::of(n as u64, &stats),
                stats,
            });
            Ok(())
        };
        for (name, h) in &hosts {
            cell("host-to-device".into(), name, h, &a)?;
            cell("device-to-host".into(), name, &a, h)?;
        }
        cell("device-to-device".into(), "-", &a, &b)?;
        for &other in config
            .locations
            .iter()
            .filter(|o| **o != l && o.technology() == l.technology())
        {
            let c = Memory::new(other, n)?;
            cell(format!("to {other}"), "-", &a, &c)?;
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
