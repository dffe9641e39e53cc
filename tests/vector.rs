//! HAMR's vector operations and converting copies on `Buffer`, written once and run at
//! every location (and, for copies, from every location to every other), plus a
//! property test of random sequences against a `Vec` model.

#[macro_use]
mod common;

use locus::core::element::CastTo;
use locus::half::{bf16, f16};
use locus::{Buffer, Element, Error, Location, RouteKind};
use proptest::prelude::*;

/// `as` on the host, the reference for every converting copy.
fn reference<S: Element + CastTo<D>, D: Element>(data: &[S]) -> Vec<D> {
    data.iter().map(|&s| s.cast_to()).collect()
}

/// The converted elements as bytes (NaNs compare by their bits).
fn bytes<T: Element>(data: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(data).to_vec()
}

/// Converts `data` made at `from` into a buffer of `D` at `to`, three ways (new
/// buffer, a range into an existing buffer, an append), and checks each against `as`.
fn converts<S: Element + CastTo<D>, D: Element + CastTo<S>>(
    from: Location,
    to: Location,
    data: &[S],
) {
    let what = format!("{} -> {} ({from} -> {to})", S::DTYPE, D::DTYPE);
    let src = Buffer::from_slice(from, data).unwrap();
    let want: Vec<D> = reference(data);
    let made = Buffer::<D>::converted_at(to, &src).unwrap();
    assert_eq!(made.location(), to);
    // One device that runs OpenCL C converts with a generated kernel (no host pass), and
    // so does a WebGPU device the host cannot map, for the 32- and 64-bit types (WGSL).
    let device = locus::registry().device(to).unwrap();
    let types = [S::DTYPE, D::DTYPE];
    let on_device = from == to
        && match to.technology() {
            locus::Technology::OpenCl | locus::Technology::Sycl => {
                let half = |t: &locus::DType| matches!(t, locus::DType::F16 | locus::DType::BF16);
                let f64_missing =
                    types.contains(&locus::DType::F64) && device.lacks_f64().is_some();
                !types.iter().any(half) && !f64_missing
            }
            locus::Technology::WebGpu => {
                // As `LOCUS_WEBGPU_CONVERT` decides (the default: staged on a GPU adapter).
                let staged = device.host_access_default() == locus::HostAccess::None;
                let kernel = match std::env::var("LOCUS_WEBGPU_CONVERT").as_deref() {
                    Ok("device") => true,
                    Ok("host") => false,
                    _ => staged && device.info().kind != "cpu",
                };
                kernel && types.iter().all(|t| t.size() >= 4)
            }
            _ => false,
        };
    if on_device && !data.is_empty() {
        assert_eq!(
            made.stats().calls_of(RouteKind::Direct),
            1,
            "{what}: converted on the device"
        );
    }
    assert_eq!(
        bytes(&made.to_vec().unwrap()),
        bytes(&want),
        "{what}: converted_at"
    );
    let n = data.len();
    let mut dst = Buffer::<D>::zeroed(to, n + 4).unwrap();
    dst.copy_from_converted(2, &src, 1..n).unwrap();
    let mut expect = vec![D::zeroed(); n + 4];
    expect[2..n + 1].copy_from_slice(&want[1..]);
    assert_eq!(
        bytes(&dst.to_vec().unwrap()),
        bytes(&expect),
        "{what}: copy_from_converted"
    );
    dst.append_converted(&src).unwrap();
    expect.extend_from_slice(&want);
    assert_eq!(
        bytes(&dst.to_vec().unwrap()),
        bytes(&expect),
        "{what}: append_converted"
    );
    let mut back = vec![S::zeroed(); n];
    made.get_converted(0, &mut back).unwrap();
    assert_eq!(
        bytes(&back),
        bytes(&reference::<D, S>(&want)),
        "{what}: get_converted"
    );
}

fn floats() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.5,
        -2.5,
        0.1,
        1e10,
        -1e10,
        3e38,
        1e300,
        -1e300,
        65504.0,
        65520.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        2.5e-8,
        255.5,
        -129.0,
        4294967296.0,
        9.3e18,
        1.9e19,
        // f32 subnormals (exact, and rounded), the least normal, ties to even, and the
        // edge where f64 -> f32 rounds up to infinity.
        1e-40,
        -3e-45,
        7e-46,
        1.1754942e-38,
        16777217.0,
        3.4028235677973366e38,
        3.4028235e38,
    ];
    v.extend((0..300).map(|i| (i as f64 - 150.0) * 1234.567));
    v
}

fn ints() -> Vec<i64> {
    let mut v = vec![
        0,
        1,
        -1,
        127,
        128,
        255,
        256,
        300,
        -129,
        32767,
        32768,
        65535,
        65536,
        i32::MAX as i64,
        i32::MIN as i64,
        u32::MAX as i64,
        i64::MAX,
        i64::MIN,
        (1 << 53) + 1,
        16777217,
    ];
    v.extend((0..300).map(|i| (i - 150) * 7_777_777_777));
    v
}

pub fn conversions_to_every_location(l: Location) {
    let f = floats();
    let i = ints();
    let f32s: Vec<f32> = reference(&f);
    let u64s: Vec<u64> = reference(&i);
    let halves: Vec<f16> = reference(&f);
    for to in locus::available() {
        converts::<f32, f64>(l, to, &f32s);
        converts::<f64, f32>(l, to, &f);
        converts::<f64, i32>(l, to, &f);
        converts::<f32, u8>(l, to, &f32s);
        converts::<i64, i32>(l, to, &i);
        converts::<i64, f32>(l, to, &i);
        converts::<u64, i16>(l, to, &u64s);
        converts::<f64, f16>(l, to, &f);
        converts::<f16, bf16>(l, to, &halves);
        converts::<i64, bf16>(l, to, &i);
        converts::<f32, f32>(l, to, &f32s);
    }
}

/// `Memory::convert_to`, the untyped form bindings use: from this location to every
/// location, at offsets, checked against `as`; out of range is an error and nothing is
/// written.
pub fn memory_convert_to(l: Location) {
    let data: Vec<f64> = floats();
    let want: Vec<i32> = reference(&data);
    let n = data.len();
    let src = locus::Memory::on(locus::registry().device(l).unwrap(), (n + 2) * 8).unwrap();
    src.write(16, bytemuck::cast_slice(&data)).unwrap();
    for to in locus::available() {
        let dst = locus::Memory::on(locus::registry().device(to).unwrap(), (n + 1) * 4).unwrap();
        dst.fill(0..dst.len(), &[0xab]).unwrap();
        src.convert_to(16, locus::DType::F64, &dst, 4, locus::DType::I32, n)
            .unwrap();
        let mut got = vec![0u8; (n + 1) * 4];
        dst.read(0, &mut got).unwrap();
        assert_eq!(
            &got[..4],
            &[0xab; 4],
            "{l} -> {to}: before the range untouched"
        );
        assert_eq!(
            &got[4..],
            bytes(&want),
            "{l} -> {to}: converted as `as` does"
        );
        let err = src
            .convert_to(16, locus::DType::F64, &dst, 8, locus::DType::I32, n)
            .unwrap_err();
        assert!(
            err.to_string().contains("out of range"),
            "{l} -> {to}: {err}"
        );
        let mut after = vec![0u8; (n + 1) * 4];
        dst.read(0, &mut after).unwrap();
        assert_eq!(after, got, "{l} -> {to}: nothing written on error");
    }
}

/// Every pair of the twelve types, at this location.
pub fn every_pair_of_types(l: Location) {
    let f = floats();
    macro_rules! from {
        ($($s:ty),*) => {$(
            let data: Vec<$s> = reference(&f);
            to!(data, $s; f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64, u64);
        )*};
    }
    macro_rules! to {
        ($data:ident, $s:ty; $($d:ty),*) => {$(converts::<$s, $d>(l, l, &$data);)*};
    }
    from!(f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64, u64);
}

pub fn set_and_get_converted(l: Location) {
    let mut b = Buffer::<i16>::zeroed(l, 6).unwrap();
    b.set_converted(1, &[1.9f64, -2.9, 1e9, f64::NAN]).unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![0, 1, -2, i16::MAX, 0, 0]);
    let mut out = [0f32; 3];
    b.get_converted(1, &mut out).unwrap();
    assert_eq!(out, [1.0, -2.0, 32767.0]);
    let mut a = Buffer::<u8>::filled(l, 2, 9).unwrap();
    a.assign_converted(&b).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![0, 1, 254, 255, 0, 0]);
    // Out of range: an error naming the location, and nothing written.
    let err = b.set_converted(5, &[1u8, 2]).unwrap_err();
    assert!(matches!(err, Error::OutOfRange { .. }), "{err}");
    assert!(err.to_string().contains(&l.to_string()), "{err}");
    assert!(b.get_converted(4, &mut [0u64; 3]).is_err());
    assert_eq!(b.to_vec().unwrap(), vec![0, 1, -2, i16::MAX, 0, 0]);
}

pub fn append_grows_amortised(l: Location) {
    let mut b = Buffer::<u32>::zeroed(l, 0).unwrap();
    let mut model = Vec::new();
    let mut capacities = Vec::new();
    for i in 0..40u32 {
        b.append_slice(&[i, i * 10]).unwrap();
        model.extend([i, i * 10]);
        capacities.push(b.capacity());
        assert_eq!(b.len(), model.len());
    }
    assert_eq!(b.to_vec().unwrap(), model);
    capacities.dedup();
    assert_eq!(
        capacities,
        vec![8, 16, 32, 64, 128],
        "capacity doubles from 8"
    );
    // Within capacity the home allocation stays and nothing existing is copied.
    let home = b.memory_at(l).unwrap();
    let copies = b.stats().copies();
    b.append_slice(&[7]).unwrap();
    assert!(std::sync::Arc::ptr_eq(&home, &b.memory_at(l).unwrap()));
    assert_eq!(
        b.stats().copies(),
        copies + u64::from(!l.is_host()),
        "one write of the new element"
    );
}

pub fn append_and_assign_from_every_location(l: Location) {
    for from in locus::available() {
        let src = Buffer::from_slice(from, &[1u32, 2, 3, 4, 5]).unwrap();
        let mut b = Buffer::from_slice(l, &[9u32]).unwrap();
        b.append(&src).unwrap();
        b.append_range(&src, 3..5).unwrap();
        assert_eq!(
            b.to_vec().unwrap(),
            vec![9, 1, 2, 3, 4, 5, 4, 5],
            "{from} -> {l}"
        );
        b.assign_range(&src, 1..3).unwrap();
        assert_eq!(b.to_vec().unwrap(), vec![2, 3], "{from} -> {l}");
        assert_eq!(
            b.capacity(),
            8,
            "assign within capacity keeps the allocation"
        );
        let long: Vec<u32> = (0..100).collect();
        b.assign(&Buffer::from_slice(from, &long).unwrap()).unwrap();
        assert_eq!(b.to_vec().unwrap(), long);
        assert_eq!(b.capacity(), 100);
        assert_eq!(b.location(), l);
        assert!(b.append_range(&src, 4..9).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 3..2;
        assert!(b.assign_range(&src, reversed).is_err());
        assert_eq!(b.to_vec().unwrap(), long, "refused calls change nothing");
    }
}

pub fn reserve_set_get_swap(l: Location) {
    let mut b = Buffer::from_slice(l, &[1.0f64, 2.0, 3.0]).unwrap();
    b.reserve(50).unwrap();
    assert_eq!((b.len(), b.capacity()), (3, 50));
    b.reserve(10).unwrap();
    assert_eq!(b.capacity(), 50, "reserve never shrinks");
    b.set(1, &[20.0, 30.0]).unwrap();
    let mut out = [0.0; 2];
    b.get(0, &mut out).unwrap();
    assert_eq!(out, [1.0, 20.0]);
    assert!(matches!(
        b.set(2, &[1.0, 2.0]),
        Err(Error::OutOfRange { .. })
    ));
    assert!(b.get(3, &mut [0.0]).is_err());
    b.assign_slice(&[5.0; 4]).unwrap();
    let mut other = Buffer::from_slice(Location::Host, &[8.0f64]).unwrap();
    b.swap(&mut other);
    assert_eq!(
        (b.to_vec().unwrap(), b.location()),
        (vec![8.0], Location::Host)
    );
    assert_eq!(
        (other.to_vec().unwrap(), other.location()),
        (vec![5.0; 4], l)
    );
    // A guard shows the elements, not the capacity behind them.
    other.reserve(64).unwrap();
    if let Ok(slice) = other.access(Location::Host).unwrap().as_slice() {
        assert_eq!(slice, &[5.0; 4]);
    }
}

pub fn resize_keeps_replicas_coherent(l: Location) {
    let data: Vec<u32> = (0..64).collect();
    let mut b = Buffer::from_slice(l, &data).unwrap();
    for at in locus::available() {
        drop(b.access(at).unwrap());
    }
    let copies = b.stats().copies();
    b.resize(40).unwrap();
    assert_eq!(b.stats().copies(), copies, "shrinking copies nothing");
    for at in locus::available() {
        assert_eq!(
            common::contents(&b, at),
            data[..40],
            "at {at} after shrinking"
        );
    }
    assert!(
        b.replicas().iter().all(|(_, valid)| *valid),
        "every replica stays current"
    );
    b.resize_with(70, 7).unwrap();
    let mut model = data[..40].to_vec();
    model.resize(70, 7);
    for at in locus::available() {
        assert_eq!(common::contents(&b, at), model, "at {at} after growing");
    }
}

pub fn counters_count_every_move(l: Location) {
    let before = locus::transfer::global_stats().totals();
    let b = Buffer::from_slice(l, &[1.0f32; 1000]).unwrap();
    let c = Buffer::<f64>::converted_from(&b).unwrap();
    c.to_vec().unwrap();
    let own = b.stats().bytes_of(RouteKind::InPlace)
        + b.stats().bytes_moved()
        + c.stats().bytes_of(RouteKind::InPlace)
        + c.stats().bytes_moved();
    assert_eq!(
        own,
        4000 + 8000 + 8000,
        "write 4000 B, convert into 8000 B, read 8000 B"
    );
    let after = locus::transfer::global_stats().totals();
    let global = |t: locus::TransferTotals| t.bytes_moved() + t.bytes_of(RouteKind::InPlace);
    assert_eq!(
        global(after) - global(before),
        own,
        "the process counters saw the same"
    );
}

pub fn scalars_and_memory_of_any_kind(l: Location) {
    let mut s = locus::Scalar::new(l, 7u64).unwrap();
    assert_eq!((s.value().unwrap(), s.location()), (7, l));
    for v in 0..50u64 {
        s.set(v * 3).unwrap();
    }
    assert_eq!(s.value().unwrap(), 147, "the last set wins");
    assert_eq!(s.buffer().to_vec().unwrap(), vec![147]);
    let resource = locus::resource::default_for(l).unwrap();
    let pool: std::sync::Arc<dyn locus::resource::MemoryResource> =
        std::sync::Arc::new(locus::resource::Pool::new(resource, 1 << 16, 1 << 20));
    let mut u = Buffer::<u32>::uninit_in(&pool, 100).unwrap();
    assert_eq!((u.len(), u.location()), (100, l));
    u.set(0, &(0..100).collect::<Vec<u32>>()).unwrap();
    assert_eq!(u.to_vec().unwrap(), (0..100).collect::<Vec<u32>>());
    let mut scalar = locus::Scalar::<f32>::uninit_in(&pool).unwrap();
    scalar.set(2.5).unwrap();
    assert_eq!(scalar.value().unwrap(), 2.5);
    let m = locus::Memory::new(l, 400).unwrap();
    m.write(0, bytemuck::cast_slice(&[9u32; 100])).unwrap();
    let b = Buffer::<u32>::from_memory(m).unwrap();
    assert_eq!(b.to_vec().unwrap(), vec![9; 100]);
    let err = Buffer::<u32>::from_memory(locus::Memory::new(l, 402).unwrap()).unwrap_err();
    assert!(err.to_string().contains(&l.to_string()), "{err}");
}

pub fn memory_kinds_on_buffers(l: Location) {
    use locus::MemoryKind;
    let kinds = locus::registry().device(l).unwrap().memory_kinds();
    assert_eq!(kinds[0], MemoryKind::Default);
    let data: Vec<u32> = (0..100).collect();
    for kind in MemoryKind::ALL {
        match Buffer::<u32>::zeroed_kind(l, kind, 100) {
            Ok(mut b) => {
                assert!(kinds.contains(&kind), "{l}: {kind} made but not offered");
                assert_eq!((b.memory_kind(), b.to_vec().unwrap()), (kind, vec![0; 100]));
                b.set(0, &data).unwrap();
                // Accessibility follows the allocation's kind.
                let home = b.memory_at(l).unwrap();
                let host_reaches = home.is_accessible_from(Location::Host);
                if matches!(
                    kind,
                    MemoryKind::UsmShared
                        | MemoryKind::UsmHost
                        | MemoryKind::PinnedHost
                        | MemoryKind::HostVisible
                        | MemoryKind::SvmCoarse
                        | MemoryKind::SvmFine
                ) {
                    assert!(host_reaches, "{l}: the host reaches {kind} memory in place");
                }
                assert_eq!(
                    b.access(Location::Host).unwrap().is_in_place(),
                    host_reaches
                );
                // Growing past the capacity stays in the kind.
                b.append_slice(&[7; 200]).unwrap();
                assert_eq!(b.memory_kind(), kind);
                let mut want = data.clone();
                want.extend([7; 200]);
                assert_eq!(b.to_vec().unwrap(), want, "{l} {kind}");
                // A kernel at the location uses the kind's memory in place.
                use locus::codelet::{kernels, Arg, Codelet, Launch};
                let n = 300;
                let x = Buffer::from_vec((0..n).map(|i| i as f32).collect());
                let mut y = Buffer::<f32>::zeroed_kind(l, kind, n).unwrap();
                y.set(0, &vec![1.0; n]).unwrap();
                let saxpy = kernels::saxpy();
                let report = Codelet::new(&saxpy, &[l])
                    .unwrap()
                    .call(
                        &mut [
                            Arg::f32(2.0),
                            Arg::buf(&x),
                            Arg::buf_mut(&mut y),
                            Arg::u32(n as u32),
                        ],
                        Launch::d1(n),
                    )
                    .unwrap();
                assert_eq!(report.target, l);
                let got = y.to_vec().unwrap();
                assert!(
                    got.iter()
                        .enumerate()
                        .all(|(i, &v)| v == 2.0 * i as f32 + 1.0),
                    "{l} {kind}: saxpy on the kind's memory"
                );
                assert_eq!(y.memory_kind(), kind);
            }
            Err(e) => {
                assert!(
                    !kinds.contains(&kind),
                    "{l}: {kind} offered but refused: {e}"
                );
                let text = e.to_string();
                assert!(
                    text.contains(&l.to_string()) && text.contains("offers"),
                    "{text}"
                );
            }
        }
    }
}

macro_rules! suite {
    ($(#[$m:meta])*) => {
        $(#[$m])* #[test] fn conversions_to_every_location() { run(super::conversions_to_every_location) }
        $(#[$m])* #[test] fn memory_convert_to() { run(super::memory_convert_to) }
        $(#[$m])* #[test] fn every_pair_of_types() { run(super::every_pair_of_types) }
        $(#[$m])* #[test] fn set_and_get_converted() { run(super::set_and_get_converted) }
        $(#[$m])* #[test] fn append_grows_amortised() { run(super::append_grows_amortised) }
        $(#[$m])* #[test] fn append_and_assign_from_every_location() { run(super::append_and_assign_from_every_location) }
        $(#[$m])* #[test] fn reserve_set_get_swap() { run(super::reserve_set_get_swap) }
        $(#[$m])* #[test] fn resize_keeps_replicas_coherent() { run(super::resize_keeps_replicas_coherent) }
        $(#[$m])* #[test] fn counters_count_every_move() { run(super::counters_count_every_move) }
        $(#[$m])* #[test] fn scalars_and_memory_of_any_kind() { run(super::scalars_and_memory_of_any_kind) }
        $(#[$m])* #[test] fn memory_kinds_on_buffers() { run(super::memory_kinds_on_buffers) }
    };
}

at_every_location!();

/// Rust's `as`, the documented semantics, on values where it matters.
#[test]
fn conversions_follow_as() {
    let b = Buffer::from_slice(Location::Host, &[300i32, -1, 65536]).unwrap();
    assert_eq!(
        Buffer::<u8>::converted_from(&b).unwrap().to_vec().unwrap(),
        vec![44, 255, 0]
    );
    let f = Buffer::from_slice(Location::Host, &[f32::NAN, 1e10, -1e10, 2.9, -2.9]).unwrap();
    assert_eq!(
        Buffer::<i32>::converted_from(&f).unwrap().to_vec().unwrap(),
        vec![0, i32::MAX, i32::MIN, 2, -2]
    );
    let u = Buffer::from_slice(Location::Host, &[u64::MAX]).unwrap();
    assert_eq!(
        Buffer::<f32>::converted_from(&u).unwrap().to_vec().unwrap(),
        vec![1.8446744e19]
    );
    let h = Buffer::from_slice(Location::Host, &[70000.0f32, 1.0 / 3.0]).unwrap();
    assert_eq!(
        Buffer::<f16>::converted_from(&h).unwrap().to_vec().unwrap(),
        vec![f16::INFINITY, f16::from_f32(1.0 / 3.0)]
    );
}

/// One step of the model test.
#[derive(Debug, Clone)]
enum Op {
    Append(usize, Vec<u32>),
    AppendConverted(usize, Vec<f32>),
    Assign(usize, Vec<u32>),
    Resize(usize),
    Set(usize, Vec<u32>),
    Access(usize),
    Write(usize, usize, u32),
    Reserve(usize),
    Swap,
}

fn op() -> impl Strategy<Value = Op> {
    let small = || prop::collection::vec(any::<u32>(), 0..40);
    prop_oneof![
        (any::<usize>(), small()).prop_map(|(a, v)| Op::Append(a, v)),
        (any::<usize>(), prop::collection::vec(-1e3f32..1e5, 0..40))
            .prop_map(|(a, v)| Op::AppendConverted(a, v)),
        (any::<usize>(), small()).prop_map(|(a, v)| Op::Assign(a, v)),
        (0usize..120).prop_map(Op::Resize),
        (0usize..100, small()).prop_map(|(s, v)| Op::Set(s, v)),
        any::<usize>().prop_map(Op::Access),
        (any::<usize>(), any::<usize>(), any::<u32>()).prop_map(|(a, i, v)| Op::Write(a, i, v)),
        (0usize..200).prop_map(Op::Reserve),
        Just(Op::Swap),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random vector operations and conversions at random locations end where the same
    /// operations on a `Vec` end.
    #[test]
    fn vector_operations_behave_like_vec(home in any::<usize>(), ops in prop::collection::vec(op(), 1..30)) {
        let _serial = common::serial();
        let all = locus::available();
        let at = |i: usize| all[i % all.len()];
        let mut b = Buffer::<u32>::zeroed(at(home), 0).unwrap();
        let mut other = Buffer::<u32>::from_slice(at(home + 1), &[1, 2, 3]).unwrap();
        let (mut model, mut other_model) = (Vec::<u32>::new(), vec![1u32, 2, 3]);
        for op in ops {
            match op {
                Op::Append(a, v) => {
                    b.append(&Buffer::from_slice(at(a), &v).unwrap()).unwrap();
                    model.extend(&v);
                }
                Op::AppendConverted(a, v) => {
                    b.append_converted(&Buffer::from_slice(at(a), &v).unwrap()).unwrap();
                    model.extend(v.iter().map(|&x| x as u32));
                }
                Op::Assign(a, v) => {
                    b.assign(&Buffer::from_slice(at(a), &v).unwrap()).unwrap();
                    model = v;
                }
                Op::Resize(n) => {
                    b.resize(n).unwrap();
                    model.resize(n, 0);
                }
                Op::Set(s, v) => {
                    let fits = s + v.len() <= model.len();
                    prop_assert_eq!(b.set(s, &v).is_ok(), fits);
                    if fits {
                        model[s..s + v.len()].copy_from_slice(&v);
                    }
                }
                Op::Access(a) => {
                    prop_assert_eq!(common::contents(&b, at(a)), model.clone());
                }
                Op::Write(a, i, v) => {
                    if !model.is_empty() {
                        let i = i % model.len();
                        b.set(i, &[v]).unwrap();
                        model[i] = v;
                        drop(b.access_mut(at(a)).unwrap());
                    }
                }
                Op::Reserve(n) => {
                    b.reserve(n).unwrap();
                    prop_assert!(b.capacity() >= n.max(model.len()));
                }
                Op::Swap => {
                    b.swap(&mut other);
                    std::mem::swap(&mut model, &mut other_model);
                }
            }
            prop_assert_eq!(b.len(), model.len());
            prop_assert!(b.capacity() >= b.len());
        }
        prop_assert_eq!(b.to_vec().unwrap(), model);
        prop_assert_eq!(other.to_vec().unwrap(), other_model);
    }
}
