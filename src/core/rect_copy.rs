//! The runtime's own rectangle copy ([`RectCopies`]): one call that moves a 2-D or 3-D
//! region between host memory and a device's, or within the device
//! (`clEnqueueCopyBufferRect`, `clEnqueueReadBufferRect`, `clEnqueueWriteBufferRect`,
//! `omp_target_memcpy_rect`), and the copy it is handed ([`RectCopy`]).

use super::device::Direction;
use super::error::Result;
use super::native::Native;
use super::region::Region;

/// One rectangle copy handed to a device. Both regions are checked against their memory
/// (the host slices start at the host memory's first byte and cover the region), have
/// one extent, are [`Region::normalized`] and [`Region::rect_ready`], and do not overlap.
pub enum RectCopy<'a> {
    /// Host bytes into the device's memory.
    Write {
        /// The host memory, from its first byte.
        src: &'a [u8],
        /// The region of it.
        src_region: Region,
        /// This device's memory.
        dst: &'a Native,
        /// The region of it.
        dst_region: Region,
    },
    /// The device's memory into host bytes.
    Read {
        /// This device's memory.
        src: &'a Native,
        /// The region of it.
        src_region: Region,
        /// The host memory, from its first byte.
        dst: &'a mut [u8],
        /// The region of it.
        dst_region: Region,
    },
    /// Between two allocations of this device (or two regions of one).
    Within {
        /// The source.
        src: &'a Native,
        /// The region of it.
        src_region: Region,
        /// The destination.
        dst: &'a Native,
        /// The region of it.
        dst_region: Region,
    },
}

impl RectCopy<'_> {
    /// Which way it goes.
    pub fn direction(&self) -> Direction {
        match self {
            RectCopy::Write { .. } => Direction::HostToDevice,
            RectCopy::Read { .. } => Direction::DeviceToHost,
            RectCopy::Within { .. } => Direction::WithinDevice,
        }
    }
}

/// Rectangle copies in one call of the runtime, waited for.
pub trait RectCopies {
    /// The name of the call [`RectCopies::copy_rect`] makes for `direction`, as a user of
    /// that API knows it (`clEnqueueCopyBufferRect`, ...).
    fn rect_call(&self, direction: Direction) -> &'static str;
    /// Runs `copy` in one call and waits for it.
    fn copy_rect(&self, copy: RectCopy<'_>) -> Result<()>;
}
