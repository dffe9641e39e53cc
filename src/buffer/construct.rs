//! How a [`Buffer`] is made: zeroed, filled or copied at a location (through the
//! location's default memory resource), uninitialised on a resource or queue, over
//! memory a caller made (`from_memory`, `adopt`), or around a host `Vec` without a copy.

use super::*;

impl<T: Pod> Buffer<T> {
    pub(super) fn with_memory(memory: Memory, len: usize) -> Buffer<T> {
        Buffer {
            len,
            capacity: elements_in::<T>(&memory),
            home: memory.location(),
            replicas: Mutex::new(vec![Replica::new(memory, true)]),
            mode: Transfer::default(),
            queue: None,
            marker: Mutex::default(),
            kind: crate::core::native::MemoryKind::Default,
            stats: TransferStats::default(),
            _marker: PhantomData,
        }
    }

    /// Allocates through the location's default memory resource.
    pub(super) fn allocate(location: Location, len: usize) -> Result<Memory> {
        let resource = crate::resource::default_for(location)?;
        Memory::from_resource(&resource, bytes_of::<T>(len)?)
    }

    /// `len` zeroed elements at `location`.
    pub fn zeroed(location: Location, len: usize) -> Result<Buffer<T>> {
        let memory = Self::allocate(location, len)?;
        memory.fill(0..memory.len(), &[0])?;
        Ok(Self::with_memory(memory, len))
    }

    /// `len` zeroed elements in memory of `kind` at `location` (pinned host or managed
    /// memory of `cuda:0`, SYCL USM shared or host, ...): accessibility follows the kind
    /// (pinned host memory is used in place by the host and by its device). A kind the
    /// location does not offer is an error naming what it offers
    /// ([`MemoryKinds`](crate::MemoryKinds)). Growing past the
    /// capacity reallocates in the same kind.
    pub fn zeroed_kind(
        location: Location,
        kind: crate::core::native::MemoryKind,
        len: usize,
    ) -> Result<Buffer<T>> {
        let memory = Memory::new_kind(location, kind, bytes_of::<T>(len)?)?;
        memory.fill(0..memory.len(), &[0])?;
        let mut buffer = Self::with_memory(memory, len);
        buffer.kind = kind;
        Ok(buffer)
    }

    /// The memory kind of the home allocation ([`MemoryKind::Default`](crate::MemoryKind)
    /// unless made by [`Buffer::zeroed_kind`]).
    pub fn memory_kind(&self) -> crate::core::native::MemoryKind {
        self.kind
    }

    /// `len` copies of `value` at `location`.
    pub fn filled(location: Location, len: usize, value: T) -> Result<Buffer<T>> {
        let memory = Self::allocate(location, len)?;
        memory.fill(0..memory.len(), bytemuck::bytes_of(&value))?;
        Ok(Self::with_memory(memory, len))
    }

    /// A copy of `data` at `location`.
    pub fn from_slice(location: Location, data: &[T]) -> Result<Buffer<T>> {
        let memory = Self::allocate(location, data.len())?;
        memory.write(0, bytemuck::cast_slice(data))?;
        let buffer = Self::with_memory(memory, data.len());
        buffer.count_host_io(&buffer.lock()[0].memory, std::mem::size_of_val(data));
        Ok(buffer)
    }

    /// `len` elements from `resource`, left as the resource hands them out (RMM's
    /// `device_uvector`: no fill, for data that is written before it is read). Memory
    /// from a pool may hold an earlier user's bytes.
    pub fn uninit_in(
        resource: &Arc<dyn crate::resource::MemoryResource>,
        len: usize,
    ) -> Result<Buffer<T>> {
        let memory = Memory::from_resource(resource, bytes_of::<T>(len)?)?;
        Ok(Self::with_memory(memory, len))
    }

    /// `len` elements from `resource` for work on `queue` (RMM's `device_uvector(n,
    /// stream, mr)`): stream-ordered, so a pool may hand out memory freed on `queue`
    /// whose earlier work is still running; the buffer's moves go on `queue` after it.
    pub fn uninit_on(
        resource: &Arc<dyn crate::resource::MemoryResource>,
        len: usize,
        queue: crate::runtime::queue::Queue,
    ) -> Result<Buffer<T>> {
        let memory = Memory::from_resource_on(resource, bytes_of::<T>(len)?, queue)?;
        let buffer = Self::with_memory(memory, len).with_queue(queue);
        // The memory may be a block freed on `queue` whose work still runs: everything
        // that touches the buffer comes after the queue's work so far.
        if let Some(last) = queue.last() {
            buffer.order_after(&last);
        }
        Ok(buffer)
    }

    /// Wraps an allocation of any kind (pinned or managed CUDA / HIP memory, SYCL shared
    /// or host USM, an adopted handle, ...) as a buffer of `memory.len() / size_of::<T>()`
    /// elements, its contents as they are. Accessibility follows the allocation: pinned
    /// host memory is used in place by the host, shared USM by the host and its device.
    pub fn from_memory(memory: Memory) -> Result<Buffer<T>> {
        let size = std::mem::size_of::<T>().max(1);
        if !memory.len().is_multiple_of(size) {
            return Err(Error::Invalid(format!(
                "{}: {} bytes are not a whole number of {size}-byte elements; make the allocation a multiple of the element size",
                memory.location(),
                memory.len()
            )));
        }
        if !memory
            .native()
            .address()
            .is_multiple_of(std::mem::align_of::<T>() as u64)
        {
            return Err(Error::Invalid(format!(
                "{}: the allocation at {:#x} is not aligned for {}-byte elements",
                memory.location(),
                memory.native().address(),
                std::mem::align_of::<T>()
            )));
        }
        let len = memory.len() / size;
        Ok(Self::with_memory(memory, len))
    }

    /// Adopts a host `Vec` without copying it.
    pub fn from_vec(data: Vec<T>) -> Buffer<T>
    where
        T: Send + Sync,
    {
        let len = data.len();
        Self::with_memory(Memory::from_vec(data), len)
    }

    /// Adopts a native allocation of `len` elements without copying; `deleter` runs
    /// when the buffer no longer needs it.
    ///
    /// # Safety
    /// As for [`Memory::adopt`]: `native` is a live allocation of at least
    /// `len * size_of::<T>()` bytes on the device at `location`, valid until `deleter`
    /// runs, and suitably aligned for `T`.
    pub unsafe fn adopt(
        location: Location,
        native: Native,
        len: usize,
        deleter: impl FnOnce(&Native) + Send + Sync + 'static,
    ) -> Result<Buffer<T>> {
        let bytes = bytes_of::<T>(len)?;
        // SAFETY: forwarded from the caller's contract.
        let memory = unsafe { Memory::adopt(location, native, bytes, deleter)? };
        Ok(Self::with_memory(memory, len))
    }
}
