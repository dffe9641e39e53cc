//! A buffer of any element width: Python sees dtypes, Rust stores `Buffer<u8 / u16 / u32
//! / u64>` (every supported dtype is plain bytes of one of these widths).

use std::sync::Arc;

use locus::{Buffer, Location, Memory, Native, Route};

/// A `locus::Buffer` of elements of 1, 2, 4 or 8 bytes.
pub enum Store {
    /// 1-byte elements.
    W1(Buffer<u8>),
    /// 2-byte elements.
    W2(Buffer<u16>),
    /// 4-byte elements.
    W4(Buffer<u32>),
    /// 8-byte elements.
    W8(Buffer<u64>),
}

/// Runs `$body` with `$b` bound to the typed buffer inside a [`Store`].
macro_rules! on_store {
    ($store:expr, $b:ident => $body:expr) => {
        match $store {
            Store::W1($b) => $body,
            Store::W2($b) => $body,
            Store::W4($b) => $body,
            Store::W8($b) => $body,
        }
    };
}

/// Builds a [`Store`] of width `$size` with `$T` bound to the element type.
macro_rules! make_store {
    ($size:expr, $T:ident => $body:expr) => {
        match $size {
            1 => {
                type $T = u8;
                $body.map(Store::W1)
            }
            2 => {
                type $T = u16;
                $body.map(Store::W2)
            }
            4 => {
                type $T = u32;
                $body.map(Store::W4)
            }
            _ => {
                type $T = u64;
                $body.map(Store::W8)
            }
        }
    };
}

/// What an access declared: the serving memory and how it was served.
pub struct Served {
    /// The allocation serving the access.
    pub memory: Arc<Memory>,
    /// True when nothing moved.
    pub in_place: bool,
    /// How the data got there.
    pub route: Route,
    /// The host mapping, when code at the consumer's location runs on the host.
    pub mapping: Option<locus::HostMapping>,
}

impl Store {
    /// `len` elements of `size` bytes at `location`, each the bytes of `pattern`.
    pub fn filled(location: Location, len: usize, pattern: &[u8]) -> locus::Result<Store> {
        make_store!(pattern.len(), T => {
            let mut value = T::default();
            bytemuck::bytes_of_mut(&mut value).copy_from_slice(pattern);
            Buffer::<T>::filled(location, len, value)
        })
    }

    /// `len` zeroed elements of `size` bytes.
    pub fn zeroed(location: Location, len: usize, size: usize) -> locus::Result<Store> {
        make_store!(size, T => Buffer::<T>::zeroed(location, len))
    }

    /// A copy of host `bytes` at `location` (elements of `size` bytes).
    pub fn from_bytes(location: Location, bytes: &[u8], size: usize) -> locus::Result<Store> {
        make_store!(size, T => {
            let typed: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
            Buffer::<T>::from_slice(location, &typed)
        })
    }

    /// Adopts `native` (`len` elements of `size` bytes) without copying.
    ///
    /// # Safety
    /// As for [`Buffer::adopt`].
    pub unsafe fn adopt(
        location: Location,
        native: Native,
        len: usize,
        size: usize,
        deleter: impl FnOnce(&Native) + Send + Sync + 'static,
    ) -> locus::Result<Store> {
        // SAFETY: forwarded from the caller's contract.
        make_store!(size, T => unsafe { Buffer::<T>::adopt(location, native, len, deleter) })
    }

    /// Where the buffer's home is.
    /// The allocation at the home location (shared with the buffer).
    pub fn home_memory(&self) -> Option<Arc<Memory>> {
        on_store!(self, b => b.memory_at(b.location()))
    }

    pub fn location(&self) -> Location {
        on_store!(self, b => b.location())
    }

    /// Replicas and whether each is valid.
    pub fn replicas(&self) -> Vec<(Location, bool)> {
        on_store!(self, b => b.replicas())
    }

    /// Declares a read at `location`.
    pub fn access(&self, location: Location) -> locus::Result<Served> {
        on_store!(self, b => {
            let g = b.access(location)?;
            // Python hands out the memory itself (views, DLPack): the data is there first.
            g.wait()?;
            let (memory, in_place, route) = (Arc::clone(g.memory()), g.is_in_place(), g.route().clone());
            Ok(Served { memory, in_place, route, mapping: g.into_host_mapping()? })
        })
    }

    /// Declares a write at `location`.
    pub fn access_mut(&mut self, location: Location) -> locus::Result<Served> {
        on_store!(self, b => {
            let g = b.access_mut(location)?;
            // Python hands out the memory itself (views, DLPack): the data is there first.
            g.wait()?;
            let (memory, in_place, route) = (Arc::clone(g.memory()), g.is_in_place(), g.route().clone());
            Ok(Served { memory, in_place, route, mapping: g.into_host_mapping()? })
        })
    }

    /// Makes the copy in `memory` the only current one again (see
    /// `Buffer::declare_written`).
    pub fn declare_written(&mut self, memory: &Arc<Memory>) -> bool {
        on_store!(self, b => b.declare_written(memory))
    }

    /// A copy at `location`.
    pub fn to_location(&self, location: Location) -> locus::Result<Store> {
        Ok(match self {
            Store::W1(b) => Store::W1(b.to_location(location)?),
            Store::W2(b) => Store::W2(b.to_location(location)?),
            Store::W4(b) => Store::W4(b.to_location(location)?),
            Store::W8(b) => Store::W8(b.to_location(location)?),
        })
    }

    /// Moves the home to `location`.
    pub fn move_to(&mut self, location: Location) -> locus::Result<()> {
        on_store!(self, b => b.move_to(location))
    }

    /// Every element's bytes, read to the host.
    pub fn to_bytes(&self) -> locus::Result<Elements> {
        Ok(match self {
            Store::W1(b) => Elements::W1(b.to_vec()?),
            Store::W2(b) => Elements::W2(b.to_vec()?),
            Store::W4(b) => Elements::W4(b.to_vec()?),
            Store::W8(b) => Elements::W8(b.to_vec()?),
        })
    }

    /// Copies `src[range]` into `self[dst_start..]` on the planner's route; both hold
    /// elements of one width (the caller checked the dtypes).
    pub fn copy_from(
        &mut self,
        dst_start: usize,
        src: &Store,
        range: std::ops::Range<usize>,
    ) -> locus::Result<Route> {
        match (self, src) {
            (Store::W1(d), Store::W1(s)) => d.copy_from(dst_start, s, range),
            (Store::W2(d), Store::W2(s)) => d.copy_from(dst_start, s, range),
            (Store::W4(d), Store::W4(s)) => d.copy_from(dst_start, s, range),
            (Store::W8(d), Store::W8(s)) => d.copy_from(dst_start, s, range),
            _ => Err(locus::Error::Invalid(
                "copy between buffers of different element sizes".into(),
            )),
        }
    }

    /// Copies `src_region` of `src` into `dst_region` of this buffer (regions in bytes,
    /// whole elements) in one region copy; both hold elements of one width.
    pub fn copy_region_from(
        &mut self,
        dst_region: &locus::Region,
        src: &Store,
        src_region: &locus::Region,
    ) -> locus::Result<locus::RegionRoute> {
        match (self, src) {
            (Store::W1(d), Store::W1(s)) => d.copy_region_from(dst_region, s, src_region),
            (Store::W2(d), Store::W2(s)) => d.copy_region_from(dst_region, s, src_region),
            (Store::W4(d), Store::W4(s)) => d.copy_region_from(dst_region, s, src_region),
            (Store::W8(d), Store::W8(s)) => d.copy_region_from(dst_region, s, src_region),
            _ => Err(locus::Error::Invalid(
                "region copy between buffers of different element sizes".into(),
            )),
        }
    }

    /// Elements the home allocation holds without reallocating.
    pub fn capacity(&self) -> usize {
        on_store!(self, b => b.capacity())
    }

    /// Makes room at home for `capacity` elements (HAMR's `reserve`).
    pub fn reserve(&mut self, capacity: usize) -> locus::Result<()> {
        on_store!(self, b => b.reserve(capacity))
    }

    /// Changes the length to `len` (HAMR's `resize`); new elements are the bytes of
    /// `pattern` (one element's width).
    pub fn resize(&mut self, len: usize, pattern: &[u8]) -> locus::Result<()> {
        on_store!(self, b => {
            let mut value = Default::default();
            bytemuck::bytes_of_mut(&mut value).copy_from_slice(pattern);
            b.resize_with(len, value)
        })
    }

    /// Replaces the contents with a copy of `src` (HAMR's `assign`), or appends one
    /// (HAMR's `append`); both hold elements of one width (the caller checked the
    /// dtypes).
    pub fn assign_or_append(&mut self, src: &Store, append: bool) -> locus::Result<()> {
        let op = |append: bool| if append { "append" } else { "assign" };
        match (self, src) {
            (Store::W1(d), Store::W1(s)) if append => d.append(s),
            (Store::W2(d), Store::W2(s)) if append => d.append(s),
            (Store::W4(d), Store::W4(s)) if append => d.append(s),
            (Store::W8(d), Store::W8(s)) if append => d.append(s),
            (Store::W1(d), Store::W1(s)) => d.assign(s),
            (Store::W2(d), Store::W2(s)) => d.assign(s),
            (Store::W4(d), Store::W4(s)) => d.assign(s),
            (Store::W8(d), Store::W8(s)) => d.assign(s),
            _ => Err(locus::Error::Invalid(format!(
                "{} between buffers of different element sizes",
                op(append)
            ))),
        }
    }

    /// The number of elements.
    pub fn count(&self) -> usize {
        on_store!(self, b => b.len())
    }

    /// Makes the current data valid at `location` ahead of use there: started, and
    /// complete on return unless the buffer is in `Async` mode.
    pub fn prefetch(&self, location: Location) -> locus::Result<Route> {
        on_store!(self, b => {
            let route = b.prefetch(location)?;
            if b.transfer() != locus::Transfer::Async {
                b.synchronize()?;
            }
            Ok(route)
        })
    }

    /// The transfer mode (HAMR's `buffer_transfer`).
    pub fn transfer(&self) -> locus::Transfer {
        on_store!(self, b => b.transfer())
    }

    /// Sets the transfer mode; moves in flight continue.
    pub fn set_transfer(&mut self, mode: locus::Transfer) {
        on_store!(self, b => b.set_transfer(mode))
    }

    /// Sets the queue the buffer's moves go on.
    pub fn set_queue(&mut self, queue: Option<locus::Queue>) {
        on_store!(self, b => b.set_queue(queue))
    }

    /// Waits for every move in flight (HAMR's `synchronize`).
    pub fn synchronize(&self) -> locus::Result<()> {
        on_store!(self, b => b.synchronize())
    }

    /// The events of the moves still in flight.
    pub fn pending(&self) -> Vec<locus::Event> {
        on_store!(self, b => b.pending())
    }

    /// Orders every later use after `event`.
    pub fn order_after(&self, event: &locus::Event) {
        on_store!(self, b => b.order_after(event))
    }

    /// The transfer counters of this buffer, per route kind.
    pub fn totals(&self) -> locus::TransferTotals {
        on_store!(self, b => b.stats())
    }

    /// Bytes moved for this buffer so far (all routes).
    pub fn bytes_moved(&self) -> u64 {
        on_store!(self, b => {
            let t = b.stats();
            t.bytes_moved()
        })
    }
}

/// A buffer's elements read back in one copy, in their own width (viewed as bytes
/// without copying again).
pub enum Elements {
    /// 1-byte elements.
    W1(Vec<u8>),
    /// 2-byte elements.
    W2(Vec<u16>),
    /// 4-byte elements.
    W4(Vec<u32>),
    /// 8-byte elements.
    W8(Vec<u64>),
}

impl Elements {
    /// The elements' bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Elements::W1(v) => v,
            Elements::W2(v) => bytemuck::cast_slice(v),
            Elements::W4(v) => bytemuck::cast_slice(v),
            Elements::W8(v) => bytemuck::cast_slice(v),
        }
    }
}

/// A [`Store`] as a kernel argument of element type `dtype` (the store keeps the bytes
/// by width only; the Python dtype says what they are).
pub struct Typed<'a> {
    /// The store.
    pub store: &'a mut Store,
    /// The element type the kernel sees.
    pub dtype: locus::DType,
}

impl locus::codelet::KernelBuffer for Typed<'_> {
    fn dtype(&self) -> locus::DType {
        self.dtype
    }
    fn elements(&self) -> usize {
        on_store!(&*self.store, b => b.len())
    }
    fn counters(&self) -> locus::TransferTotals {
        on_store!(&*self.store, b => b.stats())
    }
    fn serve_for_read(
        &self,
        location: Location,
    ) -> locus::Result<(Arc<Memory>, Vec<locus::Event>)> {
        on_store!(&*self.store, b => locus::codelet::KernelBuffer::serve_for_read(b, location))
    }
    fn serve_for_write(
        &mut self,
        location: Location,
        keep: bool,
    ) -> locus::Result<(Arc<Memory>, Vec<locus::Event>)> {
        on_store!(&mut *self.store, b => locus::codelet::KernelBuffer::serve_for_write(b, location, keep))
    }
    fn serve_as_is(
        &self,
        location: Location,
        write: bool,
    ) -> locus::Result<(Arc<Memory>, Vec<locus::Event>)> {
        on_store!(&*self.store, b => locus::codelet::KernelBuffer::serve_as_is(b, location, write))
    }
    fn update_section(
        &self,
        section: &locus::Section,
        location: Location,
    ) -> locus::Result<Vec<locus::Event>> {
        on_store!(&*self.store, b => b.update_section(section, location))
    }
    fn settle(&self) -> locus::Result<()> {
        on_store!(&*self.store, b => b.synchronize())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        on_store!(&*self.store, b => b as &dyn std::any::Any)
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        on_store!(&mut *self.store, b => b as &mut dyn std::any::Any)
    }
}
