//! 05: One codelet, every available target: the same kernel in each technology's own
//! language (shaders/vec_add.*), chosen by the location it runs at.
//!
//! `cargo run --example 05_codelet_vec_add`

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::{Buffer, Location};

fn main() -> Result<(), locus::Error> {
    let n = 1 << 16;
    let kernel = kernels::vec_add();
    for target in locus::available() {
        let codelet = Codelet::new(&kernel, &[target])?;
        let a = Buffer::filled(Location::Host, n, 1.0f32)?;
        let b = Buffer::from_vec((0..n).map(|i| i as f32).collect());
        let mut c = Buffer::<f32>::zeroed(Location::Host, n)?;
        let report = codelet.call(
            &mut [
                Arg::buf(&a),
                Arg::buf(&b),
                Arg::buf_mut(&mut c),
                Arg::u32(n as u32),
            ],
            Launch::d1(n),
        )?;
        let result = c.to_vec()?;
        let correct = result.iter().enumerate().all(|(i, &v)| v == i as f32 + 1.0);
        println!(
            "{:<9} c[..4] = {:?}  all {n} correct: {correct}  moved for the call: {}",
            report.target.to_string(),
            &result[..4],
            report.moved
        );
        if !correct {
            std::process::exit(1);
        }
    }
    // A target list: the first one available wins, and the others say why not.
    let codelet = Codelet::new(
        &kernel,
        &[
            Location::Cuda(0),
            Location::Hip(0),
            Location::WebGpu(0),
            Location::Host,
        ],
    )?;
    println!(
        "\ntarget list cuda:0, hip:0, webgpu:0, host -> runs at {}",
        codelet.target()
    );
    for (l, why) in codelet.skipped() {
        println!("  skipped {l}: {why}");
    }
    Ok(())
}
