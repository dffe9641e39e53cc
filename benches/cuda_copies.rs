//! Where the time of a CUDA copy goes: the driver's synchronous call, the same copy made
//! the way locus makes it (asynchronous on locus's non-blocking stream, then a stream
//! wait) without locus around it, and locus's `Memory::copy_to`, timed in rotation at
//! each size. Within one device (`cuMemcpyDtoD` + `cuCtxSynchronize`, `cuMemcpyDtoDAsync`
//! on locus's stream or on the NULL stream + `cuStreamSynchronize`), and host <-> device
//! from pageable memory (`cuMemcpyHtoD` / `cuMemcpyDtoH` against `copy_to`).
//!
//! Then host <-> device by host memory kind, each direction: pageable memory by the
//! driver's synchronous call (`cuMemcpyHtoD` / `cuMemcpyDtoH`, the legacy NULL stream)
//! and by the asynchronous call on a non-blocking stream waited for (what locus does),
//! the same `Vec` registered in place (`cuMemHostRegister`), memory from `cuMemAllocHost`,
//! and locus's `copy_to` from host memory and from its pinned host kind.
//!
//! Run: `cargo bench --bench cuda_copies` on a machine with an NVIDIA GPU (LOCUS_BENCH_REPS
//! sets the minimum runs per cell). Printed, never asserted; without CUDA it says so.

use cudarc::driver::{result, sys, CudaContext};
use locus::backends::cuda::{CudaDevice, RawCopy};
use locus::{Location, Memory, MemoryKind, Technology};
use locus_cli::bench::timing;

const SIZES: [usize; 7] = [
    4 << 10,
    64 << 10,
    1 << 20,
    4 << 20,
    16 << 20,
    64 << 20,
    256 << 20,
];

fn name(size: usize) -> String {
    if size >= 1 << 20 {
        format!("{} MiB", size >> 20)
    } else {
        format!("{} KiB", size >> 10)
    }
}

/// Microseconds and GB/s of one copy of `size` bytes.
fn cell(size: usize, us: f64) -> String {
    format!("{us:9.1} ({:7.1})", size as f64 / us / 1e3)
}

/// The median of each closure timed in rotation, in microseconds.
fn rotate(
    size: usize,
    fns: &mut [&mut dyn FnMut() -> locus::Result<()>],
) -> locus::Result<Vec<f64>> {
    let budget = if size >= 64 << 20 { 0.4 } else { 0.15 };
    let stats = timing::measure_together(budget, timing::reps(20), fns)?;
    Ok(stats.iter().map(|s| s.median_s * 1e6).collect())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = locus::available()
        .into_iter()
        .find(|l| l.technology() == Technology::Cuda)
    else {
        println!("cuda_copies: no CUDA device here; nothing to measure");
        return Ok(());
    };
    println!("cuda_copies at {gpu}: median microseconds per copy (GB/s)");

    println!("\nwithin {gpu}:");
    println!(
        "  {:>8}  {:>19}  {:>19}  {:>19}  {:>19}",
        "size", "DtoD+CtxSync", "DtoDAsync(locus)", "DtoDAsync(NULL)", "locus copy_to"
    );
    for size in SIZES {
        let (a, b) = (Memory::new(gpu, size)?, Memory::new(gpu, size)?);
        let device = locus::device_as::<CudaDevice>(gpu)?;
        let t = rotate(
            size,
            &mut [
                &mut || device.raw_copy_within(&a, &b, size, RawCopy::DeviceToDevice),
                &mut || device.raw_copy_within(&a, &b, size, RawCopy::DeviceToDeviceOnStream),
                &mut || device.raw_copy_within(&a, &b, size, RawCopy::DeviceToDeviceOnNullStream),
                &mut || a.copy_to(0, &b, 0, size).map(|_| ()),
            ],
        )?;
        let cells: Vec<String> = t.iter().map(|&us| cell(size, us)).collect();
        println!("  {:>8}  {}", name(size), cells.join("  "));
    }

    println!("\nhost (pageable) <-> {gpu}:");
    println!(
        "  {:>8}  {:>19}  {:>19}  {:>19}  {:>19}",
        "size", "cuMemcpyHtoD", "locus write", "cuMemcpyDtoH", "locus read"
    );
    for size in SIZES {
        let dev = Memory::new(gpu, size)?;
        let host = Memory::new(Location::Host, size)?;
        let mut bytes = vec![1u8; size];
        // Written first: a fresh host allocation's pages are all the one zero page,
        // which reads faster than any real source.
        host.write(0, &bytes)?;
        let t = rotate(
            size,
            &mut [&mut || dev.native_write(&bytes), &mut || {
                host.copy_to(0, &dev, 0, size).map(|_| ())
            }],
        )?;
        let r = rotate(
            size,
            &mut [&mut || dev.native_read(&mut bytes), &mut || {
                dev.copy_to(0, &host, 0, size).map(|_| ())
            }],
        )?;
        let cells: Vec<String> = t.iter().chain(&r).map(|&us| cell(size, us)).collect();
        println!("  {:>8}  {}", name(size), cells.join("  "));
    }
    host_kinds(gpu)
}

/// A driver error as locus's, for the timing closures.
fn driver(call: &'static str) -> impl Fn(result::DriverError) -> locus::Error {
    move |e| locus::Error::Invalid(format!("{call}: {e:?}"))
}

/// Host <-> `gpu` from each kind of host memory, raw driver calls beside locus's.
fn host_kinds(gpu: Location) -> Result<(), Box<dyn std::error::Error>> {
    let Location::Cuda(ordinal) = gpu else {
        return Ok(());
    };
    let context = CudaContext::new(ordinal as usize)?;
    context.bind_to_thread()?;
    let stream = result::stream::create(result::stream::StreamKind::NonBlocking)?;
    let device = locus::registry().device(gpu)?.clone();
    let columns = [
        "pageable sync",
        "pageable async",
        "registered",
        "cuMemAllocHost",
        "locus host",
        "locus pinned",
    ];
    for (direction, to_device) in [("host -> device", true), ("device -> host", false)] {
        println!("\n{direction} at {gpu}, by host memory kind:");
        let head: Vec<String> = columns.iter().map(|c| format!("{c:>19}")).collect();
        println!("  {:>8}  {}", "size", head.join("  "));
        for size in SIZES {
            let dev = Memory::new(gpu, size)?;
            let locus::Native::Cuda { ptr: d, .. } = *dev.native() else {
                return Err("not CUDA memory".into());
            };
            let mut pageable = vec![1u8; size];
            let mut registered = vec![1u8; size];
            context.bind_to_thread()?;
            // SAFETY: `registered` outlives the registration, which is undone below
            // before it is dropped; the primary context is current.
            unsafe { sys::cuMemHostRegister_v2(registered.as_mut_ptr().cast(), size, 0) }
                .result()?;
            // SAFETY: the primary context is current; freed below.
            let pinned = unsafe { result::malloc_host(size, 0)? }.cast::<u8>();
            // SAFETY: `pinned` holds `size` bytes.
            unsafe { std::ptr::write_bytes(pinned, 1, size) };
            let host = Memory::new(Location::Host, size)?;
            host.write(0, &pageable)?;
            let locus_pinned = Memory::on_kind(&device, MemoryKind::PinnedHost, size)?;
            locus_pinned.write(0, &pageable)?;
            let raw = |host: *mut u8, sync: bool| -> locus::Result<()> {
                context
                    .bind_to_thread()
                    .map_err(driver("cuCtxSetCurrent"))?;
                // SAFETY: `host` holds `size` bytes and `d` is a device allocation of
                // `size` bytes; each copy is complete before the closure returns.
                unsafe {
                    let bytes = std::slice::from_raw_parts_mut(host, size);
                    match (to_device, sync) {
                        (true, true) => result::memcpy_htod_sync(d, bytes)
                            .map_err(driver("cuMemcpyHtoD"))
                            .and_then(|()| {
                                result::stream::synchronize(result::stream::null())
                                    .map_err(driver("cuStreamSynchronize"))
                            })?,
                        (false, true) => {
                            result::memcpy_dtoh_sync(bytes, d).map_err(driver("cuMemcpyDtoH"))?
                        }
                        (true, false) => result::memcpy_htod_async(d, bytes, stream)
                            .map_err(driver("cuMemcpyHtoDAsync"))?,
                        (false, false) => result::memcpy_dtoh_async(bytes, d, stream)
                            .map_err(driver("cuMemcpyDtoHAsync"))?,
                    }
                    result::stream::synchronize(stream).map_err(driver("cuStreamSynchronize"))
                }
            };
            let (p, r) = (pageable.as_mut_ptr(), registered.as_mut_ptr());
            let locus_copy = |from: &Memory| {
                if to_device {
                    from.copy_to(0, &dev, 0, size).map(|_| ())
                } else {
                    dev.copy_to(0, from, 0, size).map(|_| ())
                }
            };
            let t = rotate(
                size,
                &mut [
                    &mut || raw(p, true),
                    &mut || raw(p, false),
                    &mut || raw(r, false),
                    &mut || raw(pinned, false),
                    &mut || locus_copy(&host),
                    &mut || locus_copy(&locus_pinned),
                ],
            )?;
            context.bind_to_thread()?;
            // SAFETY: registered above, no copy in flight; `pinned` from cuMemAllocHost.
            unsafe {
                sys::cuMemHostUnregister(registered.as_mut_ptr().cast()).result()?;
                result::free_host(pinned.cast())?;
            }
            let cells: Vec<String> = t.iter().map(|&us| cell(size, us)).collect();
            println!("  {:>8}  {}", name(size), cells.join("  "));
        }
    }
    // SAFETY: created above; nothing is queued on it.
    unsafe { result::stream::destroy(stream) }?;
    Ok(())
}
