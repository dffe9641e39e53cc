//! 06: Many Jacobi iterations on a target chosen at run time. The grid moves to the
//! target once, stays there for every iteration, and only the result comes back.
//!
//! `cargo run --release --example 06_jacobi -- webgpu:0` (or LOCUS_LOCATION, or the
//! last location found)

mod common;

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::{Buffer, Location};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = common::location_from_args()?;
    let (nx, ny, steps) = (256, 256, 100);
    let kernel = kernels::jacobi();
    let codelet = Codelet::new(&kernel, &[target, Location::Host])?;
    println!(
        "{steps} Jacobi steps on a {nx} x {ny} grid at {}",
        codelet.target()
    );
    // Hot left edge, cold elsewhere.
    let init: Vec<f32> = (0..nx * ny)
        .map(|k| if k % nx == 0 { 100.0 } else { 0.0 })
        .collect();
    let mut a = Buffer::from_slice(Location::Host, &init)?;
    let mut b = Buffer::<f32>::zeroed(Location::Host, nx * ny)?;
    let start = std::time::Instant::now();
    for _ in 0..steps {
        codelet.call(
            &mut [
                Arg::buf(&a),
                Arg::buf_mut(&mut b),
                Arg::u32(nx as u32),
                Arg::u32(ny as u32),
            ],
            Launch::d2(nx, ny),
        )?;
        std::mem::swap(&mut a, &mut b);
    }
    let elapsed = start.elapsed();
    println!(
        "moved while iterating: grid a {}, grid b {}",
        a.stats(),
        b.stats()
    );
    let result = a.to_vec()?;
    println!("after reading the result on the host: grid a {}", a.stats());
    // Check against the host reference.
    let (mut expect, mut tmp) = (init, vec![0.0; nx * ny]);
    for _ in 0..steps {
        kernels::jacobi_reference(&expect, &mut tmp, nx, ny);
        std::mem::swap(&mut expect, &mut tmp);
    }
    let worst = result
        .iter()
        .zip(&expect)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    println!(
        "{:.3} ms per step; largest difference from the host reference: {worst:.2e}; temperature one cell in: {:.3}",
        elapsed.as_secs_f64() * 1e3 / steps as f64,
        result[ny / 2 * nx + 1]
    );
    if worst > 1e-3 {
        return Err("result differs from the host reference".into());
    }
    Ok(())
}
