//! A rectangle of bytes in one memory ([`Region`]): a row face, a column face, a tile, a
//! plane or a box of a grid stored row after row. Addressed as the runtimes' own
//! rectangle copies address it (`clEnqueueCopyBufferRect`, CUDA's `CUDA_MEMCPY3D`,
//! `omp_target_memcpy_rect`): an origin and an extent in (x bytes, y rows, z planes),
//! a row pitch and a slice pitch in bytes.

use std::fmt;

use super::error::{Error, Result};
use super::location::Location;

/// A 1-, 2- or 3-D rectangle of bytes in one memory.
///
/// `origin` and `extent` are in the order the runtimes' rectangle copies take them:
/// `[x in bytes, y in rows, z in planes]`. Byte `(x, y, z)` of the memory is at offset
/// `x + y * row_pitch + z * slice_pitch`. The element constructors ([`Region::block_2d`],
/// [`Region::block_3d`]) take numpy's order instead (plane, row, column) and count in
/// elements.
///
/// ```
/// use locus::Region;
///
/// // The first column of a 4096 x 4096 grid of f64, stored row after row.
/// let column = Region::block_2d::<f64>((4096, 4096), (0, 0), (4096, 1));
/// assert_eq!(column.extent, [8, 4096, 1]);
/// assert_eq!(column.row_pitch, 4096 * 8);
/// assert_eq!(column.bytes(), Some(4096 * 8));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Region {
    /// Where the rectangle starts: `[x in bytes, y in rows, z in planes]`.
    pub origin: [usize; 3],
    /// Its size: `[width in bytes, rows, planes]`, each at least 1.
    pub extent: [usize; 3],
    /// Bytes from the start of a row to the start of the next (at least the width where
    /// there are two rows or more).
    pub row_pitch: usize,
    /// Bytes from the start of a plane to the start of the next (past the plane's last
    /// row where there are two planes or more).
    pub slice_pitch: usize,
}

/// Which of a region's numbers broke its rules, for the error.
fn bad(location: Location, call: &str, side: &str, what: String) -> Error {
    Error::Invalid(format!(
        "{location}: {call}: the {side} region {what}; nothing was copied"
    ))
}

impl Region {
    /// `len` contiguous bytes at `offset`: a 1-D region.
    pub fn contiguous(offset: usize, len: usize) -> Region {
        Region {
            origin: [offset, 0, 0],
            extent: [len, 1, 1],
            row_pitch: len,
            slice_pitch: len,
        }
    }

    /// `rows` rows of `width` bytes, `row_pitch` bytes apart, at `(x, y)` = `origin`
    /// (bytes, rows): a 2-D region.
    pub fn rows(origin: (usize, usize), width: usize, rows: usize, row_pitch: usize) -> Region {
        Region {
            origin: [origin.0, origin.1, 0],
            extent: [width, rows, 1],
            row_pitch,
            slice_pitch: row_pitch.saturating_mul(rows.max(1)),
        }
    }

    /// A block of `extent = (rows, cols)` elements of `T` at `origin = (row, col)` of a
    /// row-major grid of `grid = (rows, cols)` elements (numpy's order and C's layout).
    pub fn block_2d<T>(
        grid: (usize, usize),
        origin: (usize, usize),
        extent: (usize, usize),
    ) -> Region {
        let size = std::mem::size_of::<T>();
        let row_pitch = grid.1.saturating_mul(size);
        Region {
            origin: [origin.1.saturating_mul(size), origin.0, 0],
            extent: [extent.1.saturating_mul(size), extent.0, 1],
            row_pitch,
            slice_pitch: row_pitch.saturating_mul(grid.0),
        }
    }

    /// A box of `extent = (planes, rows, cols)` elements of `T` at `origin = (plane,
    /// row, col)` of a row-major 3-D grid of `grid = (planes, rows, cols)` elements.
    pub fn block_3d<T>(
        grid: (usize, usize, usize),
        origin: (usize, usize, usize),
        extent: (usize, usize, usize),
    ) -> Region {
        let size = std::mem::size_of::<T>();
        let row_pitch = grid.2.saturating_mul(size);
        Region {
            origin: [origin.2.saturating_mul(size), origin.1, origin.0],
            extent: [extent.2.saturating_mul(size), extent.1, extent.0],
            row_pitch,
            slice_pitch: row_pitch.saturating_mul(grid.1),
        }
    }

    /// The region a strided view describes, as numpy and DLPack give one: `shape` (1 to
    /// 3 dimensions, outermost first) in elements of `itemsize` bytes, `strides` in bytes
    /// (`None`: C-contiguous), its first element at byte `offset`. The innermost
    /// dimension is a row when its stride is the item size; otherwise (a column of a 2-D
    /// array: one element per row) each element is a row of its own. Zero or negative
    /// strides, and a 3-D view whose innermost stride is not the item size, are refused,
    /// naming the dimension.
    ///
    /// ```
    /// use locus::Region;
    ///
    /// // numpy's `grid[:, 3]` of a 4096 x 4096 float64 array: shape (4096,), stride 32768.
    /// let column = Region::from_strides(3 * 8, &[4096], Some(&[32768]), 8)?;
    /// assert_eq!(column, Region::block_2d::<f64>((4096, 4096), (0, 3), (4096, 1)).normalized());
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn from_strides(
        offset: usize,
        shape: &[usize],
        strides: Option<&[isize]>,
        itemsize: usize,
    ) -> Result<Region> {
        let fail = |what: String| Err(Error::Invalid(format!("Region::from_strides: {what}")));
        if shape.is_empty() || shape.len() > 3 {
            return fail(format!(
                "a view of {} dimensions (shape {shape:?}); a region has 1 to 3",
                shape.len()
            ));
        }
        if itemsize == 0 {
            return fail("an item size of 0 bytes".into());
        }
        let contiguous: Vec<isize>;
        let strides = match strides {
            Some(s) if s.len() != shape.len() => {
                return fail(format!(
                    "shape {shape:?} with strides {s:?}: one stride per dimension"
                ))
            }
            Some(s) => s,
            None => {
                let mut acc = itemsize as isize;
                let mut out = vec![0isize; shape.len()];
                for i in (0..shape.len()).rev() {
                    out[i] = acc;
                    acc = acc.saturating_mul(shape[i] as isize);
                }
                contiguous = out;
                &contiguous
            }
        };
        let mut dims: Vec<(usize, usize)> = Vec::with_capacity(3);
        for (i, (&n, &stride)) in shape.iter().zip(strides).enumerate() {
            if n == 0 {
                return fail(format!(
                    "dimension {i} of shape {shape:?} is empty; every extent is at least 1"
                ));
            }
            if n > 1 && stride <= 0 {
                return fail(format!(
                    "dimension {i} has the stride {stride} bytes; a region's strides are positive (copy a reversed or broadcast view into a contiguous one first)"
                ));
            }
            dims.push((n, stride.max(0) as usize));
        }
        let (n, stride) = *dims.last().unwrap_or(&(1, itemsize));
        let width = if n == 1 || stride == itemsize {
            dims.pop();
            n.saturating_mul(itemsize)
        } else if dims.len() == 3 {
            return fail(format!(
                "the innermost dimension of the 3-D view (shape {shape:?}) has the stride {stride}, not the item size {itemsize}: its rows are not contiguous"
            ));
        } else {
            itemsize
        };
        let (rows, row_pitch) = dims.pop().unwrap_or((1, width));
        let (planes, slice_pitch) = dims.pop().unwrap_or((1, 0));
        let row_pitch = if rows == 1 { width } else { row_pitch };
        let slice_pitch = if planes == 1 {
            row_pitch.saturating_mul(rows)
        } else {
            slice_pitch
        };
        Ok(Region {
            origin: [offset, 0, 0],
            extent: [width, rows, planes],
            row_pitch,
            slice_pitch,
        })
    }

    /// The same extent, packed tight from offset 0 (row pitch = width, slice pitch =
    /// width * rows): the layout of a contiguous staging block.
    pub fn packed(&self) -> Region {
        let [width, rows, _] = self.extent;
        Region {
            origin: [0, 0, 0],
            extent: self.extent,
            row_pitch: width,
            slice_pitch: width.saturating_mul(rows),
        }
    }

    /// The bytes it holds (width * rows * planes), `None` when that overflows.
    pub fn bytes(&self) -> Option<usize> {
        let [w, h, d] = self.extent;
        w.checked_mul(h)?.checked_mul(d)
    }

    /// The offset of its first byte, `None` when that overflows.
    pub fn start(&self) -> Option<usize> {
        let [x, y, z] = self.origin;
        x.checked_add(y.checked_mul(self.row_pitch)?)?
            .checked_add(z.checked_mul(self.slice_pitch)?)
    }

    /// One past the offset of its last byte, `None` when that overflows.
    pub fn end(&self) -> Option<usize> {
        let [w, h, d] = self.extent;
        let last_row = (h.checked_sub(1)?).checked_mul(self.row_pitch)?;
        let last_plane = (d.checked_sub(1)?).checked_mul(self.slice_pitch)?;
        self.start()?
            .checked_add(last_row)?
            .checked_add(last_plane)?
            .checked_add(w)
    }

    /// Checks it against a memory of `len` bytes at `location`, for `call` (the error
    /// names the call, the side, the dimension and the limit): extents of at least 1,
    /// rows and planes that do not overlap one another, no overflow, inside the memory.
    pub fn check(&self, location: Location, call: &str, side: &str, len: usize) -> Result<()> {
        let [w, h, d] = self.extent;
        let fail = |what: String| Err(bad(location, call, side, what));
        for (name, n) in [("width (x, bytes)", w), ("rows (y)", h), ("planes (z)", d)] {
            if n == 0 {
                return fail(format!(
                    "has a zero {name} in its extent {:?}; every extent is at least 1",
                    self.extent
                ));
            }
        }
        if h > 1 && self.row_pitch < w {
            return fail(format!(
                "has a row pitch of {} bytes, smaller than its width of {w} bytes: rows would overlap",
                self.row_pitch
            ));
        }
        let plane = self.row_pitch.saturating_mul(h - 1).saturating_add(w);
        if d > 1 && self.slice_pitch < plane {
            return fail(format!(
                "has a slice pitch of {} bytes, smaller than a plane of its {h} rows ({plane} bytes): planes would overlap",
                self.slice_pitch
            ));
        }
        let Some(end) = self.end() else {
            return fail(format!(
                "overflows: origin {:?} + extent {:?} with pitches {} and {} pass usize",
                self.origin, self.extent, self.row_pitch, self.slice_pitch
            ));
        };
        if end > len {
            return fail(format!(
                "ends at byte {end} (origin {:?}, extent {:?}, pitches {} / {}), past the memory's {len} bytes",
                self.origin, self.extent, self.row_pitch, self.slice_pitch
            ));
        }
        Ok(())
    }

    /// Checks it as a region of a buffer of `elements` elements of `size` bytes at
    /// `location` (see [`Region::check`]): its x, width and pitches are whole elements
    /// too, so no element is split.
    pub fn check_elements(
        &self,
        location: Location,
        call: &str,
        side: &str,
        (elements, size): (usize, usize),
    ) -> Result<()> {
        let whole = [
            self.origin[0],
            self.extent[0],
            self.row_pitch,
            self.slice_pitch,
        ];
        if size > 1 && whole.iter().any(|b| b % size != 0) {
            return Err(bad(
                location,
                call,
                side,
                format!(
                    "({self}) splits elements of {size} bytes: its x, width and pitches are in \
                     bytes and must be whole elements (Region::block_2d::<T> makes them so)"
                ),
            ));
        }
        self.check(location, call, side, elements.saturating_mul(size))
    }

    /// True when every runtime's rectangle copy takes it as it is: a slice pitch that is
    /// a whole number of rows (CUDA's and HIP's height, OpenCL's rule for the slice
    /// pitch). Other regions go by packing or by runs.
    pub fn rect_ready(&self) -> bool {
        let [w, h, d] = self.extent;
        self.row_pitch >= w
            && (d == 1
                || (self.slice_pitch.is_multiple_of(self.row_pitch)
                    && self.slice_pitch >= self.row_pitch.saturating_mul(h)))
    }

    /// The same bytes addressed from its first byte (origin `[start, 0, 0]`), with the
    /// pitches a single row or plane leaves free set to the tight ones: the form handed
    /// to a runtime's rectangle copy. The region is checked.
    pub fn normalized(&self) -> Region {
        let [w, h, d] = self.extent;
        let row_pitch = if h == 1 { w } else { self.row_pitch };
        Region {
            origin: [self.start().unwrap_or(0), 0, 0],
            extent: self.extent,
            row_pitch,
            slice_pitch: if d == 1 {
                row_pitch * h
            } else {
                self.slice_pitch
            },
        }
    }

    /// True when its rows follow one another with no gap (one run per plane).
    fn rows_tight(&self) -> bool {
        self.extent[1] == 1 || self.row_pitch == self.extent[0]
    }

    /// True when its planes follow one another with no gap.
    fn planes_tight(&self) -> bool {
        self.extent[2] == 1 || self.slice_pitch == self.extent[0] * self.extent[1]
    }
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [w, h, d] = self.extent;
        let [x, y, z] = self.origin;
        write!(
            f,
            "{w} x {h} x {d} (bytes x rows x planes) at ({x}, {y}, {z}), pitches {} / {}",
            self.row_pitch, self.slice_pitch
        )
    }
}

/// The contiguous runs a copy between two regions of one extent is made of: rows merged
/// into one run where both sides' rows follow one another, planes too.
#[derive(Debug, Clone, Copy)]
pub struct RegionRuns {
    src: Region,
    dst: Region,
    /// Bytes per run.
    len: usize,
    /// Runs per plane (1 where both sides' rows are merged).
    per_plane: usize,
    /// Planes of runs (1 where both sides' planes are merged too).
    planes: usize,
}

impl RegionRuns {
    /// The runs of a copy from `src` to `dst`, two checked regions of one extent.
    pub fn new(src: &Region, dst: &Region) -> RegionRuns {
        let [w, h, d] = src.extent;
        let rows_merge = src.rows_tight() && dst.rows_tight();
        let planes_merge = rows_merge && src.planes_tight() && dst.planes_tight();
        let (len, per_plane, planes) = match (rows_merge, planes_merge) {
            (true, true) => (w * h * d, 1, 1),
            (true, false) => (w * h, 1, d),
            _ => (w, h, d),
        };
        RegionRuns {
            src: *src,
            dst: *dst,
            len,
            per_plane,
            planes,
        }
    }

    /// Bytes per run.
    pub fn run_len(&self) -> usize {
        self.len
    }

    /// How many runs.
    pub fn count(&self) -> usize {
        self.per_plane * self.planes
    }

    /// Each run as (source offset, destination offset, bytes), in order of the source.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let (s0, d0) = (self.src.start().unwrap_or(0), self.dst.start().unwrap_or(0));
        (0..self.planes).flat_map(move |z| {
            (0..self.per_plane).map(move |y| {
                let at = |r: &Region, base: usize| base + z * r.slice_pitch + y * r.row_pitch;
                (at(&self.src, s0), at(&self.dst, d0), self.len)
            })
        })
    }
}

/// True when two checked regions of one memory share a byte: a sweep over both regions'
/// rows in order of their offsets.
pub fn regions_overlap(a: &Region, b: &Region) -> bool {
    let (Some(a_start), Some(a_end), Some(b_start), Some(b_end)) =
        (a.start(), a.end(), b.start(), b.end())
    else {
        return true;
    };
    if a_end <= b_start || b_end <= a_start {
        return false;
    }
    let rows = |r: &Region| {
        let r = *r;
        let start = r.start().unwrap_or(0);
        (0..r.extent[2]).flat_map(move |z| {
            (0..r.extent[1]).map(move |y| {
                let at = start + z * r.slice_pitch + y * r.row_pitch;
                (at, at + r.extent[0])
            })
        })
    };
    let (mut ra, mut rb) = (rows(a).peekable(), rows(b).peekable());
    while let (Some(&(a0, a1)), Some(&(b0, b1))) = (ra.peek(), rb.peek()) {
        if a0 < b1 && b0 < a1 {
            return true;
        }
        if a1 <= b1 {
            ra.next();
        } else {
            rb.next();
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_face_is_one_run_per_row_and_a_row_face_is_one_run() {
        let column = Region::block_2d::<f64>((64, 64), (0, 3), (64, 1));
        let runs = RegionRuns::new(&column, &column.packed());
        assert_eq!((runs.count(), runs.run_len()), (64, 8));
        let first: Vec<_> = runs.iter().take(2).collect();
        assert_eq!(first, vec![(24, 0, 8), (24 + 512, 8, 8)]);
        let row = Region::block_2d::<f64>((64, 64), (5, 0), (1, 64));
        assert_eq!(RegionRuns::new(&row, &row.packed()).count(), 1);
        let rows = Region::block_2d::<f64>((64, 64), (5, 0), (3, 64));
        assert_eq!(RegionRuns::new(&rows, &rows.packed()).count(), 1);
    }

    #[test]
    fn a_plane_of_a_box_merges_its_rows() {
        let plane = Region::block_3d::<f32>((8, 16, 32), (2, 0, 0), (1, 16, 32));
        assert_eq!(plane.start(), Some(2 * 16 * 32 * 4));
        assert_eq!(RegionRuns::new(&plane, &plane.packed()).count(), 1);
        let side = Region::block_3d::<f32>((8, 16, 32), (0, 0, 31), (8, 16, 1));
        assert_eq!(RegionRuns::new(&side, &side.packed()).count(), 8 * 16);
    }

    #[test]
    fn bad_regions_name_the_dimension_and_the_limit() {
        let at = Location::Host;
        let zero = Region::rows((0, 0), 0, 4, 16);
        let e = zero.check(at, "copy_region", "source", 64).unwrap_err();
        assert!(e.to_string().contains("zero width"), "{e}");
        let narrow = Region::rows((0, 0), 32, 4, 16);
        let e = narrow.check(at, "copy_region", "source", 1024).unwrap_err();
        assert!(e.to_string().contains("row pitch of 16"), "{e}");
        let past = Region::rows((0, 3), 16, 2, 16);
        let e = past
            .check(at, "copy_region", "destination", 64)
            .unwrap_err();
        assert!(e.to_string().contains("past the memory's 64 bytes"), "{e}");
        let huge = Region::rows((0, 0), 8, 3, usize::MAX / 2);
        let e = huge.check(at, "copy_region", "source", 64).unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
        let edge = Region::rows((48, 3), 16, 1, 64);
        edge.check(at, "copy_region", "source", 256).unwrap();
    }

    #[test]
    fn numpy_views_become_regions() {
        // a[2:5, 1:4] of a 6 x 8 int32 array.
        let block = Region::from_strides(2 * 32 + 4, &[3, 3], Some(&[32, 4]), 4).unwrap();
        assert_eq!(
            block,
            Region::block_2d::<i32>((6, 8), (2, 1), (3, 3)).normalized()
        );
        let whole = Region::from_strides(0, &[2, 3, 4], None, 8).unwrap();
        assert_eq!(RegionRuns::new(&whole, &whole.packed()).count(), 1);
        let e = Region::from_strides(0, &[4, 4], Some(&[-32, 8]), 8).unwrap_err();
        assert!(
            e.to_string().contains("dimension 0 has the stride -32"),
            "{e}"
        );
        let e = Region::from_strides(0, &[2, 4, 4], Some(&[256, 64, 16]), 8).unwrap_err();
        assert!(e.to_string().contains("innermost dimension"), "{e}");
    }

    #[test]
    fn interleaved_columns_do_not_overlap_and_crossing_ones_do() {
        let a = Region::block_2d::<u32>((8, 8), (0, 1), (8, 1));
        let b = Region::block_2d::<u32>((8, 8), (0, 2), (8, 1));
        assert!(!regions_overlap(&a, &b));
        let row = Region::block_2d::<u32>((8, 8), (4, 0), (1, 8));
        assert!(regions_overlap(&a, &row));
        assert!(!regions_overlap(
            &row,
            &Region::block_2d::<u32>((8, 8), (5, 0), (1, 8))
        ));
    }
}
