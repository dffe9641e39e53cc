//! Regions of a buffer ([`Buffer::copy_region_from`]): a 2-D or 3-D rectangle of one
//! buffer's elements into a rectangle of another's, wherever each is current, in one
//! region copy ([`Memory::copy_region_to`](crate::Memory::copy_region_to)).

use bytemuck::Pod;

use super::replicas::only_current;
use super::Buffer;
use crate::core::error::Result;
use crate::core::region::Region;
use crate::runtime::transfer::RegionRoute;

impl<T: Pod> Buffer<T> {
    /// Copies region `src_region` of `src` into region `dst_region` of this buffer (both
    /// in bytes, whole elements: `Region::block_2d::<T>` makes them), from the replica
    /// of `src` the planner finds cheapest, into the one this buffer writes to; that
    /// replica becomes the only current one. Both regions are checked against the
    /// buffers' lengths first: out of range is an error and nothing is written.
    ///
    /// ```
    /// use locus::{Buffer, Region};
    ///
    /// let grid = Buffer::from_vec((0..64 * 64).map(|i| i as f32).collect::<Vec<f32>>());
    /// let mut halo = Buffer::<f32>::zeroed(*locus::available().last().unwrap(), 64)?;
    /// let column = Region::block_2d::<f32>((64, 64), (0, 63), (64, 1));
    /// halo.copy_region_from(&column.packed(), &grid, &column)?;
    /// assert_eq!(halo.to_vec()?[2], (2 * 64 + 63) as f32);
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn copy_region_from(
        &mut self,
        dst_region: &Region,
        src: &Buffer<T>,
        src_region: &Region,
    ) -> Result<RegionRoute> {
        const CALL: &str = "Buffer::copy_region_from";
        let size = std::mem::size_of::<T>();
        src_region.check_elements(src.location(), CALL, "source", (src.len(), size))?;
        dst_region.check_elements(self.location(), CALL, "destination", (self.len(), size))?;
        src.synchronize()?;
        let src_replicas = src.settled()?;
        let mut replicas = self.settled()?;
        let target = self.write_target(&replicas)?;
        let bytes = src_region.bytes().unwrap_or(0);
        let (source, _) =
            src.cheapest_source_for(&src_replicas, &replicas[target].memory, bytes)?;
        let route = src_replicas[source].memory.copy_region_to(
            src_region,
            &replicas[target].memory,
            dst_region,
        )?;
        only_current(&mut replicas, target);
        Ok(route)
    }

    /// Copies region `src_region` of this buffer into region `dst_region` of `dst` (see
    /// [`Buffer::copy_region_from`]).
    pub fn copy_region_to(
        &self,
        src_region: &Region,
        dst: &mut Buffer<T>,
        dst_region: &Region,
    ) -> Result<RegionRoute> {
        dst.copy_region_from(dst_region, self, src_region)
    }
}
