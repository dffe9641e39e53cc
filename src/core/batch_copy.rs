//! One copy of a batch a device runs in its runtime's batch form
//! ([`CopyBatches::copy_batch`](super::capability::CopyBatches::copy_batch)): host bytes into the
//! device's memory, its memory into host bytes, or a copy within the device.

use super::device::Device;
use super::error::Result;
use super::native::Native;

/// One copy of a batch handed to a device.
pub enum DeviceCopy<'a> {
    /// `src` (host memory) into `dst` at `offset`.
    Write {
        /// This device's memory.
        dst: &'a Native,
        /// Where in it.
        offset: usize,
        /// The host bytes.
        src: &'a [u8],
    },
    /// `src` at `offset` into `dst` (host memory).
    Read {
        /// This device's memory.
        src: &'a Native,
        /// Where in it.
        offset: usize,
        /// The host bytes.
        dst: &'a mut [u8],
    },
    /// `len` bytes of `src` at `src_offset` to `dst` at `dst_offset`, both this device's.
    Within {
        /// The source.
        src: &'a Native,
        /// Where in the source.
        src_offset: usize,
        /// The destination.
        dst: &'a Native,
        /// Where in the destination.
        dst_offset: usize,
        /// Bytes.
        len: usize,
    },
}

impl DeviceCopy<'_> {
    /// Its length in bytes.
    pub fn len(&self) -> usize {
        match self {
            DeviceCopy::Write { src, .. } => src.len(),
            DeviceCopy::Read { dst, .. } => dst.len(),
            DeviceCopy::Within { len, .. } => *len,
        }
    }

    /// True for a copy of no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs it alone, through `device`'s own `write`, `read` or `copy_within`.
    pub fn run_alone<D: Device + ?Sized>(&mut self, device: &D) -> Result<()> {
        match self {
            DeviceCopy::Write { dst, offset, src } => device.write(dst, *offset, src),
            DeviceCopy::Read { src, offset, dst } => device.read(src, *offset, dst),
            DeviceCopy::Within {
                src,
                src_offset,
                dst,
                dst_offset,
                len,
            } => device.copy_within(src, *src_offset, dst, *dst_offset, *len),
        }
    }
}
