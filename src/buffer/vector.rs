//! HAMR's vector operations on [`Buffer`]: capacity (`reserve`), `resize`, `assign`,
//! `append` with amortised growth, `swap`, and `set` / `get` of ranges from and into
//! host slices. All bounds-checked: a call refused for its arguments changes nothing.
//!
//! Each waits for the buffer's moves in flight first (see `pending`), then works
//! synchronously. The home replica holds the capacity; replicas elsewhere hold the elements only, and
//! one too small for a grown buffer is dropped (it could not be current any more).

use super::*;

/// The capacity an append grows to: HAMR's `reserve_for_append` (start at 8, double
/// until it fits), or exactly the length needed where doubling would overflow.
fn grown_capacity(capacity: usize, needed: usize) -> usize {
    let mut grown = capacity.max(8);
    while grown < needed {
        grown = grown.checked_mul(2).unwrap_or(needed);
    }
    grown
}

impl<T: Pod> Buffer<T> {
    /// Elements the buffer holds at its home location without reallocating.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Makes room at home for at least `capacity` elements (HAMR's `reserve`): no-op
    /// when there is room; otherwise a new home allocation of exactly `capacity`
    /// elements takes the current data. Replicas elsewhere stay as they were.
    pub fn reserve(&mut self, capacity: usize) -> Result<()> {
        self.synchronize()?;
        if capacity <= self.capacity {
            return Ok(());
        }
        self.regrow(capacity, true)
    }

    /// Replaces the home allocation with one of `capacity` elements, holding the current
    /// data when `keep` (else the caller overwrites it all).
    fn regrow(&mut self, capacity: usize, keep: bool) -> Result<()> {
        let memory = match self.kind {
            crate::core::native::MemoryKind::Default => Self::allocate(self.home, capacity)?,
            kind => Memory::new_kind(self.home, kind, bytes_of::<T>(capacity)?)?,
        };
        if keep {
            let bytes = bytes_of::<T>(self.len)?;
            let replicas = self.lock();
            let (source, plan) = self.cheapest_source_for(&replicas, &memory, bytes)?;
            let span = CopySpan::whole(bytes);
            copy_on_plan(
                &replicas[source].memory,
                &memory,
                span,
                &plan,
                Some(&self.stats),
            )?;
        }
        let home = self.home;
        let replicas = self.replicas.get_mut().unwrap_or_else(|e| e.into_inner());
        if keep {
            replicas.retain(|r| r.location() != home);
        } else {
            replicas.clear();
        }
        replicas.push(Replica::new(memory, true));
        self.capacity = capacity;
        Ok(())
    }

    /// Index of the home replica, made current first if it is not.
    fn valid_home(&self, replicas: &mut Vec<Replica>) -> Result<usize> {
        match replicas
            .iter()
            .position(|r| r.valid && r.location() == self.home)
        {
            Some(i) => Ok(i),
            None => {
                let (i, _) = self.serve(replicas, self.home, true)?;
                replicas[i].settle()?;
                Ok(i)
            }
        }
    }

    /// Sets the length to `len` (within capacity) and keeps only `keep` valid; replicas
    /// too small for `len` go.
    pub(super) fn commit_len(&mut self, len: usize, keep: usize) -> Result<()> {
        let bytes = bytes_of::<T>(len)?;
        let home = self.home;
        let replicas = self.replicas.get_mut().unwrap_or_else(|e| e.into_inner());
        only_current(replicas, keep);
        drop_smaller_than(replicas, home, bytes);
        self.len = len;
        Ok(())
    }

    /// Changes the length (HAMR's `resize`): shrinking keeps every current replica
    /// current; growing past the capacity reallocates home to exactly `len`; new
    /// elements are zero.
    pub fn resize(&mut self, len: usize) -> Result<()> {
        self.resize_with(len, T::zeroed())
    }

    /// Changes the length as [`Buffer::resize`] does; new elements are `value`.
    pub fn resize_with(&mut self, len: usize, value: T) -> Result<()> {
        self.synchronize()?;
        let size = std::mem::size_of::<T>();
        if len <= self.len {
            let bytes = bytes_of::<T>(len)?;
            let home = self.home;
            let replicas = self.replicas.get_mut().unwrap_or_else(|e| e.into_inner());
            drop_smaller_than(replicas, home, bytes);
            self.len = len;
            return Ok(());
        }
        if len > self.capacity {
            self.regrow(len, true)?;
        }
        let home = {
            let mut replicas = self.lock();
            let i = self.valid_home(&mut replicas)?;
            if size > 0 {
                replicas[i]
                    .memory
                    .fill(self.len * size..len * size, bytemuck::bytes_of(&value))?;
            }
            i
        };
        self.commit_len(len, home)
    }

    /// Replaces the contents with a copy of `src` (HAMR's `assign`), reallocating home
    /// only when `src` does not fit in the capacity.
    pub fn assign(&mut self, src: &Buffer<T>) -> Result<()> {
        self.assign_range(src, 0..src.len())
    }

    /// Replaces the contents with a copy of `src[range]`.
    pub fn assign_range(&mut self, src: &Buffer<T>, range: Range<usize>) -> Result<()> {
        self.synchronize()?;
        src.synchronize()?;
        let count = src.check_source(&range)?;
        self.make_room_for(count)?;
        self.copy_from(0, src, range).map(|_| ())
    }

    /// Replaces the contents with a copy of a host slice.
    pub fn assign_slice(&mut self, data: &[T]) -> Result<()> {
        self.synchronize()?;
        self.make_room_for(data.len())?;
        self.set(0, data)
    }

    /// Sets the length to `len` for contents that are about to be overwritten whole:
    /// nothing current is copied, and some replica with room is marked current.
    pub(super) fn make_room_for(&mut self, len: usize) -> Result<()> {
        if len > self.capacity {
            self.regrow(len, false)?;
            self.len = len;
            return Ok(());
        }
        let bytes = bytes_of::<T>(len)?;
        let home = self.home;
        let replicas = self.replicas.get_mut().unwrap_or_else(|e| e.into_inner());
        drop_smaller_than(replicas, home, bytes);
        if !replicas.iter().any(|r| r.valid) {
            if let Some(r) = replicas.iter_mut().find(|r| r.location() == home) {
                r.make_current();
            }
        }
        self.len = len;
        Ok(())
    }

    /// Appends a copy of `src` (HAMR's `append`): amortised growth (the capacity doubles
    /// from 8), and no copy of the existing elements when the capacity suffices.
    pub fn append(&mut self, src: &Buffer<T>) -> Result<()> {
        self.append_range(src, 0..src.len())
    }

    /// Appends a copy of `src[range]`.
    pub fn append_range(&mut self, src: &Buffer<T>, range: Range<usize>) -> Result<()> {
        self.synchronize()?;
        src.synchronize()?;
        let count = src.check_source(&range)?;
        let size = std::mem::size_of::<T>();
        let (home, end) = self.room_at_end(count)?;
        let start = self.len;
        {
            let replicas = self.lock();
            let src_replicas = src.lock();
            let home_memory = &replicas[home].memory;
            let (source, plan) =
                src.cheapest_source_for(&src_replicas, home_memory, count * size)?;
            let span = CopySpan {
                src_offset: range.start * size,
                dst_offset: start * size,
                len: count * size,
            };
            let source = &src_replicas[source].memory;
            copy_on_plan(source, home_memory, span, &plan, Some(&self.stats))?;
        }
        self.commit_len(end, home)
    }

    /// Appends a copy of a host slice.
    pub fn append_slice(&mut self, data: &[T]) -> Result<()> {
        self.synchronize()?;
        let (home, end) = self.room_at_end(data.len())?;
        {
            let replicas = self.lock();
            let at = self.len * std::mem::size_of::<T>();
            replicas[home]
                .memory
                .write(at, bytemuck::cast_slice(data))?;
            self.count_host_io(&replicas[home].memory, std::mem::size_of_val(data));
        }
        self.commit_len(end, home)
    }

    /// Grows the capacity for `count` more elements and makes home current: the index of
    /// the home replica and the length after the append.
    pub(super) fn room_at_end(&mut self, count: usize) -> Result<(usize, usize)> {
        let end = self.len.checked_add(count).ok_or_else(|| {
            Error::Invalid(format!(
                "{}: appending {count} elements to {} overflows the length",
                self.home, self.len
            ))
        })?;
        bytes_of::<T>(end)?;
        if end > self.capacity {
            self.regrow(grown_capacity(self.capacity, end), true)?;
        }
        let mut replicas = self.lock();
        let home = self.valid_home(&mut replicas)?;
        Ok((home, end))
    }

    /// Exchanges the contents, locations, replicas and counters of two buffers (HAMR's
    /// `swap`): nothing is copied.
    pub fn swap(&mut self, other: &mut Buffer<T>) {
        std::mem::swap(self, other);
    }

    /// Writes `data` into `self[start..start + data.len()]` (HAMR's `set` from a host
    /// array). Out of range is an error and nothing is written.
    pub fn set(&mut self, start: usize, data: &[T]) -> Result<()> {
        self.check_range(start, data.len(), "set destination")?;
        let mut replicas = self.settled()?;
        let target = self.write_target(&replicas)?;
        replicas[target]
            .memory
            .write(start * std::mem::size_of::<T>(), bytemuck::cast_slice(data))?;
        self.count_host_io(&replicas[target].memory, std::mem::size_of_val(data));
        only_current(&mut replicas, target);
        Ok(())
    }

    /// Reads `self[start..start + out.len()]` into `out` (HAMR's `get` into a host
    /// array), from the current copy the host reaches most cheaply.
    pub fn get(&self, start: usize, out: &mut [T]) -> Result<()> {
        self.check_range(start, out.len(), "get source")?;
        let replicas = self.settled()?;
        let source = Self::host_source(&replicas)?;
        let bytes = std::mem::size_of_val(out);
        replicas[source].memory.read(
            start * std::mem::size_of::<T>(),
            bytemuck::cast_slice_mut(out),
        )?;
        self.count_host_io(&replicas[source].memory, bytes);
        Ok(())
    }

    /// Checks `start..start + count` against the length (errors report bytes).
    pub(super) fn check_range(&self, start: usize, count: usize, what: &'static str) -> Result<()> {
        if start.checked_add(count).is_none_or(|end| end > self.len) {
            let bytes = |n: usize| n.saturating_mul(std::mem::size_of::<T>());
            return Err(Error::OutOfRange {
                location: self.home,
                what,
                offset: bytes(start),
                len: bytes(count),
                size: bytes(self.len),
            });
        }
        Ok(())
    }

    /// Checks a source range of this buffer; its element count.
    pub(super) fn check_source(&self, range: &Range<usize>) -> Result<usize> {
        if range.start > range.end {
            let bytes = |n: usize| n.saturating_mul(std::mem::size_of::<T>());
            return Err(Error::OutOfRange {
                location: self.home,
                what: "copy source",
                offset: bytes(range.start),
                len: 0,
                size: bytes(self.len),
            });
        }
        let count = range.end - range.start;
        self.check_range(range.start, count, "copy source")?;
        Ok(count)
    }
}
