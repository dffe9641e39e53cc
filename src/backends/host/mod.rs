//! The host: ordinary memory from the global allocator, aligned to [`ALIGNMENT`]; large
//! allocations are mapped pages (see `pages`).
//!
//! No kernels and no queued work: codelets run their Rust host function directly
//! (`codelet`), and every host operation completes before the call returns (asynchronous
//! copies go to locus's worker threads).

use std::alloc::{self, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::core::capability::{native_calls_are_own, HostMemoryInPlace, InPlace, NativeCalls};
use crate::core::device::{
    host_memory_bytes, Device, DeviceInfo, HostAccess, HostReach, PhysicalDevice, ALIGNMENT,
};
use crate::core::discovery::Discovery;
use crate::core::error::{Error, Result};
use crate::core::location::Location;
use crate::core::native::Native;

mod device;
pub(crate) mod ipc;
use crate::backends::pages;

/// The host device: there is exactly one.
#[derive(Debug)]
pub struct HostDevice {
    info: DeviceInfo,
    live: AtomicUsize,
}

pub(crate) fn discover() -> Discovery {
    let memory_bytes = host_memory_bytes();
    let device = HostDevice {
        info: DeviceInfo {
            name: format!(
                "{} host, {} threads",
                std::env::consts::ARCH,
                std::thread::available_parallelism().map_or(1, |n| n.get())
            ),
            platform: "Rust global allocator".into(),
            kind: "host".into(),
            memory_bytes,
            max_allocation: memory_bytes.unwrap_or(isize::MAX as u64 - ALIGNMENT as u64),
            shares_host_memory: true,
            version: None,
            notes: vec![],
            physical: Some(PhysicalDevice::HostCpu),
        },
        live: AtomicUsize::new(0),
    };
    Discovery {
        devices: vec![Arc::new(device)],
        skipped: vec![],
        paths: vec![],
    }
}

fn layout(bytes: usize) -> Result<Layout> {
    Layout::from_size_align(bytes.max(1), ALIGNMENT)
        .map_err(|e| Error::Invalid(format!("host: cannot allocate {bytes} bytes: {e}")))
}

fn ptr_of(native: &Native) -> *mut u8 {
    match native {
        Native::Host { ptr } => *ptr,
        #[allow(unreachable_patterns)]
        other => unreachable!("host device given a foreign handle {other:?}"),
    }
}
