//! BabelStream's kernels (`locus::codelet::kernels::stream`, sources in `shaders/stream/`)
//! at every location this machine has, in f32 and f64, checked against the same
//! arithmetic on the host; the f64 set refused where the location has no f64; a count
//! beyond a buffer refused before anything launches.

mod common;

use locus::codelet::kernels::stream::{self, Precision};
use locus::codelet::{Arg, Codelet, Element, Launch};
use locus::{Buffer, Location};

/// Arrays a, b, c after one iteration, and the dot product.
type Outcome<T> = (Vec<T>, Vec<T>, Vec<T>, f64);

/// One BabelStream iteration (copy, mul, add, triad, dot) at `at`; returns a, b, c and
/// the dot product.
fn iteration<T: Element + Into<f64> + Copy>(
    at: Location,
    precision: Precision,
    n: usize,
    init: [T; 3],
    parts: usize,
) -> locus::Result<Outcome<T>> {
    let (mut a, mut b, mut c) = (
        Buffer::filled(at, n, init[0])?,
        Buffer::filled(at, n, init[1])?,
        Buffer::filled(at, n, init[2])?,
    );
    let mut partial = Buffer::<T>::zeroed(at, parts)?;
    let (copy, mul, add, triad, dot) = (
        stream::copy(precision),
        stream::mul(precision),
        stream::add(precision),
        stream::triad(precision),
        stream::dot(precision),
    );
    let on = |k| Codelet::new(k, &[at]);
    on(&copy)?.call(
        &mut [Arg::buf(&a), Arg::buf_mut(&mut c), Arg::u32(n as u32)],
        Launch::d1(n),
    )?;
    on(&mul)?.call(
        &mut [
            scalar(precision),
            Arg::buf(&c),
            Arg::buf_mut(&mut b),
            Arg::u32(n as u32),
        ],
        Launch::d1(n),
    )?;
    on(&add)?.call(
        &mut [
            Arg::buf(&a),
            Arg::buf(&b),
            Arg::buf_mut(&mut c),
            Arg::u32(n as u32),
        ],
        Launch::d1(n),
    )?;
    on(&triad)?.call(
        &mut [
            scalar(precision),
            Arg::buf(&b),
            Arg::buf(&c),
            Arg::buf_mut(&mut a),
            Arg::u32(n as u32),
        ],
        Launch::d1(n),
    )?;
    on(&dot)?.call(
        &mut [
            Arg::buf(&a),
            Arg::buf(&b),
            Arg::buf_mut(&mut partial),
            Arg::u32(n as u32),
            Arg::u32(parts as u32),
        ],
        Launch::d1(parts),
    )?;
    let sum = partial.to_vec()?.into_iter().map(Into::into).sum();
    Ok((a.to_vec()?, b.to_vec()?, c.to_vec()?, sum))
}

/// BabelStream's scalar, 0.4, in the kernels' precision.
fn scalar<'x>(precision: Precision) -> Arg<'x> {
    match precision {
        Precision::F32 => Arg::f32(0.4),
        Precision::F64 => Arg::f64(0.4),
    }
}

/// BabelStream's starting values and scalar, and what one iteration makes of them.
fn check<T: Into<f64> + Copy>(at: Location, what: &str, got: Outcome<T>) {
    let (a0, b0, scalar) = (0.1f64, 0.2, 0.4);
    let c = a0;
    let b = scalar * c;
    let c = a0 + b;
    let a = b + scalar * c;
    let (ga, gb, gc, dot) = got;
    let n = ga.len() as f64;
    for (name, values, want) in [("a", &ga, a), ("b", &gb, b), ("c", &gc, c)] {
        for (i, v) in values.iter().enumerate() {
            let v: f64 = (*v).into();
            assert!(
                (v - want).abs() < 1e-6,
                "{what} at {at}: {name}[{i}] = {v}, want {want}"
            );
        }
    }
    let want = a * b * n;
    assert!(
        (dot - want).abs() / want < 1e-4,
        "{what} at {at}: dot = {dot}, want {want} (b0 was {b0})"
    );
}

#[test]
fn every_kernel_at_every_location_in_f32() {
    let _serial = common::serial();
    // Not a multiple of any work-group size, and more elements than partial sums.
    let (n, parts) = (10_007, 300);
    for at in common::required_locations() {
        eprintln!("stream f32 at {at}");
        let got = iteration(at, Precision::F32, n, [0.1f32, 0.2, 0.0], parts)
            .unwrap_or_else(|e| panic!("stream f32 at {at}: {e}"));
        check(at, "f32", got);
    }
}

#[test]
fn every_kernel_in_f64_where_the_location_has_f64() {
    let _serial = common::serial();
    let (n, parts) = (10_007, 300);
    for at in common::required_locations() {
        let result = iteration(at, Precision::F64, n, [0.1f64, 0.2, 0.0], parts);
        match (at.technology(), result) {
            (locus::Technology::WebGpu, Err(e)) => {
                eprintln!("stream f64 at {at}: refused, as it must be: {e}");
                assert!(e.to_string().contains("WGSL"), "{e}");
            }
            (locus::Technology::WebGpu, Ok(_)) => panic!("{at} ran f64 kernels"),
            (_, Ok(got)) => check(at, "f64", got),
            (_, Err(e)) => panic!("stream f64 at {at}: {e}"),
        }
    }
}

#[test]
fn a_count_beyond_the_buffers_is_refused_before_anything_launches() {
    let _serial = common::serial();
    let dot = stream::dot(Precision::F32);
    for at in common::required_locations() {
        let a = Buffer::filled(at, 100, 1.0f32).unwrap();
        let b = Buffer::filled(at, 100, 1.0f32).unwrap();
        let mut partial = Buffer::filled(at, 10, 7.0f32).unwrap();
        let codelet = Codelet::new(&dot, &[at]).unwrap();
        for (n, parts) in [(101u32, 10u32), (100, 11)] {
            let error = codelet
                .call(
                    &mut [
                        Arg::buf(&a),
                        Arg::buf(&b),
                        Arg::buf_mut(&mut partial),
                        Arg::u32(n),
                        Arg::u32(parts),
                    ],
                    Launch::d1(10),
                )
                .expect_err("a count beyond the buffers");
            let text = error.to_string();
            assert!(text.contains("nothing was launched"), "{at}: {text}");
        }
        assert_eq!(partial.to_vec().unwrap(), vec![7.0; 10], "{at}");
    }
}
