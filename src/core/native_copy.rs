//! Transfers by each technology's own calls, without locus around them: what a user
//! writes by hand against that API (`clEnqueueWriteBuffer`, `cuMemcpyDtoH`,
//! `omp_target_memcpy`, ...), applied to the native handle of a [`Memory`]. They are
//! the raw baselines `locus bench` and the benchmarks compare the library against, and
//! a way to see a vendor's call beside locus's.
//!
//! Each technology answers through its [`NativeCalls`](super::capability::NativeCalls)
//! (the call's name, a write, a read, a copy within); a device without them answers with
//! its own `write` / `read` / `copy_within`;
//! this file only checks the ranges and picks the calls for a pair.

#[cfg(doc)]
use super::device::Device;
use super::device::Direction;
use super::error::{Error, Result};
use super::memory::Memory;

impl Memory {
    /// Copies `src` to the start of this memory with its technology's own synchronous
    /// call (no planner, mapping, staging or counter of locus's).
    ///
    /// ```
    /// let memory = locus::Memory::new(locus::Location::Host, 8)?;
    /// memory.native_write(&[7; 8])?;
    /// assert_eq!(memory.native_call(locus::Direction::HostToDevice), "memcpy");
    /// # Ok::<(), locus::Error>(())
    /// ```
    pub fn native_write(&self, src: &[u8]) -> Result<()> {
        self.check("native write", 0, src.len())?;
        self.settle_before_host_use()?;
        self.device().native_write(self.native(), src)
    }

    /// Copies the first `dst.len()` bytes of this memory into `dst` with its technology's
    /// own synchronous call.
    pub fn native_read(&self, dst: &mut [u8]) -> Result<()> {
        self.check("native read", 0, dst.len())?;
        self.settle_before_host_use()?;
        self.device().native_read(self.native(), dst)
    }

    /// The name of this memory's technology's own call for a transfer in `direction`.
    pub fn native_call(&self, direction: Direction) -> &'static str {
        self.device().native_call(self.native(), direction)
    }

    /// The native calls [`Memory::native_copy_to`] makes from this memory to `dst`: one
    /// call within a location or between host memory and a device, a read plus a write
    /// otherwise (`"clEnqueueReadBuffer + cuMemcpyHtoD"`).
    pub fn native_calls_to(&self, dst: &Memory) -> String {
        match Pair::of(self, dst) {
            Pair::Within => self.native_call(Direction::WithinDevice).to_string(),
            Pair::FromHost => dst.native_call(Direction::HostToDevice).to_string(),
            Pair::ToHost => self.native_call(Direction::DeviceToHost).to_string(),
            Pair::ThroughHost => format!(
                "{} + {}",
                self.native_call(Direction::DeviceToHost),
                dst.native_call(Direction::HostToDevice)
            ),
        }
    }

    /// Copies the first `len` bytes of this memory to the start of `dst` the way a user
    /// writes it by hand with the technologies' own calls ([`Memory::native_calls_to`]):
    /// one call within a location or between host memory and a device; for two devices,
    /// a native read into `scratch` (at least `len` host bytes, unused otherwise) and a
    /// native write out of it.
    pub fn native_copy_to(&self, dst: &Memory, len: usize, scratch: &mut [u8]) -> Result<()> {
        self.check("native copy source", 0, len)?;
        dst.check("native copy destination", 0, len)?;
        match Pair::of(self, dst) {
            Pair::Within => {
                if std::ptr::eq(self, dst) {
                    return Err(Error::Invalid(format!(
                        "{}: native copy of a memory onto itself; copy between two allocations",
                        self.location()
                    )));
                }
                self.settle_before_host_use()?;
                dst.settle_before_host_use()?;
                self.device()
                    .native_copy_within(self.native(), dst.native(), len)
            }
            Pair::FromHost => self.with_host_bytes(0, len, |bytes| dst.native_write(bytes)),
            Pair::ToHost => dst.with_host_bytes_mut(0, len, |bytes| self.native_read(bytes)),
            Pair::ThroughHost => {
                let Some(host) = scratch.get_mut(..len) else {
                    return Err(Error::Invalid(format!(
                        "native copy {} -> {} of {len} bytes through a host scratch buffer of {} \
                         bytes; pass one of at least {len} bytes",
                        self.location(),
                        dst.location(),
                        scratch.len()
                    )));
                };
                self.native_read(host)?;
                dst.native_write(host)
            }
        }
    }
}

/// How a pair of memories is copied by native calls.
enum Pair {
    /// One location: its own copy.
    Within,
    /// Host memory to a device: the device's write.
    FromHost,
    /// A device to host memory: the device's read.
    ToHost,
    /// Two devices: a read into host memory, then a write.
    ThroughHost,
}

impl Pair {
    fn of(src: &Memory, dst: &Memory) -> Pair {
        let (s, d) = (src.location(), dst.location());
        if s == d {
            Pair::Within
        } else if s.is_host() {
            Pair::FromHost
        } else if d.is_host() {
            Pair::ToHost
        } else {
            Pair::ThroughHost
        }
    }
}
