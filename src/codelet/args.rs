//! Codelet arguments: buffers of any element type ([`KernelBuffer`]), scalars, and how a
//! call runs ([`Launch`]).

use super::*;

/// A buffer as a kernel argument, whatever its element type.
pub trait KernelBuffer {
    /// Element type.
    fn dtype(&self) -> DType;
    /// Number of elements.
    fn elements(&self) -> usize;
    /// Transfer counters of the buffer.
    fn counters(&self) -> TransferTotals;
    /// Current data usable at `location`, and the moves a kernel reading it waits for.
    #[doc(hidden)]
    fn serve_for_read(&self, location: Location) -> Result<(Arc<Memory>, Vec<Event>)>;
    /// Memory at `location` to write, the only valid copy afterwards, and the moves a
    /// kernel writing it waits for.
    #[doc(hidden)]
    fn serve_for_write(
        &mut self,
        location: Location,
        keep: bool,
    ) -> Result<(Arc<Memory>, Vec<Event>)>;
    /// The copy at `location` as it is, nothing moved (`noupdate`); `write` makes it the
    /// only current copy.
    #[doc(hidden)]
    fn serve_as_is(&self, location: Location, write: bool) -> Result<(Arc<Memory>, Vec<Event>)>;
    /// Moves `section` of the current data into the copy at `location`, which becomes
    /// current (see [`Buffer::update_section`]).
    #[doc(hidden)]
    fn update_section(&self, section: &Section, location: Location) -> Result<Vec<Event>>;
    /// Waits for the moves in flight (see [`Buffer::synchronize`]).
    #[doc(hidden)]
    fn settle(&self) -> Result<()>;
    /// The buffer, to downcast (group variables).
    #[doc(hidden)]
    fn as_any(&self) -> &dyn std::any::Any;
    /// The buffer, to downcast mutably (group variables).
    #[doc(hidden)]
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

impl<T: Element> KernelBuffer for Buffer<T> {
    fn dtype(&self) -> DType {
        T::DTYPE
    }
    fn elements(&self) -> usize {
        self.len()
    }
    fn counters(&self) -> TransferTotals {
        self.stats()
    }
    fn serve_for_read(&self, location: Location) -> Result<(Arc<Memory>, Vec<Event>)> {
        self.serve_read(location)
    }
    fn serve_for_write(
        &mut self,
        location: Location,
        keep: bool,
    ) -> Result<(Arc<Memory>, Vec<Event>)> {
        self.serve_write(location, keep)
    }
    fn serve_as_is(&self, location: Location, write: bool) -> Result<(Arc<Memory>, Vec<Event>)> {
        Buffer::serve_as_is(self, location, write)
    }
    fn update_section(&self, section: &Section, location: Location) -> Result<Vec<Event>> {
        Buffer::update_section(self, section, location)
    }
    fn settle(&self) -> Result<()> {
        self.synchronize()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// One argument of a call.
pub enum Arg<'a> {
    /// A buffer read by the kernel.
    Buf(&'a dyn KernelBuffer),
    /// A buffer written by the kernel (`out` or `inout`).
    BufMut(&'a mut dyn KernelBuffer),
    /// A scalar: its type and bytes (native endian, from the first; 4 or 8 of them).
    Scalar(DType, [u8; 8]),
}

impl<'a> Arg<'a> {
    /// A buffer for an `in` parameter.
    pub fn buf<T: Element>(buffer: &'a Buffer<T>) -> Arg<'a> {
        Arg::Buf(buffer)
    }
    /// A buffer for an `out` or `inout` parameter.
    pub fn buf_mut<T: Element>(buffer: &'a mut Buffer<T>) -> Arg<'a> {
        Arg::BufMut(buffer)
    }
    fn scalar<T: Element>(v: T) -> Arg<'a> {
        Arg::Scalar(T::DTYPE, crate::core::launch::scalar_slot(v))
    }
    /// An `f32` scalar.
    pub fn f32(v: f32) -> Arg<'a> {
        Self::scalar(v)
    }
    /// A `u32` scalar.
    pub fn u32(v: u32) -> Arg<'a> {
        Self::scalar(v)
    }
    /// An `i32` scalar.
    pub fn i32(v: i32) -> Arg<'a> {
        Self::scalar(v)
    }
    /// An `f64` scalar (not on WebGPU: WGSL has no f64).
    pub fn f64(v: f64) -> Arg<'a> {
        Self::scalar(v)
    }
    /// An `i64` scalar (not on WebGPU).
    pub fn i64(v: i64) -> Arg<'a> {
        Self::scalar(v)
    }
    /// A `u64` scalar (not on WebGPU).
    pub fn u64(v: u64) -> Arg<'a> {
        Self::scalar(v)
    }
    /// An `i8` scalar (not on WebGPU).
    pub fn i8(v: i8) -> Arg<'a> {
        Self::scalar(v)
    }
    /// A `u8` scalar (not on WebGPU).
    pub fn u8(v: u8) -> Arg<'a> {
        Self::scalar(v)
    }
    /// An `i16` scalar (not on WebGPU).
    pub fn i16(v: i16) -> Arg<'a> {
        Self::scalar(v)
    }
    /// A `u16` scalar (not on WebGPU).
    pub fn u16(v: u16) -> Arg<'a> {
        Self::scalar(v)
    }

    pub(super) fn describe(&self) -> String {
        match self {
            Arg::Buf(b) => format!("a {} buffer (read)", b.dtype()),
            Arg::BufMut(b) => format!("a {} buffer (writable)", b.dtype()),
            Arg::Scalar(t, _) => format!("a {t} scalar"),
        }
    }
}

/// The global size of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// `n` work items.
    D1(usize),
    /// `nx` x `ny` work items (x fastest).
    D2(usize, usize),
}

impl Launch {
    /// 1-D launch of `n` work items.
    pub fn d1(n: usize) -> Launch {
        Launch::D1(n)
    }
    /// 2-D launch of `nx` x `ny` work items.
    pub fn d2(nx: usize, ny: usize) -> Launch {
        Launch::D2(nx, ny)
    }
    pub(super) fn items(self) -> usize {
        match self {
            Launch::D1(n) => n,
            Launch::D2(x, y) => x.saturating_mul(y),
        }
    }
    pub(super) fn global(self) -> ([usize; 2], usize) {
        match self {
            Launch::D1(n) => ([n, 1], 1),
            Launch::D2(x, y) => ([x, y], 2),
        }
    }
}
