//! [`Block`]: one allocation a memory resource handed out, and [`ReturnBlock`]: where it
//! goes back. The resource layer's resources are all `ReturnBlock`s, so a [`Memory`] on
//! loan from one holds the resource and its block inline, and gives the block back when
//! it is dropped.
//!
//! [`Memory`]: super::memory::Memory

use std::any::Any;
use std::fmt;

use super::aligned::Origin;
use super::location::Location;
use super::native::Native;

/// One allocation handed out by a resource. It can only be made by a resource and goes
/// back to the one that made it (through `MemoryResource::deallocate`).
pub struct Block {
    pub(crate) native: Native,
    pub(crate) bytes: usize,
    /// Resource-private identity (e.g. the pool's offset record).
    pub(crate) id: u64,
    pub(crate) location: Location,
    /// The allocation behind it, when alignment needed padding (umem's `aligned_origin`).
    pub(crate) origin: Option<Box<Origin>>,
    /// A tracking adaptor's record of it while it is out (0: none; see
    /// `resource::Tracking`).
    pub(crate) tracking: u64,
}

impl Block {
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Where it lives.
    pub fn location(&self) -> Location {
        self.location
    }

    /// The native handle.
    pub fn native(&self) -> &Native {
        &self.native
    }

    /// The allocation behind it when its alignment needed padding (umem's
    /// `aligned_origin`); `None` when the block starts its own allocation or is part of
    /// a pool's.
    pub fn origin(&self) -> Option<&Origin> {
        self.origin.as_deref()
    }
}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Block({} bytes at {}, {:?})",
            self.bytes, self.location, self.native
        )
    }
}

/// Takes blocks back: every memory resource is one (the resource layer implements it for
/// each `MemoryResource`).
pub trait ReturnBlock: Any + Send + Sync {
    /// Takes `block` back now.
    fn return_block(&self, block: Block);
    /// Takes `block` back once the work still using it is done; `after` names that work
    /// in the terms of the layer that lent the block (the resource layer: a
    /// `(Queue, Event)`).
    fn return_block_after(&self, block: Block, after: &dyn Any);
    /// How the lender names itself (a resource's description), for
    /// [`lookup`](crate::lookup).
    fn lender_name(&self) -> String {
        String::from("a memory resource")
    }
}
