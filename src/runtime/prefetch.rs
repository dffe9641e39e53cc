//! `Memory::prefetch_to`: memory that migrates (SYCL USM shared memory; CUDA's and HIP's
//! managed memory to come) moved ahead of its use, on the device's queue, with an event;
//! memory that does not migrate is left where it is and the answer says why.

use std::ops::Range;
use std::sync::Arc;

use crate::core::capability::Prefetched;
use crate::core::error::Result;
use crate::core::location::Location;
use crate::core::memory::Memory;
use crate::runtime::event::Event;

/// What [`Memory::prefetch_to`] did.
#[derive(Debug, Clone)]
pub struct PrefetchOutcome {
    /// Done when the move is (at once when nothing moved).
    pub event: Event,
    /// Whether a move was started.
    pub moved: bool,
    /// What was done, or why nothing moves.
    pub why: String,
}

impl Memory {
    /// Starts moving `range` of this memory to `to` ahead of its use there and returns
    /// at once with the move's event: SYCL's `queue.prefetch` of USM shared memory to
    /// its device. Where nothing migrates (a kind that stays where it was allocated, a
    /// location or direction the runtime does not prefetch to) nothing is done,
    /// `moved` is false and `why` says so; the data is valid either way. An out-of-range
    /// `range` is an error.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use locus::{Location, Memory};
    ///
    /// let memory = Arc::new(Memory::new(Location::Host, 4096)?);
    /// let outcome = memory.prefetch_to(Location::Host, 0..4096)?;
    /// outcome.event.wait()?;
    /// println!("moved: {} ({})", outcome.moved, outcome.why);
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn prefetch_to(
        self: &Arc<Self>,
        to: Location,
        range: Range<usize>,
    ) -> Result<PrefetchOutcome> {
        let len = self.check_range("prefetch", &range)?;
        crate::core::shutdown::check_runtime_alive(self.location(), "prefetch")?;
        let not_moved = |why: String| PrefetchOutcome {
            event: Event::done(),
            moved: false,
            why,
        };
        let here = to == self.location();
        if !here && !to.is_host() {
            return Ok(not_moved(format!(
                "{} memory migrates only between its device and the host, not to {to}",
                self.location()
            )));
        }
        let Some(prefetcher) = self.device().prefetcher() else {
            return Ok(not_moved(format!(
                "{}: its memory does not migrate (nothing to prefetch)",
                self.location()
            )));
        };
        match prefetcher.prefetch(self.native(), range.start, len, here)? {
            Prefetched::Started(completion) => Ok(PrefetchOutcome {
                event: Event::native(completion, vec![Arc::clone(self)]),
                moved: true,
                why: format!("{len} bytes moving to {to}"),
            }),
            Prefetched::NotMoved(why) => Ok(not_moved(why)),
        }
    }
}
