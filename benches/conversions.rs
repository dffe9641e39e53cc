//! Converting copies against plain copies, in the same run (issue 14's target: a
//! conversion `f32 -> f64` of 64 MiB between two locations costs no more than 1.3x the
//! plain copy of the larger buffer, 128 MiB of `f64`, on the same pair).
//!
//! Pairs: every location with itself, and the host to and from every other location.
//! Each line times `Buffer::<f64>::copy_from_converted` from a buffer of `f32` and
//! `Buffer::<f64>::copy_from` from a buffer of `f64`, alternately, and prints the ratio.
//!
//! Run: `cargo bench --bench conversions` (LOCUS_BENCH_REPS changes repetitions;
//! LOCUS_BENCH_MIB the size of the `f32` side). Printed, never asserted.

use locus::{Buffer, Location};
use locus_cli::bench::timing::{self, gbps};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mib: usize = std::env::var("LOCUS_BENCH_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let n = mib << 20 >> 2;
    let reps = timing::reps(5);
    let all = locus::available();
    let mut pairs: Vec<(Location, Location)> = all.iter().map(|&l| (l, l)).collect();
    for &l in all.iter().filter(|l| !l.is_host()) {
        pairs.push((Location::Host, l));
        pairs.push((l, Location::Host));
    }
    println!(
        "{:<24} {:>14} {:>14} {:>7}  (f32 -> f64 of {mib} MiB vs f64 copy of {} MiB)",
        "pair",
        "convert",
        "plain copy",
        "ratio",
        2 * mib
    );
    let data: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let wide: Vec<f64> = data.iter().map(|&x| x as f64).collect();
    let (mut met, mut total) = (0, 0);
    for (from, to) in pairs {
        let narrow_src = Buffer::from_slice(from, &data)?;
        let wide_src = Buffer::from_slice(from, &wide)?;
        let mut converted = Buffer::<f64>::zeroed(to, n)?;
        let mut copied = Buffer::<f64>::zeroed(to, n)?;
        let (tc, tp) = timing::interleaved(
            reps,
            || {
                converted.copy_from_converted(0, &narrow_src, 0..n).unwrap();
            },
            || {
                // Buffers are asynchronous by default: time the copy to its end.
                copied.copy_from(0, &wide_src, 0..n).unwrap();
                copied.synchronize().unwrap();
            },
        );
        assert_eq!(
            converted.to_vec()?,
            wide,
            "{from} -> {to}: the conversion is right"
        );
        let ratio = tc.as_secs_f64() / tp.as_secs_f64();
        total += 1;
        met += usize::from(ratio <= 1.3);
        println!(
            "{:<24} {:>8.2} ms {:>5.1} GB/s {:>8.2} ms {:>5.1} GB/s {ratio:>6.2} {}",
            format!("{from} -> {to}"),
            tc.as_secs_f64() * 1e3,
            gbps(n * 8, tc),
            tp.as_secs_f64() * 1e3,
            gbps(n * 8, tp),
            if ratio <= 1.3 {
                "met"
            } else {
                "NOT met (target 1.3)"
            }
        );
    }
    println!("target met on {met} of {total} pairs");
    Ok(())
}
