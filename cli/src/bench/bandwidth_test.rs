//! The CUDA samples' `bandwidthTest` shape next to the matrix: per device that has a
//! page-locked host memory kind (CUDA / HIP pinned host memory, SYCL USM host memory),
//! host-to-device and device-to-host from pageable and from that host memory,
//! device-to-device on the device, and device-to-device between devices of one
//! technology (peer where enabled), at one size (32 MiB, bandwidthTest's default).

use serde::{Deserialize, Serialize};

use super::{measure, Bandwidth, Config, Stats};
use locus::{Location, Memory, MemoryKind, Registry, Result};

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
    /// The host side: `pageable`, or the page-locked kind (`pinned-host`, `usm-host`);
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

/// The page-locked host kind a device offers, if any.
fn host_kind(kinds: &[MemoryKind]) -> Option<MemoryKind> {
    [MemoryKind::PinnedHost, MemoryKind::UsmHost]
        .into_iter()
        .find(|k| kinds.contains(k))
}

/// Runs the bandwidthTest shape on every location of `config` with a page-locked host
/// kind; the others are named in `notes`.
pub(super) fn run(
    registry: &Registry,
    config: &Config,
    notes: &mut Vec<String>,
) -> Result<Vec<BandwidthCell>> {
    let mut out = Vec::new();
    let mut without = Vec::new();
    for &l in config.locations.iter().filter(|l| !l.is_host()) {
        let device = registry.device(l)?;
        let Some(kind) = host_kind(&device.memory_kinds()) else {
            without.push(l.to_string());
            continue;
        };
        let n = BYTES.min(device.info().max_allocation) as usize;
        let pageable = Memory::new(Location::Host, n)?;
        let locked = Memory::on_kind(device, n, kind)?;
        let (a, b) = (Memory::new(l, n)?, Memory::new(l, n)?);
        pageable.fill(0..n, &[0x5A])?;
        locked.fill(0..n, &[0x5A])?;
        a.fill(0..n, &[0x5A])?;
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
        let kind_name = kind.to_string();
        cell("host-to-device".into(), "pageable", &pageable, &a)?;
        cell("host-to-device".into(), &kind_name, &locked, &a)?;
        cell("device-to-host".into(), "pageable", &a, &pageable)?;
        cell("device-to-host".into(), &kind_name, &a, &locked)?;
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
            "bandwidthTest shape: no page-locked host memory kind at {} (CUDA / HIP pinned host memory and SYCL USM host memory have one)",
            without.join(", ")
        ));
    }
    Ok(out)
}
