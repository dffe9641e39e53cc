//! 15: OpenHMPP's `cond`: the call offloads only when the condition holds at the call
//! site; small problems stay on the host, where the launch and the transfers would cost
//! more than the work.
//!
//! ```c
//! #pragma hmpp saxpy codelet, target=..., args[y].io=inout, cond="n > 100000"
//! void saxpy(float a, const float *x, float *y, unsigned n);
//! ```
//!
//! `cargo run --release --example 15_openhmpp_cond -- opencl:0`

mod common;

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::{Buffer, Location};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = common::location_from_args()?;
    let threshold = 100_000;
    let saxpy = kernels::saxpy();
    let codelet = Codelet::new(&saxpy, &[target, Location::Host])?;
    println!(
        "saxpy offloads to {} when n > {threshold}",
        codelet.target()
    );
    for n in [1_000, 50_000, 200_000, 1_000_000] {
        let x = Buffer::from_vec((0..n).map(|i| (i % 10) as f32).collect());
        let mut y = Buffer::filled(Location::Host, n, 1.0f32)?;
        let report = codelet.call_if(
            n > threshold, // cond="n > 100000"
            &mut [
                Arg::f32(2.0),
                Arg::buf(&x),
                Arg::buf_mut(&mut y),
                Arg::u32(n as u32),
            ],
            Launch::d1(n),
        )?;
        let y = y.to_vec()?;
        let correct = y
            .iter()
            .enumerate()
            .all(|(i, &v)| v == 2.0 * (i % 10) as f32 + 1.0);
        println!(
            "n = {n:>9}: ran at {:<9} moved {:>9} bytes, correct: {correct}",
            report.target.to_string(),
            report.moved.bytes_moved()
        );
        if !correct {
            std::process::exit(1);
        }
    }
    Ok(())
}
