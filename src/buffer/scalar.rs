//! [`Scalar<T>`]: one value at a location (RMM's `device_scalar`): set and read from
//! the host, moved asynchronously like any buffer, and handed to kernels as a
//! one-element buffer.

use super::*;

/// One value at a location (RMM's `device_scalar`).
///
/// ```
/// use locus::{Location, Scalar};
/// let mut s = Scalar::new(Location::Host, 7u64)?;
/// s.set(42)?;                                   // from the host, asynchronously
/// assert_eq!(s.value()?, 42);                   // waits for it
/// # Ok::<(), locus::Error>(())
/// ```
#[derive(Debug)]
pub struct Scalar<T: Pod>(Buffer<T>);

impl<T: Pod + Send + Sync> Scalar<T> {
    /// `value` at `location`.
    pub fn new(location: Location, value: T) -> Result<Scalar<T>> {
        Buffer::filled(location, 1, value).map(Scalar)
    }

    /// A scalar whose memory comes from `resource`, left as it is handed out (RMM's
    /// `device_scalar(stream, mr)`: set it before reading it).
    pub fn uninit_in(resource: &Arc<dyn crate::resource::MemoryResource>) -> Result<Scalar<T>> {
        Buffer::uninit_in(resource, 1).map(Scalar)
    }

    /// A scalar from `resource` for work on `queue` (RMM's `device_scalar(stream, mr)`,
    /// stream-ordered; see [`Buffer::uninit_on`]): set it before reading it.
    pub fn uninit_on(
        resource: &Arc<dyn crate::resource::MemoryResource>,
        queue: crate::runtime::queue::Queue,
    ) -> Result<Scalar<T>> {
        Buffer::uninit_on(resource, 1, queue).map(Scalar)
    }

    /// Where it lives.
    pub fn location(&self) -> Location {
        self.0.location()
    }

    /// Sets the value from the host (`set_value_async`): in [`Transfer::Async`] mode the
    /// upload is started and this returns; reads and uses after it see the new value.
    pub fn set(&mut self, value: T) -> Result<()> {
        // Staged in host memory the move keeps alive (not in a `Buffer`, whose drop would
        // wait for the upload).
        let staged = Memory::new(Location::Host, std::mem::size_of::<T>())?;
        staged.write(0, bytemuck::bytes_of(&value))?;
        let mut source = Replica::new(staged, true);
        let buffer = &self.0;
        let mut replicas = buffer.lock();
        let target = buffer.write_target(&replicas)?;
        Buffer::<T>::move_bytes(
            buffer.mode,
            buffer.queue,
            &mut source,
            &mut replicas[target],
            CopySpan::whole(std::mem::size_of::<T>()),
            &buffer.stats,
            None,
        )?;
        only_current(&mut replicas, target);
        Ok(())
    }

    /// The value, read to the host (`value(stream)`): waits for moves in flight.
    pub fn value(&self) -> Result<T> {
        let mut out = [T::zeroed()];
        self.0.get(0, &mut out)?;
        Ok(out[0])
    }

    /// The one-element buffer behind it: to access it at a location, or pass it to a
    /// kernel ([`crate::codelet::Arg::buf`]).
    pub fn buffer(&self) -> &Buffer<T> {
        &self.0
    }

    /// The buffer behind it, writable (a kernel's `out` argument).
    pub fn buffer_mut(&mut self) -> &mut Buffer<T> {
        &mut self.0
    }
}
