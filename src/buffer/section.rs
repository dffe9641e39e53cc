//! Sections of a buffer: OpenHMPP's subscript triplets (`section={start:end:stride, ...}`,
//! one per dimension) over a row-major shape, and moving only a section's elements
//! between a buffer's copies ([`Buffer::update_section`]).

use super::*;
use crate::core::region::Region;

/// One dimension of a [`Section`]: the indices `start, start + stride, ...` up to and
/// including `end` (OpenHMPP's and Fortran's `start:end:stride`, end inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Triplet {
    /// First index.
    pub start: usize,
    /// Last index the section may hold (inclusive).
    pub end: usize,
    /// Step between indices (at least 1).
    pub stride: usize,
}

impl Triplet {
    /// `start:end:stride` (end inclusive).
    pub fn new(start: usize, end: usize, stride: usize) -> Triplet {
        Triplet { start, end, stride }
    }

    /// `start:end` with stride 1 (end inclusive).
    pub fn range(start: usize, end: usize) -> Triplet {
        Triplet::new(start, end, 1)
    }

    /// Every index of a dimension of `extent` elements (`0:extent-1`).
    pub fn all(extent: usize) -> Triplet {
        Triplet::new(0, extent.saturating_sub(1), 1)
    }

    /// The indices it selects (after [`Section::check`]).
    fn indices(self) -> impl Iterator<Item = usize> {
        (self.start..=self.end).step_by(self.stride.max(1))
    }

    fn count(self) -> usize {
        (self.end - self.start) / self.stride.max(1) + 1
    }
}

/// A section of a row-major array: its shape (outermost dimension first, as a C array
/// `a[rows][cols]`) and one [`Triplet`] per dimension.
///
/// ```
/// use locus::{Section, Triplet};
/// // Rows 1..=2, every other column of 0..=6, of a 4 x 8 array.
/// let s = Section::new(&[4, 8], &[Triplet::range(1, 2), Triplet::new(0, 6, 2)]);
/// assert_eq!(s.elements()?, 8);
/// assert_eq!(s.runs(32)?, vec![(8, 1), (10, 1), (12, 1), (14, 1), (16, 1), (18, 1), (20, 1), (22, 1)]);
/// // Whole rows are one run each, and whole consecutive rows merge.
/// let rows = Section::new(&[4, 8], &[Triplet::range(1, 2), Triplet::all(8)]);
/// assert_eq!(rows.runs(32)?, vec![(8, 16)]);
/// # Ok::<(), locus::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    shape: Vec<usize>,
    triplets: Vec<Triplet>,
}

impl Section {
    /// The most contiguous runs (copies) one section move makes: 16 Mi.
    pub const MAX_RUNS: usize = 1 << 24;

    /// The section `triplets` (one per dimension) of an array of `shape`.
    pub fn new(shape: &[usize], triplets: &[Triplet]) -> Section {
        Section {
            shape: shape.to_vec(),
            triplets: triplets.to_vec(),
        }
    }

    /// A 1-D section `start:end:stride` of `len` elements.
    pub fn d1(len: usize, start: usize, end: usize, stride: usize) -> Section {
        Section::new(&[len], &[Triplet::new(start, end, stride)])
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The triplets.
    pub fn triplets(&self) -> &[Triplet] {
        &self.triplets
    }

    /// Checks the section against an array of `len` elements: one triplet per
    /// dimension, each inside its dimension with a stride of at least 1, and a shape
    /// holding exactly `len` elements.
    pub fn check(&self, len: usize) -> Result<()> {
        let bad = |why: String| Err(Error::Invalid(format!("section {self}: {why}")));
        if self.shape.is_empty() || self.shape.len() != self.triplets.len() {
            return bad(format!(
                "needs one triplet per dimension of the shape, got {} for {} dimensions",
                self.triplets.len(),
                self.shape.len()
            ));
        }
        let total = self.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if total != Some(len) {
            return bad(format!(
                "its shape holds {} elements, the buffer {len}; give the buffer's shape",
                total.map_or("too many".into(), |t| t.to_string())
            ));
        }
        for (d, (t, &extent)) in self.triplets.iter().zip(&self.shape).enumerate() {
            if t.stride == 0 {
                return bad(format!("dimension {d}: the stride is 0; use at least 1"));
            }
            if t.start > t.end || t.end >= extent {
                return bad(format!(
                    "dimension {d}: {}:{} is not inside 0:{} (start <= end < extent)",
                    t.start,
                    t.end,
                    extent as i128 - 1
                ));
            }
        }
        Ok(())
    }

    /// Elements the section selects.
    pub fn elements(&self) -> Result<usize> {
        self.triplets.iter().try_fold(1usize, |n, t| {
            if t.stride == 0 || t.start > t.end {
                return Err(Error::Invalid(format!(
                    "section {self}: a triplet is empty or has stride 0"
                )));
            }
            n.checked_mul(t.count())
                .ok_or_else(|| Error::Invalid(format!("section {self} overflows")))
        })
    }

    /// The contiguous runs `(first element, elements)` the section covers in an array of
    /// `len` elements, in order, adjacent runs merged: what a move of the section copies.
    /// A section of more than [`Section::MAX_RUNS`] runs (each one copy) is an error.
    pub fn runs(&self, len: usize) -> Result<Vec<(usize, usize)>> {
        self.check(len)?;
        let dims = self.shape.len();
        let inner_runs = match self.triplets[dims - 1] {
            t if t.stride == 1 => 1,
            t => t.count(),
        };
        let most = self.triplets[..dims - 1]
            .iter()
            .try_fold(inner_runs, |n, t| n.checked_mul(t.count()));
        if most.is_none_or(|m| m > Self::MAX_RUNS) {
            return Err(Error::Invalid(format!(
                "section {self}: more than {} separate runs, each one copy; move the buffer whole, or in sections with whole rows",
                Self::MAX_RUNS
            )));
        }
        // Row-major strides: elements between consecutive indices of each dimension.
        let mut pitch = vec![1usize; dims];
        for d in (0..dims - 1).rev() {
            pitch[d] = pitch[d + 1] * self.shape[d + 1];
        }
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut push = |start: usize, count: usize| match runs.last_mut() {
            Some((s, c)) if *s + *c == start => *c += count,
            _ => runs.push((start, count)),
        };
        // Walk every index of the outer dimensions; the innermost is one run per index
        // (stride > 1) or one run (stride 1).
        let inner = self.triplets[dims - 1];
        let mut index = vec![0usize; dims - 1];
        let outer: Vec<Vec<usize>> = self.triplets[..dims - 1]
            .iter()
            .map(|t| t.indices().collect())
            .collect();
        loop {
            let base: usize = index
                .iter()
                .enumerate()
                .map(|(d, &k)| outer[d][k] * pitch[d])
                .sum();
            if inner.stride == 1 {
                push(base + inner.start, inner.count());
            } else {
                for i in inner.indices() {
                    push(base + i, 1);
                }
            }
            // Next outer index (odometer, last outer dimension fastest).
            let mut d = dims - 1;
            loop {
                if d == 0 {
                    return Ok(runs);
                }
                d -= 1;
                index[d] += 1;
                if index[d] < outer[d].len() {
                    break;
                }
                index[d] = 0;
            }
        }
    }
}

impl Section {
    /// The section as one rectangle of bytes of an array of `T`, so that a move is one
    /// region copy instead of one copy per run: a checked section of up to three
    /// dimensions whose innermost stride is 1, or of up to two with a larger innermost
    /// stride (each element then a row of its own); `None` for one a rectangle cannot
    /// hold.
    pub fn region<T>(&self) -> Option<Region> {
        let size = std::mem::size_of::<T>();
        let dims = self.shape.len();
        // Elements between consecutive indices of each dimension (row-major).
        let mut pitch = vec![1usize; dims];
        for d in (0..dims.checked_sub(1)?).rev() {
            pitch[d] = pitch[d + 1].checked_mul(self.shape[d + 1])?;
        }
        let start: usize = self
            .triplets
            .iter()
            .zip(&pitch)
            .try_fold(0usize, |n, (t, p)| n.checked_add(t.start.checked_mul(*p)?))?
            .checked_mul(size)?;
        // Each rectangle dimension, innermost first: (count, bytes between its indices).
        let mut rect: Vec<(usize, usize)> = Vec::with_capacity(3);
        let inner = self.triplets[dims - 1];
        if inner.stride == 1 {
            rect.push((inner.count().checked_mul(size)?, 1));
        } else {
            rect.push((size, 1));
            rect.push((inner.count(), inner.stride.checked_mul(size)?));
        }
        for d in (0..dims - 1).rev() {
            let t = self.triplets[d];
            rect.push((
                t.count(),
                t.stride.checked_mul(pitch[d])?.checked_mul(size)?,
            ));
        }
        if rect.len() > 3 {
            return None;
        }
        rect.resize(3, (1, 0));
        let width = rect[0].0;
        let (rows, row_pitch) = rect[1];
        let (planes, slice_pitch) = rect[2];
        let row_pitch = if rows == 1 { width } else { row_pitch };
        Some(Region {
            origin: [start, 0, 0],
            extent: [width, rows, planes],
            row_pitch,
            slice_pitch: if planes == 1 {
                row_pitch.checked_mul(rows)?
            } else {
                slice_pitch
            },
        })
    }
}

impl std::fmt::Display for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t: Vec<String> = self
            .triplets
            .iter()
            .map(|t| format!("{}:{}:{}", t.start, t.end, t.stride))
            .collect();
        write!(f, "{{{}}} of {:?}", t.join(", "), self.shape)
    }
}

impl<T: Pod> Buffer<T> {
    /// Brings `section`'s elements of the current data into the copy at `location`,
    /// moving only those elements (in one region copy where the section is a rectangle,
    /// [`Section::region`]; else one copy per contiguous run), and makes that copy
    /// current: OpenHMPP's `advancedload` and `delegatedstore` with `section=`.
    ///
    /// **The caller asserts that outside the section the copy at `location` already
    /// holds the current data** (the section is what changed), as OpenHMPP's directives
    /// do: the elements outside it are left untouched, never checked. When that is not
    /// so, reads at `location` see old elements outside the section until the next
    /// write; move the buffer whole (e.g. [`Buffer::prefetch`]) when in doubt. The copy
    /// at `location` must exist (the buffer was made, allocated or moved there before);
    /// when current data is usable at `location` already (a current copy there, or one
    /// it reaches in place: unified memory, the OpenMP initial device) nothing moves.
    ///
    /// In [`Transfer::Async`] mode the moves are started and their events returned;
    /// whatever uses the data at `location` afterwards is ordered after them.
    pub fn update_section(&self, section: &Section, location: Location) -> Result<Vec<Event>> {
        let runs = section.runs(self.len)?;
        crate::runtime::registry::registry().device(location)?;
        let bytes = bytes_of::<T>(self.len)?;
        let size = std::mem::size_of::<T>();
        let mut replicas = self.lock();
        // Current data usable there already (a current copy there, or one it reaches
        // in place): nothing to move, as a whole-buffer load would move nothing.
        if current_usable_at(&replicas, location).is_some() {
            return Ok(replicas.iter_mut().flat_map(Replica::events).collect());
        }
        let target = replicas
            .iter()
            .position(|r| r.location() == location && r.memory.len() >= bytes)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "section {section}: the buffer has no copy at {location} to update: move it there whole once (prefetch, advanced_load or delegated_store without a section)"
                ))
            })?;
        // The source chosen for the section as a whole; each run is planned for its own
        // size by the copy engine.
        let (source, _) = self.cheapest_source_for(&replicas, &replicas[target].memory, bytes)?;
        // One region copy (the runtime's rectangle copy, or packed) where the section is
        // a rectangle of several runs.
        if let Some(region) = section.region::<T>().filter(|_| runs.len() > 1) {
            let (from, to) = two_mut(&mut replicas, source, target);
            Self::move_region(self.mode, self.queue, from, to, &region, &self.stats)?;
            replicas[target].make_current();
            return Ok(replicas[target].events());
        }
        for (start, count) in runs {
            let (from, to) = two_mut(&mut replicas, source, target);
            let span = CopySpan {
                src_offset: start * size,
                dst_offset: start * size,
                len: count * size,
            };
            Self::move_bytes(self.mode, self.queue, from, to, span, &self.stats, None)?;
        }
        replicas[target].make_current();
        Ok(replicas[target].events())
    }
}
