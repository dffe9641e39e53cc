//! Converting copies between buffers of different element types (HAMR's
//! `buffer<T>(alloc, const buffer<U>&)`, `assign`, `append`, `set`, `get` across types),
//! with Rust's `as` semantics (see [`crate::core::element`]: a conversion that loses
//! information, `f64 -> f32` or `i64 -> i32`, rounds, truncates or saturates as `as`
//! does, silently).
//!
//! Where both sides are on one OpenCL, SYCL, CUDA or HIP device, or on one WebGPU GPU
//! adapter the host cannot map, a kernel generated for the pair of types converts on the
//! device (`as` semantics in OpenCL C, in CUDA C++ through NVRTC / hiprtc, and in u32
//! arithmetic in WGSL; the half types, `f64` on an OpenCL device without it, and 8- and
//! 16-bit types on WebGPU go the host's way).
//!
//! Between a host-visible side and a side the host cannot map (a discrete GPU), where
//! that device converts: a widening upload sends the source unconverted and converts on
//! the device (the narrower type crosses); a download converts there first and sends
//! the result.
//!
//! Where the host reaches both sides in place (host memory, OpenMP on the initial
//! device, OpenCL and SYCL on CPU devices) the conversion reads the source and writes
//! the destination directly, on every core, with no copy besides. Where one side is not
//! host-visible, that side goes through a host staging chunk: one read or one write per
//! chunk, never a full copy of the buffer first.

use std::sync::OnceLock;

use super::*;
use crate::core::element::{convert_bytes, DType, Element};
use crate::core::kernel_language::KernelLanguage;
use crate::core::launch::{LaunchArg, LaunchSpec};

use super::convert_kernels::{cuda_conversion, opencl_c_conversion, wgsl_conversion};

/// Elements converted per step: big enough to amortise a map or a transfer, small
/// enough that staging stays in cache-sized pieces.
const CHUNK: usize = 1 << 18;

/// Elements per step when a side goes through host staging: bigger, so that a staged
/// transfer's fixed cost per call (on WebGPU a map, a submission and its wait) is paid
/// per 8 MiB of f64 rather than 2 (`docs/design-measurements.md`).
const STAGED_CHUNK: usize = 1 << 20;

/// Host staging for one chunk of one side, aligned for any element type.
struct Staging(Vec<u64>);

impl Staging {
    fn for_side(needed: bool, dtype: DType, count: usize) -> Staging {
        let bytes = if needed {
            count.min(STAGED_CHUNK) * dtype.size()
        } else {
            0
        };
        Staging(vec![0; bytes.div_ceil(8)])
    }

    fn bytes(&mut self, len: usize) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.0)[..len]
    }
}

/// Converts one run of bytes into another (the element types are fixed).
type Converter<'a> = dyn Fn(&[u8], &mut [u8]) -> Result<()> + Sync + 'a;

/// Splits a conversion of mapped memory over the machine's cores (one piece below
/// [`CHUNK`] elements per core is not worth a thread).
fn in_parallel(
    from: DType,
    src: &[u8],
    to: DType,
    dst: &mut [u8],
    convert: &Converter<'_>,
) -> Result<()> {
    let count = src.len() / from.size();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(count / CHUNK).max(1);
    if threads == 1 {
        return convert(src, dst);
    }
    let per = count.div_ceil(threads);
    std::thread::scope(|scope| {
        let pieces: Vec<_> = src
            .chunks(per * from.size())
            .zip(dst.chunks_mut(per * to.size()))
            .map(|(s, d)| scope.spawn(move || convert(s, d)))
            .collect();
        pieces.into_iter().try_for_each(|piece| {
            piece
                .join()
                .unwrap_or_else(|_| Err(Error::Invalid("a conversion thread panicked".into())))
        })
    })
}

/// Whether a WebGPU conversion on one device runs the WGSL kernel:
/// `LOCUS_WEBGPU_CONVERT=device` always, `=host` never; by default where a side is
/// `staged` (the host cannot map it, as on a discrete GPU) on a GPU adapter. Where the
/// host maps the memory in place, converting through the mapping is as fast; on a CPU
/// adapter the shader is slower than the host's own loop (`docs/design-measurements.md`).
fn wgsl_converts(staged: bool, cpu_adapter: bool) -> bool {
    static FORCED: OnceLock<Option<bool>> = OnceLock::new();
    let forced = FORCED.get_or_init(|| {
        let choice = crate::core::config::choice("LOCUS_WEBGPU_CONVERT", &["device", "host"]);
        crate::core::config::or_warn(choice).map(|c| c == "device")
    });
    forced.unwrap_or(staged && !cpu_adapter)
}

/// Which generated conversion kernel a device runs for one pair of types (one per
/// kernel language: CUDA and HIP share theirs).
#[derive(Clone, Copy)]
enum ConversionSource {
    /// OpenCL C (OpenCL and SYCL devices), one work-item per element.
    OpenClC,
    /// WGSL (WebGPU), 64 invocations per workgroup, 32-bit scalars.
    Wgsl,
    /// CUDA C++ (CUDA through NVRTC, HIP through hiprtc: the same source), one thread
    /// per element.
    CudaC,
}

impl ConversionSource {
    /// The generated source and the workgroup size it is launched with.
    fn source(self, from: DType, to: DType) -> Option<(String, u32)> {
        match self {
            ConversionSource::OpenClC => opencl_c_conversion(from, to).map(|s| (s, 1)),
            ConversionSource::Wgsl => wgsl_conversion(from, to).map(|s| (s, 64)),
            ConversionSource::CudaC => cuda_conversion(from, to).map(|s| (s, 256)),
        }
    }
}

/// Whether `device` at `location` converts `from -> to` with a kernel, and in which
/// language (`None` where it runs none; see [`on_the_device`]). Decided without
/// generating the source. `staged`: a side is memory the host cannot map.
fn conversion_source(
    device: &dyn crate::core::device::Device,
    location: Location,
    from: DType,
    to: DType,
    staged: bool,
) -> Option<ConversionSource> {
    let sized = |t: DType| !matches!(t, DType::F16 | DType::BF16);
    match location.technology().kernel_language()? {
        KernelLanguage::OpenClC => {
            let wide = from == DType::F64 || to == DType::F64;
            (sized(from) && sized(to) && !(wide && device.lacks_f64().is_some()))
                .then_some(ConversionSource::OpenClC)
        }
        KernelLanguage::Wgsl => (from.size() >= 4
            && to.size() >= 4
            && wgsl_converts(staged, device.info().kind == "cpu"))
        .then_some(ConversionSource::Wgsl),
        KernelLanguage::Cuda | KernelLanguage::Hip => {
            (sized(from) && sized(to)).then_some(ConversionSource::CudaC)
        }
        KernelLanguage::OpenMpC => None,
    }
}

/// Converts with a kernel generated for the pair of types, where both sides are on one
/// device that runs one: OpenCL and SYCL (OpenCL C), CUDA and HIP (CUDA C++ through
/// NVRTC / hiprtc; the host's way costs orders of magnitude more than a plain copy
/// there), and WebGPU (WGSL, for the 32- and 64-bit types; see
/// [`wgsl_converts`] for where). No byte crosses to the host. `None`
/// where that does not apply (another technology, two devices, half types, f64 on an
/// OpenCL device without it), or the kernel could not be launched; the caller then
/// converts through the host.
fn on_the_device(src: &Side<'_>, dst: &Side<'_>, count: usize) -> Result<Option<RouteKind>> {
    let location = src.memory.location();
    if location != dst.memory.location() {
        return Ok(None);
    }
    let device = src.memory.device();
    let staged = src.memory.host_access() == HostAccess::None
        || dst.memory.host_access() == HostAccess::None;
    let Some((source, workgroup)) =
        conversion_source(device.as_ref(), location, src.dtype, dst.dtype, staged)
            .and_then(|language| language.source(src.dtype, dst.dtype))
    else {
        return Ok(None);
    };
    let (so, dof) = (src.offset / src.dtype.size(), dst.offset / dst.dtype.size());
    // At most as many elements per launch as the device launches at once (HIP: 2^32 - 1
    // work items), each launch converting its piece at its offsets.
    let most = device.max_launch_items().min(usize::MAX as u64) as usize;
    let piece = (most - most % workgroup as usize).max(workgroup as usize);
    let mut done = 0;
    while done < count {
        let n = piece.min(count - done);
        let Some(scalars) = piece_scalars(location, n, so + done, dof + done) else {
            return Ok(None);
        };
        let spec = LaunchSpec {
            source: &source,
            entry: "locus_convert",
            workgroup: [workgroup, 1, 1],
            global: [n, 1],
            dims: 1,
        };
        let [n_arg, so_arg, dof_arg] = scalars;
        let args = [
            LaunchArg::Memory(src.memory),
            LaunchArg::Memory(dst.memory),
            n_arg,
            so_arg,
            dof_arg,
        ];
        match device.kernels().map(|kernels| kernels.launch(&spec, &args)) {
            Some(Ok(work)) => work.wait()?,
            // The caller converts through the host (all of it, over any piece done).
            _ => return Ok(None),
        }
        done += n;
    }
    Ok(Some(RouteKind::Direct))
}

/// The conversion kernel's scalars for `n` elements at source element `so` and
/// destination element `dof`; `None` where they do not fit (WGSL takes 32-bit ones).
fn piece_scalars(
    location: crate::core::location::Location,
    n: usize,
    so: usize,
    dof: usize,
) -> Option<[LaunchArg<'static>; 3]> {
    if location.technology().kernel_language() == Some(KernelLanguage::Wgsl) {
        let (n, so, dof) = (
            u32::try_from(n).ok()?,
            u32::try_from(so).ok()?,
            u32::try_from(dof).ok()?,
        );
        return Some([
            LaunchArg::scalar(n),
            LaunchArg::scalar(so),
            LaunchArg::scalar(dof),
        ]);
    }
    Some([
        LaunchArg::scalar(n as u64),
        LaunchArg::scalar(so as u64),
        LaunchArg::scalar(dof as u64),
    ])
}

/// Converts between a host-visible side and a staged side of another location with the
/// staged device's kernel: a widening upload sends the source as it is into scratch
/// memory at the destination and converts there (`f32 -> f64`: half the bytes of the
/// plain copy cross); a download converts at the source into scratch and sends the
/// result (the narrower type crosses when narrowing; when widening the device still
/// converts faster than the host's staged way). `None` where the staged side runs no
/// kernel for the pair, a narrowing upload (the host converts it on the way), or the
/// scratch or the kernel fails (the caller then converts through the host).
fn through_device_scratch(
    src: &Side<'_>,
    dst: &Side<'_>,
    count: usize,
) -> Result<Option<RouteKind>> {
    let host_side = |side: &Side<'_>| side.memory.host_access() != HostAccess::None;
    if src.memory.location() == dst.memory.location() || src.dtype == dst.dtype {
        return Ok(None);
    }
    let upload = host_side(src) && !host_side(dst) && src.dtype.size() <= dst.dtype.size();
    // Every download: the device's kernel is faster than the host's staged conversion
    // even where the wider type crosses (docs/design-measurements.md).
    let download = !host_side(src) && host_side(dst);
    let (device_side, scratch_type) = match (upload, download) {
        (true, _) => (dst, src.dtype),
        (_, true) => (src, dst.dtype),
        _ => return Ok(None),
    };
    let (device, location) = (device_side.memory.device(), device_side.memory.location());
    if conversion_source(device.as_ref(), location, src.dtype, dst.dtype, true).is_none() {
        return Ok(None);
    }
    let Some(bytes) = count.checked_mul(scratch_type.size()) else {
        return Ok(None);
    };
    let Ok(scratch) = Memory::on(device, bytes) else {
        return Ok(None); // no room for scratch: the host's way needs none
    };
    let scratch_side = Side {
        memory: &scratch,
        offset: 0,
        dtype: scratch_type,
    };
    if upload {
        src.memory
            .with_host_bytes(src.offset, bytes, |s| scratch.write(0, s))?;
        let converted = on_the_device(&scratch_side, dst, count)?;
        return Ok(converted.map(|_| RouteKind::Staged));
    }
    if on_the_device(src, &scratch_side, count)?.is_none() {
        return Ok(None);
    }
    dst.memory
        .with_host_bytes_mut(dst.offset, bytes, |d| scratch.read(0, d))?;
    Ok(Some(RouteKind::Staged))
}

/// One side of a conversion: an allocation, a byte offset and an element type.
pub(crate) struct Side<'a> {
    pub(crate) memory: &'a Memory,
    pub(crate) offset: usize,
    pub(crate) dtype: DType,
}

/// Converts `count` elements from `src` into `dst`. The route kind it took: `Mapped`
/// when the host reached both sides in place, `Staged` when a side went through host
/// staging. Both ranges are checked before anything is written.
pub(crate) fn convert_between(src: Side<'_>, dst: Side<'_>, count: usize) -> Result<RouteKind> {
    let span = |side: &Side<'_>| {
        count.checked_mul(side.dtype.size()).ok_or_else(|| {
            Error::Invalid(format!(
                "{}: {count} elements of {} overflow the address space",
                side.memory.location(),
                side.dtype
            ))
        })
    };
    let (src_span, dst_span) = (span(&src)?, span(&dst)?);
    src.memory
        .check("conversion source", src.offset, src_span)?;
    dst.memory
        .check("conversion destination", dst.offset, dst_span)?;
    let from_host = src.memory.host_access() != HostAccess::None;
    let to_host = dst.memory.host_access() != HostAccess::None;
    let convert = |s: &[u8], d: &mut [u8]| {
        convert_bytes(src.dtype, s, dst.dtype, d).map_err(|reason| {
            Error::Invalid(format!(
                "{} -> {}: converting {} to {}: {reason}",
                src.memory.location(),
                dst.memory.location(),
                src.dtype,
                dst.dtype
            ))
        })
    };
    if count == 0 {
        return Ok(RouteKind::Staged);
    }
    if let Some(kind) = on_the_device(&src, &dst, count)? {
        return Ok(kind);
    }
    if let Some(kind) = through_device_scratch(&src, &dst, count)? {
        return Ok(kind);
    }
    if from_host && to_host {
        // Both sides in place: map each once and convert on every core.
        src.memory.with_host_bytes(src.offset, src_span, |s| {
            dst.memory.with_host_bytes_mut(dst.offset, dst_span, |d| {
                in_parallel(src.dtype, s, dst.dtype, d, &convert)
            })
        })?;
        return Ok(RouteKind::Mapped);
    }
    let mut src_stage = Staging::for_side(!from_host, src.dtype, count);
    let mut dst_stage = Staging::for_side(!to_host, dst.dtype, count);
    let mut done = 0;
    while done < count {
        let n = (count - done).min(STAGED_CHUNK);
        let (s_at, s_len) = (src.offset + done * src.dtype.size(), n * src.dtype.size());
        let (d_at, d_len) = (dst.offset + done * dst.dtype.size(), n * dst.dtype.size());
        match (from_host, to_host) {
            (true, _) => {
                // Only the destination is staged (both in place returned above).
                let d = dst_stage.bytes(d_len);
                src.memory.with_host_bytes(s_at, s_len, |s| convert(s, d))?;
                dst.memory.write(d_at, d)?;
            }
            (false, true) => {
                let s = src_stage.bytes(s_len);
                src.memory.read(s_at, s)?;
                dst.memory
                    .with_host_bytes_mut(d_at, d_len, |d| convert(s, d))?;
            }
            (false, false) => {
                let s = src_stage.bytes(s_len);
                src.memory.read(s_at, s)?;
                let d = dst_stage.bytes(d_len);
                convert(s, d)?;
                dst.memory.write(d_at, d)?;
            }
        }
        done += n;
    }
    Ok(RouteKind::Staged)
}

/// [`convert_between`], counted in the process's counters and in `local`.
fn convert_counted(
    src: Side<'_>,
    dst: Side<'_>,
    count: usize,
    local: Option<&TransferStats>,
) -> Result<RouteKind> {
    let bytes = count * dst.dtype.size();
    let kind = convert_between(src, dst, count)?;
    if count > 0 {
        crate::runtime::transfer::stats::count(kind, bytes, local);
    }
    Ok(kind)
}

impl Memory {
    /// Converts `count` elements of type `from` at byte `offset` here into elements of
    /// type `to` at byte `dst_offset` of `dst`, any two locations, with Rust's `as`
    /// semantics: the untyped form of [`Buffer::copy_from_converted`], for bindings
    /// whose element types are known at run time only. Same routes (a kernel on the
    /// device where it converts, else through the host), counted in the process's
    /// transfer counters. Both ranges are checked first: out of range is an error and
    /// nothing is written. The caller orders it after pending work on either side.
    pub fn convert_to(
        &self,
        offset: usize,
        from: DType,
        dst: &Memory,
        dst_offset: usize,
        to: DType,
        count: usize,
    ) -> Result<RouteKind> {
        let (src, dst) = (
            Side {
                memory: self,
                offset,
                dtype: from,
            },
            Side {
                memory: dst,
                offset: dst_offset,
                dtype: to,
            },
        );
        convert_counted(src, dst, count, None)
    }
}

impl<T: Element> Buffer<T> {
    /// A new buffer of `T` at `src`'s home holding `src`'s elements converted (HAMR's
    /// converting copy constructor): `Buffer::<f64>::converted_from(&floats)`.
    pub fn converted_from<U: Element>(src: &Buffer<U>) -> Result<Buffer<T>> {
        Self::converted_at(src.location(), src)
    }

    /// A new buffer of `T` at `location` holding `src`'s elements converted.
    pub fn converted_at<U: Element>(location: Location, src: &Buffer<U>) -> Result<Buffer<T>> {
        src.synchronize()?;
        let memory = Self::allocate(location, src.len())?;
        let buffer = Self::with_memory(memory, src.len());
        {
            let replicas = buffer.lock();
            buffer.convert_into(&replicas[0].memory, 0, src, 0..src.len())?;
        }
        Ok(buffer)
    }

    /// Converts `src[range]` into `memory` at element `start`, counted in this buffer's
    /// and the process's transfer counters. Same element type: a plain copy on the
    /// transfer matrix's route.
    fn convert_into<U: Element>(
        &self,
        memory: &Memory,
        start: usize,
        src: &Buffer<U>,
        range: Range<usize>,
    ) -> Result<()> {
        let count = range.end - range.start;
        let (from, to) = (U::DTYPE, T::DTYPE);
        let src_replicas = src.lock();
        if from == to {
            let bytes = count * to.size();
            let (source, plan) = src.cheapest_source_for(&src_replicas, memory, bytes)?;
            let span = CopySpan {
                src_offset: range.start * from.size(),
                dst_offset: start * to.size(),
                len: bytes,
            };
            copy_on_plan(
                &src_replicas[source].memory,
                memory,
                span,
                &plan,
                Some(&self.stats),
            )?;
            return Ok(());
        }
        let source = Buffer::<U>::host_source(&src_replicas)?;
        let (src, dst) = (
            Side {
                memory: &src_replicas[source].memory,
                offset: range.start * from.size(),
                dtype: from,
            },
            Side {
                memory,
                offset: start * to.size(),
                dtype: to,
            },
        );
        convert_counted(src, dst, count, Some(&self.stats)).map(|_| ())
    }

    /// Converts `src[src_range]` into `self[start..]` (HAMR's `set` from a buffer of
    /// another type). Bounds-checked: out of range is an error and nothing is written.
    pub fn copy_from_converted<U: Element>(
        &mut self,
        start: usize,
        src: &Buffer<U>,
        src_range: Range<usize>,
    ) -> Result<()> {
        src.synchronize()?;
        let count = src.check_source(&src_range)?;
        self.check_range(start, count, "conversion destination")?;
        let mut replicas = self.settled()?;
        let target = self.write_target(&replicas)?;
        self.convert_into(&replicas[target].memory, start, src, src_range)?;
        only_current(&mut replicas, target);
        Ok(())
    }

    /// Replaces the contents with `src` converted (HAMR's `assign` across types).
    pub fn assign_converted<U: Element>(&mut self, src: &Buffer<U>) -> Result<()> {
        self.synchronize()?;
        self.make_room_for(src.len())?;
        self.copy_from_converted(0, src, 0..src.len())
    }

    /// Appends `src` converted (HAMR's `append` across types), with the growth of
    /// [`Buffer::append`].
    pub fn append_converted<U: Element>(&mut self, src: &Buffer<U>) -> Result<()> {
        self.synchronize()?;
        src.synchronize()?;
        let (home, end) = self.room_at_end(src.len())?;
        {
            let replicas = self.lock();
            self.convert_into(&replicas[home].memory, self.len, src, 0..src.len())?;
        }
        self.commit_len(end, home)
    }

    /// Writes host values of another type, converted, into `self[start..]`.
    pub fn set_converted<U: Element>(&mut self, start: usize, data: &[U]) -> Result<()> {
        self.check_range(start, data.len(), "set destination")?;
        let mut replicas = self.settled()?;
        let target = self.write_target(&replicas)?;
        {
            let memory = &replicas[target].memory;
            let (from, to) = (U::DTYPE, T::DTYPE);
            let mut stage =
                Staging::for_side(memory.host_access() == HostAccess::None, to, data.len());
            for (i, chunk) in data.chunks(CHUNK).enumerate() {
                let at = (start + i * CHUNK) * to.size();
                let len = chunk.len() * to.size();
                let src = bytemuck::cast_slice(chunk);
                if memory.host_access() == HostAccess::None {
                    let d = stage.bytes(len);
                    convert_bytes(from, src, to, d)?;
                    memory.write(at, d)?;
                } else {
                    memory.with_host_bytes_mut(at, len, |d| convert_bytes(from, src, to, d))?;
                }
            }
            self.count_host_io(memory, data.len() * to.size());
        }
        only_current(&mut replicas, target);
        Ok(())
    }

    /// Reads `self[start..start + out.len()]` converted into host values of another type
    /// (HAMR's `get` across types).
    pub fn get_converted<U: Element>(&self, start: usize, out: &mut [U]) -> Result<()> {
        self.check_range(start, out.len(), "get source")?;
        let replicas = self.settled()?;
        let memory = &replicas[Self::host_source(&replicas)?].memory;
        let (from, to) = (T::DTYPE, U::DTYPE);
        let staged = memory.host_access() == HostAccess::None;
        let mut stage = Staging::for_side(staged, from, out.len());
        for (i, chunk) in out.chunks_mut(CHUNK).enumerate() {
            let at = (start + i * CHUNK) * from.size();
            let len = chunk.len() * from.size();
            let dst = bytemuck::cast_slice_mut(chunk);
            if staged {
                let s = stage.bytes(len);
                memory.read(at, s)?;
                convert_bytes(from, s, to, dst)?;
            } else {
                memory.with_host_bytes(at, len, |s| convert_bytes(from, s, to, dst))?;
            }
        }
        self.count_host_io(memory, out.len() * from.size());
        Ok(())
    }
}
