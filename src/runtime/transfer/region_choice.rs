//! Which of two ways a region copy takes where both apply, measured in this process as
//! the copies are made: the first copies of a pair of devices, a size class and a run
//! length class alternate the two ways, each timed, and later ones take the faster. No
//! copy is made twice for it. Two choices are measured:
//! - [`Choice::Rect`]: a memcpy per row through the host's in-place view of both
//!   memories, or the runtime's own rectangle call (a CPU device's rectangle call may
//!   copy row by row in its own threads; another runtime's map and unmap may cost more
//!   than its call);
//! - [`Choice::Spread`]: one copy per run (in one submission where a device batches
//!   them), or the region packed into a block on each side and copied once (two device
//!   copies more, one transfer instead of many).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::batch::device_id;
use crate::core::memory::Memory;

/// Timed copies of each way before the faster is kept (by each way's median: the first
/// copy of a way may pay for pages touched the first time, and one copy may be lucky).
const SAMPLES: usize = 3;

/// Which two ways are weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Choice {
    /// [`Way::Host`] or [`Way::Runtime`].
    Rect,
    /// [`Way::Runs`] or [`Way::Packed`].
    Spread,
}

impl Choice {
    fn ways(self) -> [Way; 2] {
        match self {
            Choice::Rect => [Way::Host, Way::Runtime],
            Choice::Spread => [Way::Runs, Way::Packed],
        }
    }
}

/// A way to try next, or the one kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Way {
    /// A memcpy per row through the host's views.
    Host,
    /// The runtime's rectangle call.
    Runtime,
    /// One copy per run.
    Runs,
    /// Packed into a block on each side, one copy.
    Packed,
}

/// The choice, the two devices (their addresses), the size class and the run length
/// class (bytes, by powers of 4).
type Key = (Choice, usize, usize, u32, u32);

/// Each way's timed copies (in the order of [`Choice::ways`]) and the one kept.
#[derive(Default)]
struct Samples {
    timed: [Vec<Duration>; 2],
    kept: Option<Way>,
}

static CHOICES: Mutex<Option<HashMap<Key, Samples>>> = Mutex::new(None);

/// One region copy as the choice sees it: the two memories, the bytes it moves and the
/// length of its runs.
pub(super) struct Copy<'a> {
    pub(super) src: &'a Memory,
    pub(super) dst: &'a Memory,
    pub(super) bytes: usize,
    pub(super) run_len: usize,
}

fn key(choice: Choice, c: &Copy<'_>) -> Key {
    let class = |n: usize| n.max(1).ilog2() / 2;
    (
        choice,
        device_id(c.src.device()),
        device_id(c.dst.device()),
        class(c.bytes),
        class(c.run_len),
    )
}

/// Runs `f` on the samples of this copy's choice, devices and classes.
fn with_samples<R>(choice: Choice, c: &Copy<'_>, f: impl FnOnce(&mut Samples) -> R) -> R {
    let mut choices = CHOICES.lock().unwrap_or_else(|e| e.into_inner());
    let samples = choices
        .get_or_insert_with(HashMap::new)
        .entry(key(choice, c))
        .or_default();
    f(samples)
}

/// The way to take for this copy: the kept one, else the one with fewer samples (the
/// first of the two on a tie).
pub(super) fn next(choice: Choice, c: &Copy<'_>) -> Way {
    let ways = choice.ways();
    with_samples(choice, c, |s| match s.kept {
        Some(way) => way,
        None if s.timed[0].len() <= s.timed[1].len() => ways[0],
        None => ways[1],
    })
}

/// Records how long a copy took the way `next` gave, and keeps the faster way once both
/// have their samples (by each way's median).
pub(super) fn record(choice: Choice, c: &Copy<'_>, way: Way, took: Duration) {
    let ways = choice.ways();
    with_samples(choice, c, |s| {
        if s.kept.is_some() {
            return;
        }
        let Some(i) = ways.iter().position(|&w| w == way) else {
            return;
        };
        s.timed[i].push(took);
        if s.timed.iter().all(|t| t.len() >= SAMPLES) {
            let median = |v: &[Duration]| {
                let mut v = v.to_vec();
                v.sort();
                v.get(v.len() / 2).copied().unwrap_or(Duration::MAX)
            };
            s.kept = Some(match median(&s.timed[0]) <= median(&s.timed[1]) {
                true => ways[0],
                false => ways[1],
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
