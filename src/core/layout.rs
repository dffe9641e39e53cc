//! How the elements of a strided view lie in a flat buffer ([`Layout`]): an offset, an
//! extent per dimension and a stride per dimension, in elements (C++'s `mdspan` with
//! `layout_stride`, numpy's shape and strides in elements). Sliced per dimension, and
//! turned into the [`Region`] of bytes a copy moves.

use std::ops::Range;

use super::error::{Error, Result};
use super::region::Region;

/// The elements of a view of a flat buffer: the element at index `[i0, i1, ...]` is at
/// `offset + i0 * strides[0] + i1 * strides[1] + ...` (all in elements).
///
/// ```
/// use locus::Layout;
///
/// // A 6 x 8 grid stored row after row; its inside, then the inside's first column.
/// let grid = Layout::row_major(&[6, 8]);
/// let inside = grid.slice(0, 1..5)?.slice(1, 1..7)?;
/// assert_eq!((inside.offset(), inside.shape(), inside.strides()), (9, &[4, 6][..], &[8, 1][..]));
/// let column = inside.index(1, 0)?;
/// assert_eq!((column.offset(), column.shape(), column.strides()), (9, &[4][..], &[8][..]));
/// # Ok::<(), locus::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    offset: usize,
    shape: Vec<usize>,
    strides: Vec<usize>,
}

fn invalid(what: String) -> Error {
    Error::Invalid(format!("Layout: {what}"))
}

impl Layout {
    /// A row-major (C, numpy's default) view of `shape`: the last index runs fastest.
    pub fn row_major(shape: &[usize]) -> Layout {
        let mut strides = vec![1usize; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1].saturating_mul(shape[d + 1]);
        }
        Layout {
            offset: 0,
            shape: shape.to_vec(),
            strides,
        }
    }

    /// A column-major (Fortran, `mdspan`'s `layout_left`) view of `shape`: the first
    /// index runs fastest.
    pub fn column_major(shape: &[usize]) -> Layout {
        let mut strides = vec![1usize; shape.len()];
        for d in 1..shape.len() {
            strides[d] = strides[d - 1].saturating_mul(shape[d - 1]);
        }
        Layout {
            offset: 0,
            shape: shape.to_vec(),
            strides,
        }
    }

    /// Any view: `shape` and `strides` (one per dimension, each at least 1: zero and
    /// negative strides are refused by the type) from element `offset`. Refused: a
    /// shape and strides of different lengths, no dimension, an empty dimension.
    pub fn strided(offset: usize, shape: &[usize], strides: &[usize]) -> Result<Layout> {
        if shape.len() != strides.len() || shape.is_empty() {
            return Err(invalid(format!(
                "shape {shape:?} with strides {strides:?}: one stride per dimension, at least one dimension"
            )));
        }
        if let Some(d) = shape.iter().position(|&n| n == 0) {
            return Err(invalid(format!(
                "dimension {d} of shape {shape:?} is empty; every extent is at least 1"
            )));
        }
        if let Some(d) = strides.iter().position(|&s| s == 0) {
            return Err(invalid(format!(
                "dimension {d} has the stride 0 (a broadcast): a view names each element once"
            )));
        }
        Ok(Layout {
            offset,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
        })
    }

    /// The first element, in elements from the start of the buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The stride of each dimension, in elements.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// The elements it names (the product of the shape; saturating).
    pub fn len(&self) -> usize {
        self.shape.iter().fold(1usize, |a, &n| a.saturating_mul(n))
    }

    /// True when it names no element (never, for a layout made by its constructors).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One past the last element it reaches, `None` when that overflows: a buffer must
    /// hold at least this many elements.
    pub fn span(&self) -> Option<usize> {
        self.shape
            .iter()
            .zip(&self.strides)
            .try_fold(self.offset, |end, (&n, &s)| {
                end.checked_add(n.checked_sub(1)?.checked_mul(s)?)
            })?
            .checked_add(1)
    }

    /// The dimension `dim` cut to `range` (every element of it).
    pub fn slice(&self, dim: usize, range: Range<usize>) -> Result<Layout> {
        self.slice_step(dim, range, 1)
    }

    /// The dimension `dim` cut to every `step`-th index of `range` (numpy's
    /// `a[start:stop:step]` with a positive step).
    pub fn slice_step(&self, dim: usize, range: Range<usize>, step: usize) -> Result<Layout> {
        let n = self.extent_of(dim)?;
        if range.start >= range.end || range.end > n || step == 0 {
            return Err(invalid(format!(
                "dimension {dim} (extent {n}) sliced to {range:?} step {step}: the range must be \
                 non-empty, end at most {n}, and the step at least 1"
            )));
        }
        let mut out = self.clone();
        out.offset = self
            .offset
            .checked_add(range.start.saturating_mul(self.strides[dim]))
            .ok_or_else(|| invalid("the offset overflows".into()))?;
        out.shape[dim] = (range.end - range.start).div_ceil(step);
        out.strides[dim] = self.strides[dim].saturating_mul(step);
        Ok(out)
    }

    /// Index `i` of dimension `dim`, the dimension dropped (a row of a grid, a plane of a
    /// box). The last dimension of a 1-D layout stays, of extent 1.
    pub fn index(&self, dim: usize, i: usize) -> Result<Layout> {
        let n = self.extent_of(dim)?;
        if i >= n {
            return Err(invalid(format!(
                "index {i} of dimension {dim}, whose extent is {n}"
            )));
        }
        let mut out = self.slice(dim, i..i + 1)?;
        if out.shape.len() > 1 {
            out.shape.remove(dim);
            out.strides.remove(dim);
        }
        Ok(out)
    }

    fn extent_of(&self, dim: usize) -> Result<usize> {
        self.shape.get(dim).copied().ok_or_else(|| {
            invalid(format!(
                "dimension {dim} of a {}-D layout (shape {:?})",
                self.shape.len(),
                self.shape
            ))
        })
    }

    /// The dimensions in the order they lie in memory (largest stride first; equal
    /// strides keep their order): a copy between two layouts moves elements in this
    /// order, so two layouts exchange data only when it is the same.
    pub fn memory_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.shape.len()).collect();
        order.sort_by(|&a, &b| self.strides[b].cmp(&self.strides[a]));
        order
    }

    /// The region of bytes it names in a buffer of elements of `T`, walked in memory
    /// order: dimensions of extent 1 left out, neighbours that are contiguous merged, at
    /// most three left. A layout whose elements are not three strided runs (a 4-D
    /// sub-box, a 3-D box whose rows are not contiguous) is an error that says so.
    pub fn region<T>(&self) -> Result<Region> {
        Ok(self.region_pair::<T>(self)?.0)
    }

    /// The regions of this layout and of `other` (one shape) that pair their elements
    /// index by index, for a region copy from one to the other: the same extent on both
    /// sides, dimensions merged only where both are contiguous across them. Layouts that
    /// lie in memory in different dimension orders are refused: copying one into the
    /// other is a transpose.
    pub fn region_pair<T>(&self, other: &Layout) -> Result<(Region, Region)> {
        let size = std::mem::size_of::<T>();
        if self.shape != other.shape {
            return Err(invalid(format!(
                "shape {:?} and shape {:?}: a region copy pairs views of one shape",
                self.shape, other.shape
            )));
        }
        // Dimensions of extent 1 lie anywhere: only the others' order matters.
        let order = |l: &Layout| -> Vec<usize> {
            let shape = &l.shape;
            l.memory_order()
                .into_iter()
                .filter(|&d| shape[d] > 1)
                .collect()
        };
        let dims = order(self);
        if dims != order(other) {
            return Err(invalid(format!(
                "{self} and {other} lie in memory in different dimension orders: copying one \
                 into the other is a transpose, not a copy (transpose with a kernel, or view \
                 both in one order)"
            )));
        }
        // (extent, this stride, other's stride), outermost first; a dimension merged into
        // the one outside it where both fill that one's stride.
        let mut runs: Vec<(usize, usize, usize)> = Vec::with_capacity(dims.len());
        for d in dims {
            let (n, a, b) = (self.shape[d], self.strides[d], other.strides[d]);
            match runs.last_mut() {
                Some(outer) if outer.1 == n.saturating_mul(a) && outer.2 == n.saturating_mul(b) => {
                    *outer = (outer.0.saturating_mul(n), a, b);
                }
                _ => runs.push((n, a, b)),
            }
        }
        // The innermost run is a row's width where both are contiguous along it; else
        // each element is a row of its own.
        let width = match runs.last() {
            Some(&(n, 1, 1)) => {
                runs.pop();
                n.saturating_mul(size)
            }
            _ => size,
        };
        if runs.len() > 2 {
            return Err(invalid(format!(
                "{self} paired with {other} is {} strided runs deep; a region copy moves at \
                 most 3 (copy it in parts)",
                runs.len() + 1
            )));
        }
        let rows = runs.pop().unwrap_or((1, 0, 0));
        let planes = runs.pop().unwrap_or((1, 0, 0));
        let region = |offset: usize, row: usize, plane: usize| {
            let row_pitch = if rows.0 > 1 {
                row.saturating_mul(size)
            } else {
                width
            };
            Region {
                origin: [offset.saturating_mul(size), 0, 0],
                extent: [width, rows.0, planes.0],
                row_pitch,
                slice_pitch: if planes.0 > 1 {
                    plane.saturating_mul(size)
                } else {
                    row_pitch.saturating_mul(rows.0)
                },
            }
        };
        Ok((
            region(self.offset, rows.1, planes.1),
            region(other.offset, rows.2, planes.2),
        ))
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "shape {:?}, strides {:?} elements, from element {}",
            self.shape, self.strides, self.offset
        )
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
