//! 07: Asynchronous calls: `advancedload` moves inputs ahead of time, the call returns
//! at once, the host works meanwhile, `synchronize` waits, and `delegatedstore` brings
//! the output back only when it is wanted.
//!
//! `cargo run --example 07_async -- opencl:0`

mod common;

use locus::codelet::{kernels, Arg, Codelet, Launch};
use locus::{Buffer, Location};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = common::location_from_args()?;
    let n = 1 << 20;
    let kernel = kernels::saxpy();
    let codelet = Codelet::new(&kernel, &[target, Location::Host])?;
    let x = Buffer::from_vec(vec![1.0f32; n]);
    let mut y = Buffer::from_vec(vec![2.0f32; n]);

    // advancedload: move the inputs now, while nothing waits for them.
    codelet.advanced_load(&x)?;
    codelet.advanced_load(&y)?;
    println!(
        "advancedload to {}: x {}, y {}",
        codelet.target(),
        x.stats(),
        y.stats()
    );

    // The call returns at once; the host is free meanwhile.
    let pending = codelet.call_async(
        vec![
            Arg::f32(3.0),
            Arg::buf(&x),
            Arg::buf_mut(&mut y),
            Arg::u32(n as u32),
        ],
        Launch::d1(n),
    )?;
    let host_work: f64 = (0..1_000_000).map(|i| (i as f64).sqrt()).sum();
    println!("host computed {host_work:.0} while the kernel ran");
    let report = pending.synchronize()?;
    println!(
        "synchronize: done at {}, the call itself moved: {}",
        report.target, report.moved
    );

    // delegatedstore: the result is still at the target; bring it back when wanted.
    codelet.delegated_store(&y)?;
    let values = y.to_vec()?;
    println!(
        "y[..3] = {:?} (expected 5.0); y's transfers: {}",
        &values[..3],
        y.stats()
    );
    if values.iter().any(|&v| v != 5.0) {
        return Err("wrong result".into());
    }
    Ok(())
}
