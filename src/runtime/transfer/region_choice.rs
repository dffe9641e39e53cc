//! Which of two rectangle ways a region copy takes where both apply: a memcpy per row
//! through the host's in-place view of both memories, or the runtime's own rectangle
//! call. Which is faster depends on the runtime (a CPU device's rectangle call may copy
//! row by row in its own threads; another runtime's map and unmap may cost more than its
//! call), so it is measured in this process, as the copies are made: the first copies of
//! a pair of devices and a size class alternate the two ways, each timed, and later ones
//! take the faster. No copy is made twice for it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::batch::device_id;
use crate::core::memory::Memory;

/// Timed copies of each way before the faster is kept.
const SAMPLES: usize = 2;

/// A way to try next, or the one kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Way {
    /// A memcpy per row through the host's views.
    Host,
    /// The runtime's rectangle call.
    Runtime,
}

/// The two devices (their addresses) and the size class (bytes, by powers of 4).
type Key = (usize, usize, u32);

#[derive(Default)]
struct Samples {
    host: Vec<Duration>,
    runtime: Vec<Duration>,
    kept: Option<Way>,
}

static CHOICES: Mutex<Option<HashMap<Key, Samples>>> = Mutex::new(None);

fn key(src: &Memory, dst: &Memory, bytes: usize) -> Key {
    (
        device_id(src.device()),
        device_id(dst.device()),
        bytes.max(1).ilog2() / 2,
    )
}

/// Runs `f` on the samples of this copy's devices and size class.
fn with_samples<R>(
    src: &Memory,
    dst: &Memory,
    bytes: usize,
    f: impl FnOnce(&mut Samples) -> R,
) -> R {
    let mut choices = CHOICES.lock().unwrap_or_else(|e| e.into_inner());
    let samples = choices
        .get_or_insert_with(HashMap::new)
        .entry(key(src, dst, bytes))
        .or_default();
    f(samples)
}

/// The way to take for this copy: the kept one, else the one with fewer samples.
pub(super) fn next(src: &Memory, dst: &Memory, bytes: usize) -> Way {
    with_samples(src, dst, bytes, |s| match s.kept {
        Some(way) => way,
        None if s.host.len() <= s.runtime.len() => Way::Host,
        None => Way::Runtime,
    })
}

/// Records how long a copy took the way `next` gave, and keeps the faster way once both
/// have their samples (by each way's best time).
pub(super) fn record(src: &Memory, dst: &Memory, bytes: usize, way: Way, took: Duration) {
    with_samples(src, dst, bytes, |s| {
        if s.kept.is_some() {
            return;
        }
        match way {
            Way::Host => s.host.push(took),
            Way::Runtime => s.runtime.push(took),
        }
        if s.host.len() >= SAMPLES && s.runtime.len() >= SAMPLES {
            let best = |v: &[Duration]| v.iter().min().copied().unwrap_or(Duration::MAX);
            s.kept = Some(if best(&s.host) <= best(&s.runtime) {
                Way::Host
            } else {
                Way::Runtime
            });
        }
    })
}

/// Times `f`.
pub(super) fn timed<R>(f: impl FnOnce() -> R) -> (R, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}
