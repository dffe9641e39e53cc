//! What tests do to the simulated driver and ask of it beyond the driver API: inject
//! failures, read the calls made and the rules broken, leave a thread with no current
//! device, make a user's own stream and queue work on it, see what a pool keeps.

use super::*;

/// The driver instance of another library's context: no `Strict` has this id.
const FOREIGN: u64 = u64::MAX;

impl Strict {
    /// Makes the next call named `call` fail once (`CUDA_ERROR_UNKNOWN`).
    pub(crate) fn fail_once(&self, call: &'static str) {
        self.lock().fail_once.push(call);
    }

    /// Makes the next batch of copies fail at copy `index` (an illegal address, as a
    /// copy through memory the device cannot reach does), reported as the driver's
    /// `failIdx`.
    pub(crate) fn fail_batch_copy(&self, index: usize) {
        self.lock().fail_batch_copy = Some(index);
    }

    /// The rules broken by calls that cannot fail.
    pub(crate) fn violations(&self) -> Vec<String> {
        self.lock().violations.clone()
    }

    /// Every call made so far, in order.
    pub(crate) fn calls(&self) -> Vec<&'static str> {
        self.lock().calls.clone()
    }

    /// Leaves no device of any driver current on this thread (a fresh thread).
    pub(crate) fn clear_current() {
        CURRENT.with(|c| c.set(None));
    }

    /// Makes another library's context current on this thread (a context of no device
    /// this driver instance gave locus), as CuPy or PyTorch leave it between calls.
    pub(crate) fn make_foreign_current() {
        CURRENT.with(|c| c.set(Some((FOREIGN, 0))));
    }

    /// Whether the context current on this thread is the one `make_foreign_current`
    /// made, and `None` when nothing is current.
    pub(crate) fn foreign_is_current() -> Option<bool> {
        CURRENT.with(Cell::get).map(|(id, _)| id == FOREIGN)
    }

    /// The preferred locations set so far: start, length, device (`None`: the host).
    pub(crate) fn advice(&self) -> Vec<(u64, usize, Option<u32>)> {
        self.lock().advice.clone()
    }

    /// The bytes device `device`'s pool keeps now.
    pub(crate) fn pool_kept(&self, device: u32) -> usize {
        let pools = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        pools.get(device as usize).map_or(0, |p| p.0)
    }

    /// Launches of more than `items` work items along x fail from now on (HIP's
    /// limit, made small enough to reach in a test).
    pub(crate) fn limit_launches(&self, items: u64) {
        self.launch_items.store(items, Ordering::Relaxed);
    }

    /// A user's own stream of the current device (`cuStreamCreate`).
    pub(crate) fn create_stream(&self) -> Result<u64, GpuError> {
        let device = self.enter("cuStreamCreate")?;
        Ok(self.lock().streams.create(device))
    }

    /// A user's work on their own stream (a kernel of theirs), run when the stream is.
    pub(crate) fn enqueue_user(&self, stream: u64, op: Op) -> Result<(), GpuError> {
        let device = self.enter("cuLaunchKernel")?;
        let id = self.stream("cuLaunchKernel", stream, device)?;
        self.lock().streams.push(id, op);
        Ok(())
    }
}

/// The facts of simulated device `i` (1 GiB, concurrent managed access as given, the
/// stream-ordered pool offered), as the tests make their devices.
pub(crate) fn facts(i: u32, managed: bool) -> GpuFacts {
    GpuFacts {
        name: format!("sim {i}"),
        memory_bytes: 1 << 30,
        concurrent_managed_access: managed,
        stream_ordered_pools: true,
        pageable_memory_access: false,
        version: "sim".into(),
        pci: None,
        notes: vec![],
    }
}

/// One simulated driver with one device of 256 MiB, and that device (with concurrent
/// managed access), as most tests make them.
pub(crate) fn one_device() -> (Arc<Strict>, Arc<GpuDevice<Strict>>) {
    let api = Arc::new(Strict::new(1, vec![], 256 << 20, vec![]));
    let gpu = Arc::new(GpuDevice::new(Arc::clone(&api), 0, facts(0, true)));
    (api, gpu)
}
