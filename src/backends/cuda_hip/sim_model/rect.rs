//! The simulated drivers' rectangle copies (`cuMemcpy3DAsync`, `hipMemcpy3DAsync`): the
//! rules both drivers hold a 3-D copy to (every extent at least 1, pitches of at least
//! the width, planes of at least the copy's rows), then each end's rows inside one
//! allocation where the end is device memory (a row past it is a fault on a real
//! device: recorded as a violation and refused), then one queued copy per row.

use super::{Refusal, SimModel};

/// One end of a simulated rectangle copy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SimRectEnd {
    /// Its first byte.
    pub address: usize,
    /// Device memory (checked against the allocations), not host memory.
    pub device: bool,
    /// Bytes from one row to the next.
    pub pitch: usize,
    /// Rows from one plane to the next.
    pub rows_per_plane: usize,
}

impl SimModel {
    /// Queues the rows of a `width` x `height` x `depth` copy from `src` to `dst` on
    /// `stream`, after the drivers' checks.
    pub(crate) fn rect(
        &self,
        call: &'static str,
        stream: usize,
        (src, dst): (SimRectEnd, SimRectEnd),
        [width, height, depth]: [usize; 3],
    ) -> Result<(), Refusal> {
        let shaped =
            |e: &SimRectEnd| e.pitch >= width && (depth == 1 || e.rows_per_plane >= height);
        if width == 0 || height == 0 || depth == 0 || !shaped(&src) || !shaped(&dst) {
            self.record(call, stream);
            return Err(Refusal::InvalidValue);
        }
        let row =
            |e: &SimRectEnd, y: usize, z: usize| e.address + (z * e.rows_per_plane + y) * e.pitch;
        for (end, side) in [(&src, "source"), (&dst, "destination")] {
            let last = row(end, height - 1, depth - 1) + width - 1;
            let inside = self.find(end.address).is_some_and(|f| {
                let (start, len) = f.range();
                last < start + len
            });
            if end.device && !inside {
                self.violation(format!(
                    "{call}: the {side}'s rows run from {:#x} to {last:#x}, outside one allocation",
                    end.address
                ));
                self.record(call, stream);
                return Err(Refusal::InvalidValue);
            }
        }
        // One queued operation, as the driver queues one copy.
        let rows: Vec<super::Op> = (0..depth)
            .flat_map(|z| (0..height).map(move |y| (y, z)))
            .map(|(y, z)| super::copy_op(row(&dst, y, z), row(&src, y, z), width))
            .collect();
        self.enqueue(
            call,
            stream,
            Box::new(move || rows.into_iter().for_each(|op| op())),
        );
        Ok(())
    }
}
