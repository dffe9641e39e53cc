//! Each device's stream-ordered pool of locus's own, CUDA's and HIP's alike: made on the
//! device's first stream-ordered allocation (`cuMemPoolCreate` / `hipMemPoolCreate`) and
//! kept for the process, as the device's primary context and stream are.

use std::sync::Mutex;

use super::GpuError;

/// The pools, by device ordinal, as addresses (0: none made yet).
#[derive(Default)]
pub(crate) struct OwnPools(Mutex<Vec<usize>>);

impl OwnPools {
    /// Room for `devices` devices' pools, none made.
    pub(crate) fn new(devices: usize) -> OwnPools {
        OwnPools(Mutex::new(vec![0; devices]))
    }

    /// Device `ordinal`'s pool, made by `make` the first time it is asked for (under
    /// the lock: one pool per device when two threads allocate first at once); `call`
    /// names the error for an ordinal without a slot.
    pub(crate) fn get_or_make(
        &self,
        ordinal: usize,
        call: &'static str,
        make: impl FnOnce() -> Result<usize, GpuError>,
    ) -> Result<usize, GpuError> {
        let mut pools = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let slot = pools
            .get_mut(ordinal)
            .ok_or_else(|| GpuError::other(call, format!("no device {ordinal}")))?;
        if *slot == 0 {
            *slot = make()?;
        }
        Ok(*slot)
    }
}
