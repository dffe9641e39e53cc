//! The machine a benchmark ran on, as its report describes it.

use serde::{Deserialize, Serialize};

use locus::Registry;

/// One device as the report describes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceDescription {
    /// Location, e.g. `opencl:0`.
    pub location: String,
    /// Device name.
    pub name: String,
    /// Platform or driver.
    pub platform: String,
    /// cpu, gpu, host, ...
    pub kind: String,
    /// Total memory, where known.
    pub memory_bytes: Option<u64>,
    /// Largest allocation.
    pub max_allocation: u64,
    /// Whether it uses the host's memory.
    pub shares_host_memory: bool,
    /// The runtime's or driver's version, where it reports one (absent in reports made
    /// before it was recorded).
    #[serde(default)]
    pub version: Option<String>,
}

/// The machine the run was made on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    /// Host name, OS and architecture.
    pub host: String,
    /// Hardware threads.
    pub threads: usize,
    /// The devices found.
    pub devices: Vec<DeviceDescription>,
    /// Technologies without a device, with the reason.
    pub missing: Vec<(String, String)>,
}

pub(super) fn machine(registry: &Registry) -> Machine {
    let host = format!(
        "{} {} {}",
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown-host".into()),
        std::env::consts::OS,
        std::env::consts::ARCH
    );
    Machine {
        host,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        devices: registry
            .devices()
            .map(|d| {
                let i = d.info();
                DeviceDescription {
                    location: d.location().to_string(),
                    name: i.name.clone(),
                    platform: i.platform.clone(),
                    kind: i.kind.clone(),
                    memory_bytes: i.memory_bytes,
                    max_allocation: i.max_allocation,
                    shares_host_memory: i.shares_host_memory,
                    version: i.version.clone(),
                }
            })
            .collect(),
        missing: registry
            .missing()
            .iter()
            .map(|(t, r)| (t.to_string(), r.clone()))
            .collect(),
    }
}
