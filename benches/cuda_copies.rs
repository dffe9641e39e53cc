//! Where the time of a CUDA copy goes: the driver's synchronous call, the same copy made
//! the way locus makes it (asynchronous on locus's non-blocking stream, then a stream
//! wait) without locus around it, and locus's `Memory::copy_to`, timed in rotation at
//! each size. Within one device (`cuMemcpyDtoD` + `cuCtxSynchronize`, `cuMemcpyDtoDAsync`
//! on locus's stream or on the NULL stream + `cuStreamSynchronize`), and host <-> device
//! from pageable memory (`cuMemcpyHtoD` / `cuMemcpyDtoH` against `copy_to`).
//!
//! Run: `cargo bench --bench cuda_copies` on a machine with an NVIDIA GPU (LOCUS_BENCH_REPS
//! sets the minimum runs per cell). Printed, never asserted; without CUDA it says so.

use locus::backends::cuda::{CudaDevice, RawCopy};
use locus::{Location, Memory, Technology};
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
    let cell = |size: usize, us: f64| format!("{us:9.1} ({:7.1})", size as f64 / us / 1e3);

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
    Ok(())
}
