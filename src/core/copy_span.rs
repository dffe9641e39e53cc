//! Where a copy reads and writes: a leaf of the core, named by the copy engine, the
//! queued copies of every backend and their abilities alike.

/// Where a copy reads and writes: `len` bytes from `src_offset` of the source to
/// `dst_offset` of the destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CopySpan {
    /// The first byte read, in the source.
    pub src_offset: usize,
    /// The first byte written, in the destination.
    pub dst_offset: usize,
    /// Bytes copied.
    pub len: usize,
}

impl CopySpan {
    /// `len` bytes from the start of the source to the start of the destination.
    pub const fn whole(len: usize) -> CopySpan {
        CopySpan {
            src_offset: 0,
            dst_offset: 0,
            len,
        }
    }
}
