//! Strided views of a buffer ([`Buffer::view`]): the buffer's elements seen with a shape
//! and strides ([`Layout`]), sliced per dimension, and moved as one region: a view read
//! at a location moves only its elements there, and a view copied into another moves in
//! one region copy (the runtime's rectangle copy where it has one).

use bytemuck::Pod;

use super::Buffer;
use crate::core::error::{Error, Result};
use crate::core::layout::Layout;
use crate::core::location::Location;
use crate::core::region::Region;
use crate::runtime::transfer::RegionRoute;

/// A strided view of a [`Buffer`] (Kokkos's subview, `mdspan` over a buffer): its
/// elements by a [`Layout`], read where the buffer's data is current. Made with
/// [`Buffer::view`] or [`Buffer::view_with`]; sliced with [`BufferView::slice`] and
/// [`BufferView::index`].
///
/// ```
/// use locus::{Buffer, Location};
///
/// let grid = Buffer::from_vec((0..6 * 8).map(|i| i as f32).collect::<Vec<f32>>());
/// // The inside's first column: rows 1..5 of column 1, four elements.
/// let column = grid.view(&[6, 8])?.slice(0, 1..5)?.index(1, 1)?;
/// assert_eq!(column.to_vec()?, [9.0, 17.0, 25.0, 33.0]);
/// // Moved alone: a buffer of four elements at the last location this machine has.
/// let there = column.to_location(*locus::available().last().unwrap())?;
/// assert_eq!(there.len(), 4);
/// # Ok::<(), locus::Error>(())
/// ```
pub struct BufferView<'a, T: Pod> {
    buffer: &'a Buffer<T>,
    layout: Layout,
}

/// A strided view of a [`Buffer`] that writes: [`BufferViewMut::copy_from`] moves a view
/// of another buffer into it in one region copy. Made with [`Buffer::view_mut`].
pub struct BufferViewMut<'a, T: Pod> {
    buffer: &'a mut Buffer<T>,
    layout: Layout,
}

impl<T: Pod> Buffer<T> {
    /// The buffer seen as a row-major array of `shape` (C's and numpy's order); the
    /// shape holds exactly the buffer's elements.
    pub fn view(&self, shape: &[usize]) -> Result<BufferView<'_, T>> {
        self.view_with(check_shape(self.len(), shape, "Buffer::view")?)
    }

    /// The buffer seen through any `layout` (column-major, strided, a slice); its
    /// elements must lie inside the buffer.
    pub fn view_with(&self, layout: Layout) -> Result<BufferView<'_, T>> {
        check_span(self.len(), &layout, self.location(), "Buffer::view_with")?;
        Ok(BufferView {
            buffer: self,
            layout,
        })
    }

    /// [`Buffer::view`] for writing into.
    pub fn view_mut(&mut self, shape: &[usize]) -> Result<BufferViewMut<'_, T>> {
        let layout = check_shape(self.len(), shape, "Buffer::view_mut")?;
        self.view_mut_with(layout)
    }

    /// [`Buffer::view_with`] for writing into.
    pub fn view_mut_with(&mut self, layout: Layout) -> Result<BufferViewMut<'_, T>> {
        check_span(
            self.len(),
            &layout,
            self.location(),
            "Buffer::view_mut_with",
        )?;
        Ok(BufferViewMut {
            buffer: self,
            layout,
        })
    }
}

fn check_shape(len: usize, shape: &[usize], call: &str) -> Result<Layout> {
    let layout = Layout::row_major(shape);
    if layout.len() != len || shape.is_empty() {
        return Err(Error::Invalid(format!(
            "{call}: the shape {shape:?} holds {} elements and the buffer {len}; a view's shape \
             holds the buffer's elements (view_with takes any layout inside it)",
            layout.len()
        )));
    }
    Ok(layout)
}

fn check_span(len: usize, layout: &Layout, at: Location, call: &str) -> Result<()> {
    match layout.span() {
        Some(end) if end <= len && !layout.is_empty() => Ok(()),
        end => Err(Error::Invalid(format!(
            "{at}: {call}: the layout ({layout}) reaches element {}, past the buffer's {len}",
            end.map_or("past usize".to_string(), |e| (e - 1).to_string())
        ))),
    }
}

impl<'a, T: Pod> BufferView<'a, T> {
    /// Its layout in the buffer.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> &[usize] {
        self.layout.shape()
    }

    /// The elements it names.
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    /// True when it names no element (never: a layout has at least one).
    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }

    /// The buffer it views.
    pub fn buffer(&self) -> &'a Buffer<T> {
        self.buffer
    }

    /// Dimension `dim` cut to `range` (see [`Layout::slice`]).
    pub fn slice(self, dim: usize, range: std::ops::Range<usize>) -> Result<BufferView<'a, T>> {
        let layout = self.layout.slice(dim, range)?;
        Ok(BufferView { layout, ..self })
    }

    /// Index `i` of dimension `dim`, the dimension dropped (see [`Layout::index`]).
    pub fn index(self, dim: usize, i: usize) -> Result<BufferView<'a, T>> {
        let layout = self.layout.index(dim, i)?;
        Ok(BufferView { layout, ..self })
    }

    /// The bytes it names in the buffer, in memory order (see [`Layout::region`]).
    pub fn region(&self) -> Result<Region> {
        self.layout.region::<T>()
    }

    /// Its elements, packed in memory order (row-major views: numpy's `ravel()`), in a
    /// new buffer at `location`: one region copy from wherever the buffer's data is
    /// current, which moves only these elements.
    pub fn to_location(&self, location: Location) -> Result<Buffer<T>> {
        let region = self.region()?;
        let mut out = Buffer::<T>::zeroed(location, self.len())?;
        out.copy_region_from(&region.packed(), self.buffer, &region)?;
        Ok(out)
    }

    /// Its elements, packed in memory order, in a host `Vec` (only they move).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.to_location(Location::Host)?.to_vec()
    }
}

impl<'a, T: Pod> BufferViewMut<'a, T> {
    /// Its layout in the buffer.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Dimension `dim` cut to `range` (see [`Layout::slice`]).
    pub fn slice(self, dim: usize, range: std::ops::Range<usize>) -> Result<BufferViewMut<'a, T>> {
        let layout = self.layout.slice(dim, range)?;
        Ok(BufferViewMut { layout, ..self })
    }

    /// Index `i` of dimension `dim`, the dimension dropped (see [`Layout::index`]).
    pub fn index(self, dim: usize, i: usize) -> Result<BufferViewMut<'a, T>> {
        let layout = self.layout.index(dim, i)?;
        Ok(BufferViewMut { layout, ..self })
    }

    /// Copies the elements of `src` into this view's, in one region copy from wherever
    /// `src`'s buffer is current into the replica this buffer writes to (which becomes
    /// the only current one); the rest of the buffer keeps its data. The two views have
    /// one shape and lie in memory in one dimension order: a row-major view into a
    /// column-major one is a transpose, not a copy, and is refused (nothing written).
    ///
    /// ```
    /// use locus::{Buffer, Location};
    ///
    /// let src = Buffer::from_vec((0..32 * 16).map(|i| i as f64).collect::<Vec<f64>>());
    /// let mut halo = Buffer::<f64>::zeroed(*locus::available().last().unwrap(), 32 * 18)?;
    /// // src's last column into halo's first: a column face into a halo column.
    /// let face = src.view(&[32, 16])?.index(1, 15)?;
    /// halo.view_mut(&[32, 18])?.index(1, 0)?.copy_from(&face)?;
    /// assert_eq!(halo.to_vec()?[18], 31.0);
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn copy_from(self, src: &BufferView<'_, T>) -> Result<RegionRoute> {
        let at = self.buffer.location();
        let (src_region, dst_region) =
            src.layout().region_pair::<T>(&self.layout).map_err(|e| {
                Error::Invalid(format!(
                    "{at}: BufferViewMut::copy_from: {e}; nothing was copied"
                ))
            })?;
        self.buffer
            .copy_region_from(&dst_region, src.buffer, &src_region)
    }

    /// Writes `values` (packed in this view's memory order) into its elements: one region
    /// copy from the host; the rest of the buffer keeps its data.
    pub fn copy_from_slice(self, values: &[T]) -> Result<RegionRoute> {
        if values.len() != self.layout.len() {
            return Err(Error::Invalid(format!(
                "{}: BufferViewMut::copy_from_slice: {} values for a view of {} elements ({}); nothing was copied",
                self.buffer.location(),
                values.len(),
                self.layout.len(),
                self.layout
            )));
        }
        let host = Buffer::from_slice(Location::Host, values)?;
        let flat = host.view_with(Layout::strided(
            0,
            self.layout.shape(),
            &packed_strides(&self.layout),
        )?)?;
        self.copy_from(&flat)
    }
}

/// The strides of `layout`'s shape packed tight in its own memory order.
fn packed_strides(layout: &Layout) -> Vec<usize> {
    let mut strides = vec![1usize; layout.shape().len()];
    let mut acc = 1usize;
    for d in layout.memory_order().into_iter().rev() {
        strides[d] = acc;
        acc = acc.saturating_mul(layout.shape()[d]);
    }
    strides
}
