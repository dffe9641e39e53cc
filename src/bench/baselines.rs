//! Raw native transfers, without locus's planner, bounds checks, mappings or counters:
//! the baselines `locus bench` compares the library against. Each call is what a user
//! would write by hand against that technology's own API, applied to the native handle
//! of a [`Memory`].

use crate::core::device::Device;
use crate::core::error::{Error, Result};
use crate::core::memory::Memory;
use crate::core::native::Native;

/// The name of the native call used for host -> device writes at this memory.
pub fn write_api(memory: &Memory) -> &'static str {
    match memory.native() {
        Native::Host { .. } => "memcpy",
        #[cfg(feature = "openmp")]
        Native::OpenMp { .. } => "omp_target_memcpy",
        #[cfg(feature = "opencl")]
        Native::OpenCl { .. } => "clEnqueueWriteBuffer",
        #[cfg(feature = "sycl")]
        Native::Sycl { .. } => "DPCTLQueue_Memcpy",
        #[cfg(feature = "webgpu")]
        Native::WebGpu { .. } if wgpu_mapped_in_place(memory) => "map_async + memcpy",
        #[cfg(feature = "webgpu")]
        Native::WebGpu { .. } => "queue.write_buffer",
        #[cfg(feature = "cuda")]
        Native::Cuda { .. } => "cuMemcpyHtoD",
        #[cfg(feature = "hip")]
        Native::Hip { .. } => "hipMemcpyAsync",
        // A technology without a raw baseline: its own `Device::write`.
        #[allow(unreachable_patterns)]
        _ => "the backend's own write",
    }
}

/// The name of the native call used for device -> host reads at this memory.
pub fn read_api(memory: &Memory) -> &'static str {
    match memory.native() {
        #[cfg(feature = "cuda")]
        Native::Cuda { .. } => "cuMemcpyDtoH",
        #[cfg(feature = "opencl")]
        Native::OpenCl { .. } => "clEnqueueReadBuffer",
        #[cfg(feature = "webgpu")]
        Native::WebGpu { .. } if wgpu_mapped_in_place(memory) => "map_async + memcpy",
        #[cfg(feature = "webgpu")]
        Native::WebGpu { .. } => "copy_buffer_to_buffer + map_async readback",
        _ => write_api(memory),
    }
}

/// The name of the native call used for copies within one device.
pub fn copy_api(memory: &Memory) -> &'static str {
    match memory.native() {
        #[cfg(feature = "cuda")]
        Native::Cuda { .. } => "cuMemcpyDtoD + cuCtxSynchronize",
        #[cfg(feature = "opencl")]
        Native::OpenCl { .. } => "clEnqueueCopyBuffer",
        #[cfg(feature = "webgpu")]
        Native::WebGpu { .. } => "copy_buffer_to_buffer",
        _ => write_api(memory),
    }
}

/// The backend's own device behind `memory` (taken from the memory: no registry look-up
/// inside a timed call).
#[allow(dead_code)] // used by the backends with raw baselines (features)
fn device_of<T: Device>(memory: &Memory) -> Result<&T> {
    let device: &dyn std::any::Any = &**memory.device();
    device
        .downcast_ref::<T>()
        .ok_or_else(|| bad("device", memory))
}

fn bad(what: &str, memory: &Memory) -> Error {
    Error::Invalid(format!(
        "raw {what}: unsupported memory at {}",
        memory.location()
    ))
}

/// Copies `src` into `dst[0..src.len()]` with the native host -> device call.
pub fn write(dst: &Memory, src: &[u8]) -> Result<()> {
    dst.check("raw write", 0, src.len())?;
    match dst.native() {
        Native::Host { ptr } => {
            // SAFETY: `dst` holds at least `src.len()` bytes (checked above).
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), *ptr, src.len()) };
            Ok(())
        }
        #[cfg(feature = "openmp")]
        Native::OpenMp { ptr, device } => {
            let initial = device_of::<crate::backends::openmp::OpenMpDevice>(dst)?.initial_device();
            // SAFETY: both ranges hold `src.len()` bytes on their devices.
            unsafe {
                crate::backends::openmp::target_memcpy(
                    *ptr,
                    *device,
                    src.as_ptr(),
                    initial,
                    src.len(),
                )
            }
        }
        #[cfg(feature = "opencl")]
        Native::OpenCl { mem, offset } => {
            let dev = device_of::<crate::backends::opencl::OpenClDevice>(dst)?;
            // SAFETY: a blocking write of `src.len()` checked bytes from a live slice.
            let event = unsafe {
                opencl3::command_queue::enqueue_write_buffer(
                    dev.queue().get(),
                    *mem,
                    opencl3::types::CL_BLOCKING,
                    *offset,
                    src.len(),
                    src.as_ptr().cast(),
                    0,
                    std::ptr::null(),
                )
            }
            .map_err(|c| Error::Invalid(format!("clEnqueueWriteBuffer: {c}")))?;
            // SAFETY: the event came from the enqueue above and is released once.
            let _ = unsafe { opencl3::event::release_event(event) };
            Ok(())
        }
        #[cfg(feature = "sycl")]
        Native::Sycl { ptr, .. } => sycl_memcpy(dst, *ptr, src.as_ptr(), src.len()),
        #[cfg(feature = "webgpu")]
        Native::WebGpu { buffer, offset } if wgpu_mapped_in_place(dst) => {
            wgpu_mapped(
                dst,
                buffer,
                *offset,
                src.len(),
                wgpu::MapMode::Write,
                |at| {
                    // SAFETY: `at` is the mapped host address of `src.len()` bytes of the
                    // buffer, valid until the closure returns.
                    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), at, src.len()) }
                },
            )
        }
        #[cfg(feature = "webgpu")]
        Native::WebGpu { buffer, offset } => {
            let dev = device_of::<crate::backends::webgpu::WebGpuDevice>(dst)?;
            dev.queue().write_buffer(buffer, *offset, src);
            let index = dev.queue().submit([]);
            wgpu_wait(dev, index)
        }
        // CUDA: the driver's synchronous call (`CudaDevice::raw_memcpy`). HIP (below):
        // the backend's own call, one vendor copy (through pinned staging for pageable
        // memory, as a careful hand-written loop would do).
        #[cfg(feature = "cuda")]
        Native::Cuda { ptr, .. } => {
            let dev = device_of::<crate::backends::cuda::CudaDevice>(dst)?;
            // SAFETY: `dst` holds `src.len()` bytes (checked above); `src` is a live slice.
            unsafe {
                dev.raw_memcpy(
                    crate::backends::cuda::RawCopy::HostToDevice,
                    *ptr,
                    src.as_ptr() as u64,
                    src.len(),
                )
            }
        }
        #[allow(unreachable_patterns)]
        _ => dst.device().write(dst.native(), 0, src),
    }
}

/// Copies `dst.len()` bytes from the start of `src` with the native device -> host call.
pub fn read(src: &Memory, dst: &mut [u8]) -> Result<()> {
    src.check("raw read", 0, dst.len())?;
    match src.native() {
        Native::Host { ptr } => {
            // SAFETY: `src` holds at least `dst.len()` bytes (checked above).
            unsafe { std::ptr::copy_nonoverlapping(*ptr, dst.as_mut_ptr(), dst.len()) };
            Ok(())
        }
        #[cfg(feature = "openmp")]
        Native::OpenMp { ptr, device } => {
            let initial = device_of::<crate::backends::openmp::OpenMpDevice>(src)?.initial_device();
            // SAFETY: both ranges hold `dst.len()` bytes on their devices.
            unsafe {
                crate::backends::openmp::target_memcpy(
                    dst.as_mut_ptr(),
                    initial,
                    *ptr,
                    *device,
                    dst.len(),
                )
            }
        }
        #[cfg(feature = "opencl")]
        Native::OpenCl { mem, offset } => {
            let dev = device_of::<crate::backends::opencl::OpenClDevice>(src)?;
            // SAFETY: a blocking read of `dst.len()` checked bytes into a live slice.
            let event = unsafe {
                opencl3::command_queue::enqueue_read_buffer(
                    dev.queue().get(),
                    *mem,
                    opencl3::types::CL_BLOCKING,
                    *offset,
                    dst.len(),
                    dst.as_mut_ptr().cast(),
                    0,
                    std::ptr::null(),
                )
            }
            .map_err(|c| Error::Invalid(format!("clEnqueueReadBuffer: {c}")))?;
            // SAFETY: the event came from the enqueue above and is released once.
            let _ = unsafe { opencl3::event::release_event(event) };
            Ok(())
        }
        #[cfg(feature = "sycl")]
        Native::Sycl { ptr, .. } => sycl_memcpy(src, dst.as_mut_ptr(), *ptr, dst.len()),
        #[cfg(feature = "webgpu")]
        Native::WebGpu { buffer, offset } if wgpu_mapped_in_place(src) => {
            let len = dst.len();
            wgpu_mapped(src, buffer, *offset, len, wgpu::MapMode::Read, |at| {
                // SAFETY: as in `write`, the other way.
                unsafe { std::ptr::copy_nonoverlapping(at, dst.as_mut_ptr(), len) }
            })
        }
        #[cfg(feature = "webgpu")]
        Native::WebGpu { buffer, offset } => wgpu_readback(src, buffer, *offset, dst),
        #[cfg(feature = "cuda")]
        Native::Cuda { ptr, .. } => {
            let dev = device_of::<crate::backends::cuda::CudaDevice>(src)?;
            // SAFETY: `src` holds `dst.len()` bytes (checked above); `dst` is a live slice.
            unsafe {
                dev.raw_memcpy(
                    crate::backends::cuda::RawCopy::DeviceToHost,
                    dst.as_mut_ptr() as u64,
                    *ptr,
                    dst.len(),
                )
            }
        }
        #[allow(unreachable_patterns)]
        _ => src.device().read(src.native(), 0, dst),
    }
}

/// Copies `len` bytes between two allocations of one device with its native copy.
pub fn copy_within(src: &Memory, dst: &Memory, len: usize) -> Result<()> {
    src.check("raw copy", 0, len)?;
    dst.check("raw copy", 0, len)?;
    match (src.native(), dst.native()) {
        (Native::Host { ptr: s }, Native::Host { ptr: d }) => {
            // SAFETY: both hold `len` bytes; distinct allocations do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(*s, *d, len) };
            Ok(())
        }
        #[cfg(feature = "openmp")]
        (Native::OpenMp { ptr: s, device: a }, Native::OpenMp { ptr: d, device: b }) => {
            // SAFETY: both hold `len` bytes on their devices.
            unsafe { crate::backends::openmp::target_memcpy(*d, *b, *s, *a, len) }
        }
        #[cfg(feature = "opencl")]
        (
            Native::OpenCl { mem: s, offset: so },
            Native::OpenCl {
                mem: d,
                offset: doff,
            },
        ) => {
            let dev = device_of::<crate::backends::opencl::OpenClDevice>(src)?;
            // SAFETY: two buffers of this context, `len` checked bytes each.
            let event = unsafe {
                opencl3::command_queue::enqueue_copy_buffer(
                    dev.queue().get(),
                    *s,
                    *d,
                    *so,
                    *doff,
                    len,
                    0,
                    std::ptr::null(),
                )
            }
            .map_err(|c| Error::Invalid(format!("clEnqueueCopyBuffer: {c}")))?;
            let waited = opencl3::event::wait_for_events(&[event]);
            // SAFETY: the event came from the enqueue above and is released once.
            let _ = unsafe { opencl3::event::release_event(event) };
            waited.map_err(|c| Error::Invalid(format!("clWaitForEvents: {c}")))
        }
        #[cfg(feature = "sycl")]
        (Native::Sycl { ptr: s, .. }, Native::Sycl { ptr: d, .. }) => sycl_memcpy(src, *d, *s, len),
        #[cfg(feature = "webgpu")]
        (
            Native::WebGpu {
                buffer: s,
                offset: so,
            },
            Native::WebGpu {
                buffer: d,
                offset: d0,
            },
        ) => {
            let dev = device_of::<crate::backends::webgpu::WebGpuDevice>(src)?;
            let mut encoder = dev.device().create_command_encoder(&Default::default());
            dev.encode_copy(&mut encoder, s, *so, d, *d0, (len as u64).div_ceil(4) * 4);
            let index = dev.queue().submit([encoder.finish()]);
            wgpu_wait(dev, index)
        }
        #[cfg(feature = "cuda")]
        (Native::Cuda { ptr: s, .. }, Native::Cuda { ptr: d, .. })
            if src.location() == dst.location() =>
        {
            let dev = device_of::<crate::backends::cuda::CudaDevice>(src)?;
            // SAFETY: both hold `len` bytes (checked above) on this device; distinct
            // allocations do not overlap.
            unsafe { dev.raw_memcpy(crate::backends::cuda::RawCopy::DeviceToDevice, *d, *s, len) }
        }
        #[allow(unreachable_patterns)]
        _ if src.location() == dst.location() => {
            src.device()
                .copy_within(src.native(), 0, dst.native(), 0, len)
        }
        #[allow(unreachable_patterns)]
        _ => Err(bad("copy", src)),
    }
}

#[cfg(feature = "sycl")]
fn sycl_memcpy(memory: &Memory, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
    let dev = device_of::<crate::backends::sycl::SyclDevice>(memory)?;
    let api = dev.api();
    // SAFETY: both ranges hold `len` bytes (checked by the callers); the event is
    // waited for and deleted.
    unsafe {
        let event = api.DPCTLQueue_Memcpy(dev.queue(), dst.cast(), src.cast(), len as _);
        if event.is_null() {
            return Err(Error::Invalid("DPCTLQueue_Memcpy returned no event".into()));
        }
        api.DPCTLEvent_Wait(event);
        api.DPCTLEvent_Delete(event);
    }
    Ok(())
}

#[cfg(feature = "webgpu")]
fn wgpu_wait(
    dev: &crate::backends::webgpu::WebGpuDevice,
    index: wgpu::SubmissionIndex,
) -> Result<()> {
    dev.device()
        .poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        })
        .map(|_| ())
        .map_err(|e| Error::Invalid(format!("device.poll: {e}")))
}

/// One MAP_READ buffer per WebGPU location, grown as needed (the readback baseline).
#[cfg(feature = "webgpu")]
static READBACK: std::sync::Mutex<Vec<(crate::core::location::Location, wgpu::Buffer)>> =
    std::sync::Mutex::new(Vec::new());

#[cfg(feature = "webgpu")]
fn wgpu_readback(
    memory: &Memory,
    buffer: &wgpu::Buffer,
    offset: u64,
    dst: &mut [u8],
) -> Result<()> {
    let dev = device_of::<crate::backends::webgpu::WebGpuDevice>(memory)?;
    let size = (dst.len() as u64).div_ceil(4) * 4;
    if size == 0 {
        return Ok(());
    }
    let mut cache = READBACK.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(l, b)| *l != memory.location() || b.size() >= size);
    if !cache.iter().any(|(l, _)| *l == memory.location()) {
        let staging = dev.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("raw readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        cache.push((memory.location(), staging));
    }
    let Some((_, staging)) = cache.iter().find(|(l, _)| *l == memory.location()) else {
        return Err(bad("read", memory));
    };
    let mut encoder = dev.device().create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, offset, staging, 0, size);
    dev.queue().submit([encoder.finish()]);
    wgpu_map_and_wait(dev, &staging.slice(0..size), wgpu::MapMode::Read)?;
    {
        let view = staging
            .get_mapped_range(0..size)
            .map_err(|e| Error::Invalid(format!("get_mapped_range: {e}")))?;
        dst.copy_from_slice(&view[..dst.len()]);
    }
    staging.unmap();
    Ok(())
}

/// True for WebGPU memory the backend maps in place (a storage buffer on unified
/// memory): its raw transfer is what a wgpu user writes there, a mapping and a memcpy.
#[cfg(feature = "webgpu")]
fn wgpu_mapped_in_place(memory: &Memory) -> bool {
    memory.host_access() != crate::core::device::HostAccess::None
}

/// Maps `slice` in `mode` and waits for the mapping (the raw baselines' blocking wait).
#[cfg(feature = "webgpu")]
fn wgpu_map_and_wait(
    dev: &crate::backends::webgpu::WebGpuDevice,
    slice: &wgpu::BufferSlice<'_>,
    mode: wgpu::MapMode,
) -> Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(mode, move |r| {
        let _ = tx.send(r);
    });
    dev.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Invalid(format!("device.poll: {e}")))?;
    rx.recv()
        .map_err(|e| Error::Invalid(format!("map_async: {e}")))?
        .map_err(|e| Error::Invalid(format!("map_async: {e}")))
}

/// Maps `len` bytes at `offset` of a mappable storage buffer in `mode`, runs `f` on the
/// host address of byte `offset`, and unmaps.
#[cfg(feature = "webgpu")]
fn wgpu_mapped(
    memory: &Memory,
    buffer: &wgpu::Buffer,
    offset: u64,
    len: usize,
    mode: wgpu::MapMode,
    f: impl FnOnce(*mut u8),
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let dev = device_of::<crate::backends::webgpu::WebGpuDevice>(memory)?;
    let start = offset & !(wgpu::MAP_ALIGNMENT - 1);
    let end = (offset + len as u64).div_ceil(4) * 4;
    let slice = buffer.slice(start..end);
    wgpu_map_and_wait(dev, &slice, mode)?;
    let skip = (offset - start) as usize;
    match mode {
        wgpu::MapMode::Write => {
            let mut view = slice
                .get_mapped_range_mut()
                .map_err(|e| Error::Invalid(format!("get_mapped_range_mut: {e}")))?;
            let base = view.slice(..).as_raw_ptr().as_ptr() as *mut u8;
            f(base.wrapping_add(skip));
        }
        wgpu::MapMode::Read => {
            let view = slice
                .get_mapped_range()
                .map_err(|e| Error::Invalid(format!("get_mapped_range: {e}")))?;
            // Read from only (the read baseline's closure copies out of it).
            f(view.as_ptr().wrapping_add(skip) as *mut u8);
        }
    }
    buffer.unmap();
    Ok(())
}

/// One of the raw CUDA copies within a device ([`RawCopy`](crate::backends::cuda::RawCopy)),
/// of the first `len` bytes of `src` into `dst` (both at the same `cuda:N`): for
/// `benches/cuda_copies.rs`, which tells the driver's cost, the stream's and locus's
/// apart.
#[cfg(feature = "cuda")]
pub fn cuda_within(
    src: &Memory,
    dst: &Memory,
    len: usize,
    how: crate::backends::cuda::RawCopy,
) -> Result<()> {
    use crate::backends::cuda::RawCopy;
    src.check("raw copy source", 0, len)?;
    dst.check("raw copy destination", 0, len)?;
    match (how, src.native(), dst.native()) {
        (
            RawCopy::DeviceToDevice
            | RawCopy::DeviceToDeviceOnStream
            | RawCopy::DeviceToDeviceOnNullStream,
            Native::Cuda { ptr: s, .. },
            Native::Cuda { ptr: d, .. },
        ) if src.location() == dst.location() && !std::ptr::eq(src, dst) => {
            let dev = device_of::<crate::backends::cuda::CudaDevice>(src)?;
            // SAFETY: both hold `len` bytes (checked above) on this device; two distinct
            // allocations do not overlap.
            unsafe { dev.raw_memcpy(how, *d, *s, len) }
        }
        _ => Err(Error::Invalid(format!(
            "cuda_within: {how:?} needs two distinct memories at one cuda:N, not {} and {}",
            src.location(),
            dst.location()
        ))),
    }
}
