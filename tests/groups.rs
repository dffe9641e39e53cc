//! OpenHMPP beyond one codelet, on every location: groups with resident data and
//! `allocate` / `release`, `map` / `mapbyname`, `cond` on a group, regions, and fallback
//! with resident data (sections, `noupdate` / `const`, asynchronous calls and misuse:
//! `tests/group_sections.rs`). Transfer counters prove what moved; results are checked
//! against the host reference.

#[macro_use]
mod common;

use common::groups::{data, elementwise, moved};

use locus::codelet::{kernels, Arg, Codelet, DType, Group, Intent, Kernel, Launch, Region};
use locus::{Buffer, Location};

/// A group-resident Jacobi: two grids mapped crosswise over two codelet labels of one
/// kernel, 20 steps at the target, nothing moved until the one delegated store.
fn a_group_keeps_its_data_resident(target: Location) {
    let (nx, ny) = (40, 24);
    let jacobi = kernels::jacobi();
    let mut group = Group::new("heat", &[target])
        .unwrap()
        .codelet("even", &jacobi)
        .unwrap()
        .codelet("odd", &jacobi)
        .unwrap()
        .map::<f32>("grid", nx * ny, &[("even", "src"), ("odd", "dst")])
        .unwrap()
        .map::<f32>("next", nx * ny, &[("even", "dst"), ("odd", "src")])
        .unwrap();
    assert!(group.target().is_none(), "chosen at allocate");
    assert_eq!(group.allocate().unwrap(), target);
    assert_eq!(group.target(), Some(target));
    let init: Vec<f32> = (0..nx * ny)
        .map(|k| if k % nx == 0 { 100.0 } else { 0.0 })
        .collect();
    group.var_mut::<f32>("grid").unwrap().set(0, &init).unwrap();
    let before = (
        moved(group.var::<f32>("grid").unwrap()),
        moved(group.var::<f32>("next").unwrap()),
    );
    for step in 0..20 {
        let label = if step % 2 == 0 { "even" } else { "odd" };
        let report = group
            .call(
                label,
                &mut [Arg::u32(nx as u32), Arg::u32(ny as u32)],
                Launch::d2(nx, ny),
            )
            .unwrap();
        assert_eq!(report.target, target);
        assert_eq!(report.moved.bytes_moved(), 0, "step {step} moved nothing");
    }
    let grid = group.var::<f32>("grid").unwrap();
    assert_eq!(
        (moved(grid), moved(group.var::<f32>("next").unwrap())),
        before,
        "resident grids never moved between calls"
    );
    group
        .delegated_store_var("grid", None, Location::Host)
        .unwrap();
    let stored = moved(group.var::<f32>("grid").unwrap()) - before.0;
    let on_host = target.is_host()
        || group
            .var::<f32>("grid")
            .unwrap()
            .replicas()
            .iter()
            .all(|(l, _)| *l == target);
    assert!(
        stored == (nx * ny * 4) as u64 || (stored == 0 && on_host),
        "one download of the grid, or none where the host reads it in place: {stored}"
    );
    let (mut a, mut b) = (init.clone(), vec![0f32; nx * ny]);
    for _ in 0..20 {
        kernels::jacobi_reference(&a, &mut b, nx, ny);
        std::mem::swap(&mut a, &mut b);
    }
    let got = group.var::<f32>("grid").unwrap().to_vec().unwrap();
    for (i, (x, y)) in got.iter().zip(&a).enumerate() {
        assert!((x - y).abs() <= 1e-4 * y.abs().max(1.0), "[{i}] {x} vs {y}");
    }
    group.release().unwrap();
    assert!(group.var::<f32>("grid").is_err(), "released");
    assert!(group
        .call("even", &mut [Arg::u32(1), Arg::u32(1)], Launch::d2(1, 1))
        .unwrap_err()
        .to_string()
        .contains("allocate"));
    // Allocated again: fresh (zeroed) variables.
    group.allocate().unwrap();
    assert_eq!(
        group.var::<f32>("grid").unwrap().to_vec().unwrap(),
        vec![0.0; nx * ny]
    );
}

/// A group of `scale` and `shift` (kernels of [`elementwise`]) over one resident `x`
/// holding `init`, allocated at the first of `targets`.
fn affine<'k>(
    name: &str,
    targets: &[Location],
    scale: &'k Kernel,
    shift: &'k Kernel,
    init: &[f32],
) -> Group<'k> {
    let mut group = Group::new(name, targets)
        .unwrap()
        .codelet("scale", scale)
        .unwrap()
        .codelet("shift", shift)
        .unwrap()
        .resident::<f32>("x", init.len())
        .unwrap();
    group.allocate().unwrap();
    group.var_mut::<f32>("x").unwrap().set(0, init).unwrap();
    group
}

/// OpenHMPP's `resident`: one variable every codelet of the group uses by name, without
/// passing it; written on the host, it is uploaded once, then stays.
fn a_resident_is_shared_by_two_codelets(target: Location) {
    let n = 1000;
    let (scale, shift) = (elementwise("g_scale", '*'), elementwise("g_shift", '+'));
    let mut group = affine("affine", &[target], &scale, &shift, &data(n, 1.0));
    let mut reference = data(n, 1.0);
    let after_set = moved(group.var::<f32>("x").unwrap());
    for round in 0..3 {
        let s = 1.5 + round as f32;
        group
            .call(
                "scale",
                &mut [Arg::f32(s), Arg::u32(n as u32)],
                Launch::d1(n),
            )
            .unwrap();
        group
            .call(
                "shift",
                &mut [Arg::f32(-s), Arg::u32(n as u32)],
                Launch::d1(n),
            )
            .unwrap();
        reference.iter_mut().for_each(|v| *v = *v * s - s);
    }
    assert_eq!(
        moved(group.var::<f32>("x").unwrap()),
        after_set,
        "six calls, the resident never moved"
    );
    assert_eq!(group.var::<f32>("x").unwrap().to_vec().unwrap(), reference);
    // Written from the host (into the copy where it is current): the calls see it.
    group
        .var_mut::<f32>("x")
        .unwrap()
        .set(0, &vec![2.0; n])
        .unwrap();
    for _ in 0..2 {
        group
            .call(
                "shift",
                &mut [Arg::f32(1.0), Arg::u32(n as u32)],
                Launch::d1(n),
            )
            .unwrap();
    }
    assert_eq!(
        group.var::<f32>("x").unwrap().to_vec().unwrap(),
        vec![4.0; n]
    );
}

/// `map` (by position: an output of one codelet is an input of the next) and
/// `mapbyname` share one device copy: nothing moves between the calls.
fn map_and_map_by_name_share_one_device_copy(target: Location) {
    let n = 777;
    let (add, saxpy) = (kernels::vec_add(), kernels::saxpy());
    let mut group = Group::new("chain", &[target])
        .unwrap()
        .codelet("add", &add)
        .unwrap()
        .codelet("axpy", &saxpy)
        .unwrap()
        .map::<f32>("sum", n, &[("add", "c"), ("axpy", "x")])
        .unwrap();
    group.allocate().unwrap();
    let a = Buffer::from_slice(Location::Host, &data(n, 1.0)).unwrap();
    let b = Buffer::from_slice(target, &data(n, 2.0)).unwrap();
    let mut y = Buffer::from_slice(target, &data(n, 3.0)).unwrap();
    let report = group
        .call(
            "add",
            &mut [Arg::buf(&a), Arg::buf(&b), Arg::u32(n as u32)],
            Launch::d1(n),
        )
        .unwrap();
    assert_eq!(report.target, target);
    let report = group
        .call(
            "axpy",
            &mut [Arg::f32(2.0), Arg::buf_mut(&mut y), Arg::u32(n as u32)],
            Launch::d1(n),
        )
        .unwrap();
    assert_eq!(report.moved.bytes_moved(), 0, "y and sum were at {target}");
    assert_eq!(
        moved(group.var::<f32>("sum").unwrap()),
        0,
        "written by add, read by axpy, never moved"
    );
    let want: Vec<f32> = (0..n)
        .map(|i| 2.0 * (data(n, 1.0)[i] + data(n, 2.0)[i]) + data(n, 3.0)[i])
        .collect();
    assert_eq!(y.to_vec().unwrap(), want);

    // mapbyname: every parameter named `x` is one copy.
    let (scale, shift) = (elementwise("m_scale", '*'), elementwise("m_shift", '+'));
    let mut group = Group::new("byname", &[target])
        .unwrap()
        .codelet("scale", &scale)
        .unwrap()
        .codelet("shift", &shift)
        .unwrap()
        .map_by_name::<f32>("x", n)
        .unwrap();
    group.allocate().unwrap();
    group
        .call(
            "shift",
            &mut [Arg::f32(3.0), Arg::u32(n as u32)],
            Launch::d1(n),
        )
        .unwrap();
    group
        .call(
            "scale",
            &mut [Arg::f32(2.0), Arg::u32(n as u32)],
            Launch::d1(n),
        )
        .unwrap();
    assert_eq!(moved(group.var::<f32>("x").unwrap()), 0);
    assert_eq!(
        group.var::<f32>("x").unwrap().to_vec().unwrap(),
        vec![6.0; n]
    );
}

/// `cond` on a group: the condition flips inside a loop; the resident follows the calls
/// to the host and back, and the result is the host reference's either way.
fn cond_on_a_group_keeps_the_resident_coherent(target: Location) {
    let n = 500;
    let (scale, shift) = (elementwise("c_scale", '*'), elementwise("c_shift", '+'));
    let mut group = affine(
        "cond",
        &[target, Location::Host],
        &scale,
        &shift,
        &data(n, 2.0),
    );
    let mut reference = data(n, 2.0);
    for step in 0..8u32 {
        let offload = step % 3 != 2;
        let (label, s) = if step % 2 == 0 {
            ("scale", 0.5)
        } else {
            ("shift", step as f32)
        };
        let report = group
            .call_if(
                offload,
                label,
                &mut [Arg::f32(s), Arg::u32(n as u32)],
                Launch::d1(n),
            )
            .unwrap();
        let expected = if offload { target } else { Location::Host };
        assert_eq!(report.target, expected, "step {step}");
        reference.iter_mut().for_each(|v| {
            *v = if label == "scale" { *v * s } else { *v + s };
        });
        assert_eq!(
            group.var::<f32>("x").unwrap().to_vec().unwrap(),
            reference,
            "step {step}"
        );
    }
}

/// A region: a closure for the host, the sources for devices; the same intents.
fn a_region_runs_its_block_where_the_target_is(target: Location) {
    let n = 256;
    let decl = elementwise("r_scale", '*');
    let region = Region::new(&decl, &[target]).unwrap();
    let mut x = Buffer::from_slice(Location::Host, &data(n, 4.0)).unwrap();
    let mut host_runs = 0;
    for _ in 0..2 {
        let report = region
            .run(
                &mut [Arg::buf_mut(&mut x), Arg::f32(3.0), Arg::u32(n as u32)],
                Launch::d1(n),
                |args, _| {
                    host_runs += 1;
                    let s = args[1].f32();
                    args[0].f32s_mut().iter_mut().for_each(|v| *v *= s);
                },
            )
            .unwrap();
        assert_eq!(report.target, target);
    }
    assert_eq!(host_runs, usize::from(target.is_host()) * 2);
    let want: Vec<f32> = data(n, 4.0).iter().map(|v| v * 9.0).collect();
    assert_eq!(x.to_vec().unwrap(), want);
    // cond on a region: false runs the block.
    let report = region
        .run_if(
            false,
            &mut [Arg::buf_mut(&mut x), Arg::f32(0.5), Arg::u32(n as u32)],
            Launch::d1(n),
            |args, _| {
                let s = args[1].f32();
                args[0].f32s_mut().iter_mut().for_each(|v| *v *= s);
            },
        )
        .unwrap();
    assert_eq!(report.target, Location::Host);
    let want: Vec<f32> = want.iter().map(|v| v * 0.5).collect();
    assert_eq!(x.to_vec().unwrap(), want);
}

/// A group whose kernel does not build at its target falls back, call by call, to the
/// host, taking the resident there, and still gives the right data.
fn a_group_falls_back_with_its_resident(target: Location) {
    if target.is_host() {
        eprintln!("nothing to fall back from at the host: the last target of every list");
        return;
    }
    let n = 200;
    let broken = Kernel::new("broken_twice")
        .buffer("x", DType::F32, Intent::InOut)
        .opencl_c("this is not OpenCL C", "broken_twice")
        .wgsl("this is not WGSL", "broken_twice", [64, 1, 1])
        .openmp_c("this is not C", "broken_twice")
        .cuda("this is not CUDA", "broken_twice")
        .hip("this is not HIP", "broken_twice")
        .host(|args, _| args[0].f32s_mut().iter_mut().for_each(|v| *v *= 2.0));
    let mut group = Group::new("fallback", &[target, Location::Host])
        .unwrap()
        .codelet("twice", &broken)
        .unwrap()
        .resident::<f32>("x", n)
        .unwrap();
    assert_eq!(group.allocate().unwrap(), target);
    assert_eq!(group.fallbacks(), &[Location::Host]);
    group
        .var_mut::<f32>("x")
        .unwrap()
        .set(0, &vec![3.0; n])
        .unwrap();
    for _ in 0..2 {
        let report = group.call("twice", &mut [], Launch::d1(n)).unwrap();
        assert_eq!(report.target, Location::Host);
        assert_eq!(report.fell_back.len(), 1);
        assert_eq!(report.fell_back[0].0, target);
    }
    assert_eq!(
        group.var::<f32>("x").unwrap().to_vec().unwrap(),
        vec![12.0; n]
    );
}

/// OpenHMPP's `map` over an array the caller owns: two codelets share the caller's
/// buffer's copy at the target; it moves there once, and the caller reads the result
/// after the group is gone.
fn a_mapped_parameter_may_be_the_caller_s_own_buffer(target: Location) {
    let n = 256;
    let (scale, shift) = (elementwise("m_scale", '*'), elementwise("m_shift", '+'));
    let mut mine = Buffer::from_slice(Location::Host, &vec![1.0f32; n]).unwrap();
    {
        let mut group = Group::new("own", &[target])
            .unwrap()
            .codelet("scale", &scale)
            .unwrap()
            .codelet("shift", &shift)
            .unwrap()
            .map_buffer("x", &mut mine, &[("scale", "x"), ("shift", "x")])
            .unwrap();
        group.allocate().unwrap();
        let before = moved(group.var::<f32>("x").unwrap());
        for _ in 0..3 {
            group
                .call(
                    "scale",
                    &mut [Arg::f32(2.0), Arg::u32(n as u32)],
                    Launch::d1(n),
                )
                .unwrap();
            group
                .call(
                    "shift",
                    &mut [Arg::f32(1.0), Arg::u32(n as u32)],
                    Launch::d1(n),
                )
                .unwrap();
        }
        let up = moved(group.var::<f32>("x").unwrap()) - before;
        assert!(
            up <= (n * 4) as u64,
            "{target}: the caller's buffer moved {up} bytes for six calls (at most one upload)"
        );
        group.release().unwrap();
        // Released, the caller's buffer is still the group's to use until it is dropped.
        assert_eq!(group.var::<f32>("x").unwrap().len(), n);
    }
    // ((1*2+1)*2+1)*2+1 = 15, read by the caller after the group is gone.
    assert_eq!(mine.to_vec().unwrap(), vec![15.0; n]);
}

/// OpenHMPP's sgemm kernel, non-square (m != n != k catches swapped strides), against
/// the host reference.
fn sgemm_matches_the_host_reference(target: Location) {
    let (m, n, k) = (37, 29, 19);
    let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.5).collect();
    let c0: Vec<f32> = (0..m * n).map(|i| (i % 3) as f32).collect();
    let kernel = kernels::sgemm();
    let codelet = Codelet::new(&kernel, &[target]).unwrap();
    let (ab, bb) = (
        Buffer::from_slice(Location::Host, &a).unwrap(),
        Buffer::from_slice(target, &b).unwrap(),
    );
    let mut c = Buffer::from_slice(Location::Host, &c0).unwrap();
    let report = codelet
        .call(
            &mut [
                Arg::u32(m as u32),
                Arg::u32(n as u32),
                Arg::u32(k as u32),
                Arg::f32(1.5),
                Arg::buf(&ab),
                Arg::buf(&bb),
                Arg::f32(-0.5),
                Arg::buf_mut(&mut c),
            ],
            Launch::d2(n, m),
        )
        .unwrap();
    assert_eq!(report.target, target);
    let mut want = c0.clone();
    kernels::sgemm_reference(m, n, k, 1.5, &a, &b, -0.5, &mut want);
    let got = c.to_vec().unwrap();
    for (i, (x, y)) in got.iter().zip(&want).enumerate() {
        assert!((x - y).abs() <= 1e-4 * y.abs().max(1.0), "[{i}] {x} vs {y}");
    }
}

macro_rules! suite {
    ($(#[$m:meta])*) => {
        $(#[$m])* #[test] fn a_group_keeps_its_data_resident() { run(super::a_group_keeps_its_data_resident) }
        $(#[$m])* #[test] fn a_resident_is_shared_by_two_codelets() { run(super::a_resident_is_shared_by_two_codelets) }
        $(#[$m])* #[test] fn map_and_map_by_name_share_one_device_copy() { run(super::map_and_map_by_name_share_one_device_copy) }
        $(#[$m])* #[test] fn cond_on_a_group_keeps_the_resident_coherent() { run(super::cond_on_a_group_keeps_the_resident_coherent) }
        $(#[$m])* #[test] fn a_region_runs_its_block_where_the_target_is() { run(super::a_region_runs_its_block_where_the_target_is) }
        $(#[$m])* #[test] fn a_group_falls_back_with_its_resident() { run(super::a_group_falls_back_with_its_resident) }
        $(#[$m])* #[test] fn sgemm_matches_the_host_reference() { run(super::sgemm_matches_the_host_reference) }
        $(#[$m])* #[test] fn a_mapped_parameter_may_be_the_caller_s_own_buffer() { run(super::a_mapped_parameter_may_be_the_caller_s_own_buffer) }
    };
}

at_every_location!();
