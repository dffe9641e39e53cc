//! Regions of buffers between ranks ([`Comm::send_region`]): a halo face, a column, a
//! plane of a 3-D box, sent and received without a temporary the program makes.
//!
//! The sender packs its region into a contiguous block at the location of the buffer's
//! current data, in one region copy there (the runtime's own rectangle copy where it has
//! one), and sends the block as an ordinary message; the receiver takes the message into
//! a contiguous block at its buffer's location and unpacks it into its region in one
//! region copy there. The block is what crosses the wire, so the route is the one a
//! whole buffer at that location takes ([`Comm::route_of`]): device-aware where the MPI
//! library takes the technology's pointers, mapped or staged otherwise. A region message
//! is a message of `region bytes / element size` elements: a whole-buffer
//! [`Comm::recv`] of that length takes it, and [`Comm::recv_region`] takes a
//! [`Comm::send`] of a buffer that long.

use std::sync::Arc;

use super::comm::Comm;
use super::point_to_point::spawn;
use crate::buffer::Buffer;
use crate::core::element::Element;
use crate::core::error::Result;
use crate::core::memory::Memory;
use crate::core::region::Region;
use crate::runtime::event::Event;

impl Comm {
    /// Sends region `region` of `buffer` (in bytes, whole elements:
    /// [`Region::block_2d::<T>`](Region::block_2d) makes one) to rank `dest` under `tag`.
    /// The region is checked against the buffer first: a bad one is an error on this
    /// rank and nothing is sent. The receiver takes it with [`Comm::recv_region`] into a
    /// region of the same number of elements (any shape), or with [`Comm::recv`].
    ///
    /// ```no_run
    /// # fn main() -> locus::Result<()> {
    /// use locus::mpi::Mpi;
    /// use locus::{Buffer, Location, Region};
    ///
    /// let mpi = Mpi::init()?;
    /// let world = mpi.world()?;
    /// let mut grid = Buffer::<f64>::zeroed(Location::Host, 512 * 512)?;
    /// // The last column of a 512 x 512 grid goes to rank 1's first column.
    /// if world.rank() == 0 {
    ///     let east = Region::block_2d::<f64>((512, 512), (0, 511), (512, 1));
    ///     world.send_region(&grid, &east, 1, 3)?;
    /// } else if world.rank() == 1 {
    ///     let west = Region::block_2d::<f64>((512, 512), (0, 0), (512, 1));
    ///     world.recv_region(&mut grid, &west, 0, 3)?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn send_region<T: Element>(
        &self,
        buffer: &Buffer<T>,
        region: &Region,
        dest: i32,
        tag: i32,
    ) -> Result<()> {
        self.check_peer("send_region", dest, tag)?;
        let count = elements_of(buffer, region, "Comm::send_region")?;
        let (memory, after) = buffer.hand_out_region(region)?;
        let packed = block_at(&memory, count * size_of::<T>())?;
        after.iter().try_for_each(Event::wait)?;
        memory.copy_region_to(region, &packed, &region.packed())?;
        let posted = self.inner.post_header::<T>(&packed, count, dest, tag)?;
        self.inner
            .send_body(&packed, count * size_of::<T>(), dest, posted)
    }

    /// Starts sending region `region` of `buffer` to `dest` (see [`Comm::send_region`])
    /// and returns its event. The region is packed at the buffer's location after the
    /// work in flight that writes it (a receive into another region of the buffer does
    /// not hold it up), and writes to the region wait for the pack alone, not for the
    /// message: the message carries the data as it was at the call. A pack that fails
    /// on the device fails the event; the receiver, already answered, then waits out its
    /// time limit.
    pub fn isend_region<T: Element>(
        &self,
        buffer: &Buffer<T>,
        region: &Region,
        dest: i32,
        tag: i32,
    ) -> Result<Event> {
        self.check_peer("isend_region", dest, tag)?;
        let count = elements_of(buffer, region, "Comm::isend_region")?;
        let bytes = count * size_of::<T>();
        let (memory, after) = buffer.hand_out_region(region)?;
        let packed = block_at(&memory, bytes)?;
        let packing = memory.copy_region_to_async(region, &packed, &region.packed(), &after)?;
        buffer.keep_pending_region(&memory, packing.clone(), false, *region);
        let posted = self.inner.post_header::<T>(&packed, count, dest, tag)?;
        let inner = Arc::clone(&self.inner);
        spawn("isend_region", move || {
            packing.wait()?;
            inner.send_body(&packed, bytes, dest, posted)
        })
    }

    /// Receives a message from rank `source` under `tag` into region `region` of
    /// `buffer`; the rest of the buffer keeps its data, and the replica written becomes
    /// the only current one. The message must hold as many elements of `T` as the region
    /// (any shape on the sender's side): otherwise both ranks get an error and nothing is
    /// written. A bad region is an error on this rank before anything is received.
    pub fn recv_region<T: Element>(
        &self,
        buffer: &mut Buffer<T>,
        region: &Region,
        source: i32,
        tag: i32,
    ) -> Result<()> {
        self.check_peer("recv_region", source, tag)?;
        let count = elements_of(buffer, region, "Comm::recv_region")?;
        let bytes = count * size_of::<T>();
        let (target, after) = buffer.hand_out_for_region_write(region)?;
        let block = block_at(&target, bytes)?;
        let head = self.inner.post_header_recv(source, tag)?;
        let header = self.inner.check_header::<T>(head, count, source, tag)?;
        self.inner.recv_body(&block, bytes, source, header)?;
        after.iter().try_for_each(Event::wait)?;
        // Only the unpack writes the buffer: a failure before it leaves the data as it was.
        if let Err(e) = block.copy_region_to(&region.packed(), &target, region) {
            buffer.mark_lost(&target, &e);
            return Err(e);
        }
        Ok(())
    }

    /// Starts receiving into region `region` of `buffer` (see [`Comm::recv_region`]) and
    /// returns its event at once; work on the region (or the whole buffer) waits for it,
    /// work on other regions does not (a halo exchange posts its four receives and four
    /// sends on one buffer). A message refused or lost on the way fails the event and
    /// leaves the buffer's data as it was: the message lands in a block of its own, and
    /// only the unpack into the region writes the buffer.
    pub fn irecv_region<T: Element>(
        &self,
        buffer: &mut Buffer<T>,
        region: &Region,
        source: i32,
        tag: i32,
    ) -> Result<Event> {
        self.check_peer("irecv_region", source, tag)?;
        let count = elements_of(buffer, region, "Comm::irecv_region")?;
        let bytes = count * size_of::<T>();
        let (target, after) = buffer.hand_out_for_region_write(region)?;
        let block = block_at(&target, bytes)?;
        let head = self.inner.post_header_recv(source, tag)?;
        // The buffer waits for the unpack alone, which fails only if writing the region
        // failed; the caller's event tells every failure.
        let (unpacked, unpack_done) = Event::user();
        let (inner, region_of, work_target) =
            (Arc::clone(&self.inner), *region, Arc::clone(&target));
        let event = spawn("irecv_region", move || {
            let arrived = inner
                .check_header::<T>(head, count, source, tag)
                .and_then(|header| inner.recv_body(&block, bytes, source, header))
                .and_then(|()| after.iter().try_for_each(Event::wait));
            if let Err(e) = arrived {
                unpack_done.complete();
                return Err(e);
            }
            match block.copy_region_to(&region_of.packed(), &work_target, &region_of) {
                Ok(_) => {
                    unpack_done.complete();
                    Ok(())
                }
                Err(e) => {
                    unpack_done.fail_with(e.clone());
                    Err(e)
                }
            }
        })?;
        buffer.keep_pending_region(&target, unpacked, true, *region);
        Ok(event)
    }
}

/// A contiguous block of `bytes` at the location of `memory`, for a packed region.
fn block_at(memory: &Memory, bytes: usize) -> Result<Arc<Memory>> {
    Memory::new(memory.location(), bytes).map(Arc::new)
}

/// The number of elements of `T` in `region`, checked as a region of `buffer`.
fn elements_of<T: Element>(buffer: &Buffer<T>, region: &Region, call: &str) -> Result<usize> {
    let size = size_of::<T>();
    region.check_elements(buffer.location(), call, "buffer's", (buffer.len(), size))?;
    // Checked: inside the buffer, so the bytes neither overflow nor split an element.
    Ok(region.bytes().unwrap_or(0) / size)
}
