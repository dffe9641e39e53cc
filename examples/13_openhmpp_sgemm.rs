//! 13: OpenHMPP's sgemm example, line by line: a group that allocates the matrices on
//! the accelerator once, loads them ahead of the calls (`advancedload`), calls the
//! codelet asynchronously twice with `synchronize` after each, brings the result back
//! once (`delegatedstore`) and releases the accelerator.
//!
//! ```c
//! #pragma hmpp sgemm allocate, args[vin1;vin2;vout].size={size,size}
//! #pragma hmpp sgemm advancedload, args[vin1;vin2;vout], args[m,n,k,alpha,beta]
//! for ( j = 0 ; j < 2 ; j ++) {
//! #pragma hmpp sgemm callsite, asynchronous, args[vin1;vin2;vout].advancedload=true, ...
//!   sgemm (size, size, size, alpha, vin1, vin2, beta, vout);
//! #pragma hmpp sgemm synchronize
//! }
//! #pragma hmpp sgemm delegatedstore, args[vout]
//! #pragma hmpp sgemm release
//! ```
//!
//! `cargo run --release --example 13_openhmpp_sgemm -- opencl:0` (or LOCUS_LOCATION, or
//! the last location found)

mod common;

use locus::codelet::{kernels, Arg, Group, Launch};
use locus::Location;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = common::location_from_args()?;
    let size = 96;
    let (alpha, beta) = (0.5f32, 2.0f32);
    // The host's arrays.
    let vin1: Vec<f32> = (0..size * size).map(|i| (i % 7) as f32 - 3.0).collect();
    let vin2: Vec<f32> = (0..size * size).map(|i| (i % 5) as f32 * 0.25).collect();
    let mut vout: Vec<f32> = (0..size * size).map(|i| (i % 3) as f32).collect();

    let sgemm = kernels::sgemm();
    // The codelet's arrays are the group's: `vin1`, `vin2`, `vout` are sgemm's `a`, `b`, `c`.
    let mut group = Group::new("sgemm", &[target, Location::Host])?
        .codelet("sgemm", &sgemm)?
        .map::<f32>("vin1", size * size, &[("sgemm", "a")])?
        .map::<f32>("vin2", size * size, &[("sgemm", "b")])?
        .map::<f32>("vout", size * size, &[("sgemm", "c")])?;

    // #pragma hmpp sgemm allocate, args[vin1;vin2;vout].size={size,size}
    let at = group.allocate()?;
    println!("sgemm {size} x {size}: group allocated at {at}");
    // #pragma hmpp sgemm advancedload, args[vin1;vin2;vout]
    group.var_mut::<f32>("vin1")?.set(0, &vin1)?;
    group.var_mut::<f32>("vin2")?.set(0, &vin2)?;
    group.var_mut::<f32>("vout")?.set(0, &vout)?;
    let loaded: u64 = ["vin1", "vin2", "vout"]
        .iter()
        .map(|v| group.var::<f32>(v).map(|b| b.stats().bytes_moved()))
        .sum::<Result<u64, _>>()?;
    println!("advancedload: {loaded} bytes to {at}");
    let s = size as u32;
    for j in 0..2 {
        // #pragma hmpp sgemm callsite, asynchronous, args[...].advancedload=true
        // sgemm (size, size, size, alpha, vin1, vin2, beta, vout);
        let pending = group.call_async(
            "sgemm",
            vec![
                Arg::u32(s),
                Arg::u32(s),
                Arg::u32(s),
                Arg::f32(alpha),
                Arg::f32(beta),
            ],
            Launch::d2(size, size),
        )?;
        // #pragma hmpp sgemm synchronize
        let report = pending.synchronize()?;
        println!(
            "callsite {j}: ran at {}, moved {} bytes",
            report.target,
            report.moved.bytes_moved()
        );
    }
    // #pragma hmpp sgemm delegatedstore, args[vout]
    group.delegated_store_var("vout", None, Location::Host)?;
    let result = group.var::<f32>("vout")?.to_vec()?;
    // #pragma hmpp sgemm release
    group.release()?;

    // The host reference: the same two calls.
    for _ in 0..2 {
        kernels::sgemm_reference(size, size, size, alpha, &vin1, &vin2, beta, &mut vout);
    }
    let worst = result
        .iter()
        .zip(&vout)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0f32, f32::max);
    println!(
        "delegatedstore: vout[0..4] = {:?}, host reference {:?}, worst relative error {worst:.1e}",
        &result[..4],
        &vout[..4]
    );
    if worst > 1e-4 {
        eprintln!("FAIL: the result differs from the host reference");
        std::process::exit(1);
    }
    println!("released; result correct");
    Ok(())
}
