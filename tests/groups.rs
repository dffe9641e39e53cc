//! OpenHMPP beyond one codelet, on every location: groups with resident data and
//! `allocate` / `release`, `map` / `mapbyname`, `cond` on a group, sections in
//! `advancedload` / `delegatedstore`, `noupdate` and `const`, regions, and fallback with
//! resident data. Transfer counters prove what moved; results are checked against the
//! host reference.

#[macro_use]
mod common;

use locus::codelet::{kernels, Arg, Codelet, DType, Group, Intent, Kernel, Launch, Region};
use locus::{Buffer, Location, Section, Triplet};

/// `x[i] = x[i] <op> s` for `i < n`: `name(x: inout f32[], s: f32, n: u32)`, in every
/// language.
fn elementwise(name: &str, op: char) -> Kernel {
    let wgsl = format!(
        "struct Params {{ s: f32, n: u32 }}
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;
@compute @workgroup_size(64)
fn {name}(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{
    let i = id.x + id.y * groups.x * 64u;
    if (i < params.n) {{ x[i] = x[i] {op} params.s; }}
}}"
    );
    let opencl = format!(
        "__kernel void {name}(__global float *x, const float s, const uint n) {{
    size_t i = get_global_id(0);
    if (i < n) x[i] = x[i] {op} s;
}}"
    );
    let openmp = format!(
        "#include <stddef.h>
int locus_omp_k_{name}(void **args, size_t gx, size_t gy, int dev) {{
    (void)gy;
    float *x = (float *)args[0];
    float s = *(const float *)args[1];
    size_t n = *(const unsigned *)args[2];
    if (gx < n) n = gx;
    #pragma omp target teams distribute parallel for device(dev) is_device_ptr(x)
    for (size_t i = 0; i < n; ++i) x[i] = x[i] {op} s;
    return 0;
}}"
    );
    let cuda = format!(
        "extern \"C\" __global__ void {name}(float *x, float s, unsigned n) {{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] {op} s;
}}"
    );
    let host: fn(&mut [locus::codelet::HostArg<'_>], [usize; 2]) = match op {
        '*' => |args, global| {
            let (s, n) = (args[1].f32(), args[2].u32() as usize);
            for v in args[0].f32s_mut().iter_mut().take(n.min(global[0])) {
                *v *= s;
            }
        },
        _ => |args, global| {
            let (s, n) = (args[1].f32(), args[2].u32() as usize);
            for v in args[0].f32s_mut().iter_mut().take(n.min(global[0])) {
                *v += s;
            }
        },
    };
    Kernel::new(name)
        .buffer("x", DType::F32, Intent::InOut)
        .scalar("s", DType::F32)
        .scalar("n", DType::U32)
        .wgsl(&wgsl, name, [64, 1, 1])
        .opencl_c(&opencl, name)
        .openmp_c(&openmp, name)
        .cuda(&cuda, name)
        .hip(&cuda, name)
        .host(host)
}

fn data(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7 + seed as usize) % 23) as f32)
        .collect()
}

/// The copy at `at` exactly as it is (no coherence action): what a section move left.
fn copy_at(b: &Buffer<f32>, at: Location) -> Vec<f32> {
    let memory = b.memory_at(at).unwrap_or_else(|| panic!("a copy at {at}"));
    let mut out = vec![0f32; b.len()];
    memory.read(0, bytemuck::cast_slice_mut(&mut out)).unwrap();
    out
}

fn moved(b: &Buffer<f32>) -> u64 {
    b.stats().bytes_moved()
}

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

/// Sections: `advancedload` and `delegatedstore` of a 2-D section (rows with a stride,
/// columns with a stride) move exactly the section's bytes and leave the rest of the
/// destination copy untouched; `delegatedstore` goes to any location.
fn sections_move_only_their_elements(target: Location) {
    let (rows, cols) = (12, 10);
    let n = rows * cols;
    let section = Section::new(
        &[rows, cols],
        &[Triplet::new(2, 10, 4), Triplet::new(1, 7, 3)],
    );
    let picked: Vec<usize> = [2usize, 6, 10]
        .iter()
        .flat_map(|r| [1usize, 4, 7].map(|c| r * cols + c))
        .collect();
    assert_eq!(section.elements().unwrap(), picked.len());
    let bytes = (picked.len() * 4) as u64;
    let k = elementwise("s_scale", '*');
    let codelet = Codelet::new(&k, &[target]).unwrap();
    let old = data(n, 5.0);
    // Made on the host, loaded whole at the target: two copies where the target does
    // not reach host memory in place.
    let mut x = Buffer::from_slice(Location::Host, &old).unwrap();
    x.prefetch(target).unwrap();
    let separate = x.replicas().len() == 2;
    eprintln!("{target}: separate host and target copies: {separate}");
    let new: Vec<f32> = old.iter().map(|v| v + 100.0).collect();
    x.access_mut(Location::Host)
        .unwrap()
        .as_mut_slice()
        .unwrap()
        .copy_from_slice(&new);
    let before = moved(&x);
    codelet.advanced_load_section(&x, &section).unwrap();
    if !separate {
        assert_eq!(moved(&x), before, "one copy: nothing to move");
        return;
    }
    assert_eq!(moved(&x) - before, bytes, "exactly the section's bytes");
    let mut want = old.clone();
    for &i in &picked {
        want[i] = new[i];
    }
    assert_eq!(copy_at(&x, target), want, "the rest untouched at {target}");
    // The kernel runs on the target copy as loaded (it is current now: no upload).
    let before = moved(&x);
    codelet
        .call(
            &mut [Arg::buf_mut(&mut x), Arg::f32(2.0), Arg::u32(n as u32)],
            Launch::d1(n),
        )
        .unwrap();
    assert_eq!(moved(&x), before, "no upload after the section load");
    // Store a section back: only those elements reach the host copy.
    let back = Section::new(&[rows, cols], &[Triplet::range(3, 4), Triplet::all(cols)]);
    let before = moved(&x);
    codelet
        .delegated_store_to(&x, Some(&back), Location::Host)
        .unwrap();
    let host_reaches = locus::is_accessible_from(&x.memory_at(target).unwrap(), Location::Host);
    let doubled: Vec<f32> = want.iter().map(|v| v * 2.0).collect();
    if host_reaches {
        // The host reads the target copy in place (mapped memory): nothing to store.
        assert_eq!(moved(&x), before, "{target}: the host reads it in place");
        assert_eq!(x.to_vec().unwrap(), doubled);
    } else {
        assert_eq!(moved(&x) - before, (2 * cols * 4) as u64);
        let mut host_want = new.clone();
        host_want[3 * cols..5 * cols].copy_from_slice(&doubled[3 * cols..5 * cols]);
        assert_eq!(
            copy_at(&x, Location::Host),
            host_want,
            "host rest untouched"
        );
    }
    // Asynchronous form: events, then the data.
    let events = codelet
        .delegated_store_async(&x, Some(&back), Location::Host)
        .unwrap();
    events.iter().try_for_each(locus::Event::wait).unwrap();
    // Whole, to another location (any location, not only the host).
    let elsewhere = locus::available()
        .into_iter()
        .filter(|l| *l != target && !l.is_host())
        .min_by_key(|l| l.technology() == locus::Technology::OpenMp);
    if let Some(other) = elsewhere {
        codelet.delegated_store_to(&x, None, other).unwrap();
        let before = moved(&x);
        let ready = x.access(other).unwrap().route().kind;
        assert_eq!(
            moved(&x),
            before,
            "stored at {other}: reading there moves nothing"
        );
        eprintln!("{target}: stored whole to {other}: read there {ready:?}");
    }
}

/// `noupdate`: the target copy is used as it is, no upload even when the host copy is
/// newer (the stale result the docs warn about, where the copies are separate); `const`:
/// uploaded at the first call, never checked again until forgotten.
fn noupdate_and_const_behave_as_documented(target: Location) {
    let n = 300;
    let k = kernels::saxpy();
    let old = data(n, 1.0);
    let new: Vec<f32> = old.iter().map(|v| v + 10.0).collect();
    let axpy = |x: &[f32]| -> Vec<f32> { x.iter().map(|v| 2.0 * v + 1.0).collect() };
    let run = |c: &Codelet<'_>, x: &Buffer<f32>| {
        let mut y = Buffer::filled(target, n, 1.0f32).unwrap();
        let report = c
            .call(
                &mut [
                    Arg::f32(2.0),
                    Arg::buf(x),
                    Arg::buf_mut(&mut y),
                    Arg::u32(n as u32),
                ],
                Launch::d1(n),
            )
            .unwrap();
        (y.to_vec().unwrap(), report)
    };
    // noupdate.
    let noupdate = Codelet::new(&k, &[target]).unwrap().noupdate("x").unwrap();
    let mut x = Buffer::from_slice(Location::Host, &old).unwrap();
    x.prefetch(target).unwrap();
    let separate = x.replicas().len() == 2;
    x.access_mut(Location::Host)
        .unwrap()
        .as_mut_slice()
        .unwrap()
        .copy_from_slice(&new);
    let before = moved(&x);
    let (y, _) = run(&noupdate, &x);
    assert_eq!(moved(&x), before, "noupdate moved nothing");
    if separate {
        assert_eq!(y, axpy(&old), "the stale copy, as asserted (misuse shows)");
    } else {
        assert_eq!(y, axpy(&new), "one copy: it is current");
    }
    let (y, _) = run(&Codelet::new(&k, &[target]).unwrap(), &x);
    assert_eq!(y, axpy(&new), "without noupdate: uploaded");
    // noupdate on a buffer with no copy there is an error (nothing to use), where the
    // host copy is not usable in place.
    let fresh = Buffer::from_slice(Location::Host, &old).unwrap();
    let mut y = Buffer::filled(target, n, 1.0f32).unwrap();
    let result = noupdate.call(
        &mut [
            Arg::f32(2.0),
            Arg::buf(&fresh),
            Arg::buf_mut(&mut y),
            Arg::u32(n as u32),
        ],
        Launch::d1(n),
    );
    if separate {
        let err = result.unwrap_err().to_string();
        assert!(
            err.contains("noupdate") && err.contains(&target.to_string()),
            "{err}"
        );
    }

    // const.
    let constant = Codelet::new(&k, &[target]).unwrap().constant("x").unwrap();
    let mut x = Buffer::from_slice(Location::Host, &old).unwrap();
    let (y, _) = run(&constant, &x);
    assert_eq!(y, axpy(&old));
    x.access_mut(Location::Host)
        .unwrap()
        .as_mut_slice()
        .unwrap()
        .copy_from_slice(&new);
    let before = moved(&x);
    let (y, _) = run(&constant, &x);
    assert_eq!(moved(&x), before, "const: not uploaded again");
    let separate = target != Location::Host && x.replicas().len() == 2;
    if separate {
        assert_eq!(y, axpy(&old), "const: never checked again");
    }
    constant.forget_constants();
    let (y, _) = run(&constant, &x);
    assert_eq!(y, axpy(&new), "forgotten: uploaded again");
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

/// Asynchronous group calls (`callsite, asynchronous` then `synchronize`).
fn asynchronous_group_calls(target: Location) {
    let n = 400;
    let scale = elementwise("a_scale", '*');
    let mut group = Group::new("async", &[target])
        .unwrap()
        .codelet("scale", &scale)
        .unwrap()
        .resident::<f32>("x", n)
        .unwrap();
    group.allocate().unwrap();
    group
        .var_mut::<f32>("x")
        .unwrap()
        .set(0, &vec![1.0; n])
        .unwrap();
    for _ in 0..3 {
        let pending = group
            .call_async(
                "scale",
                vec![Arg::f32(2.0), Arg::u32(n as u32)],
                Launch::d1(n),
            )
            .unwrap();
        assert_eq!(pending.synchronize().unwrap().target, target);
    }
    assert_eq!(
        group.var::<f32>("x").unwrap().to_vec().unwrap(),
        vec![8.0; n]
    );
}

/// OpenHMPP's asynchronous callsites and loads overlapping inside a group: a call of one
/// codelet runs while a variable of another is loaded and another codelet is called; a
/// variable a pending call uses is refused, naming the variable and the call. (Before,
/// `call_async` borrowed the whole group mutably: none of this compiled.)
fn asynchronous_callsites_and_loads_overlap(target: Location) {
    let n = 512;
    let (scale, shift) = (elementwise("o_scale", '*'), elementwise("o_shift", '+'));
    let mut group = Group::new("overlap", &[target])
        .unwrap()
        .codelet("scale", &scale)
        .unwrap()
        .codelet("shift", &shift)
        .unwrap()
        .map::<f32>("a", n, &[("scale", "x")])
        .unwrap()
        .map::<f32>("b", n, &[("shift", "x")])
        .unwrap();
    group.allocate().unwrap();
    group
        .var_mut::<f32>("a")
        .unwrap()
        .set(0, &vec![1.0; n])
        .unwrap();
    group
        .var_mut::<f32>("b")
        .unwrap()
        .set(0, &vec![1.0; n])
        .unwrap();
    let other = Buffer::from_slice(Location::Host, &data(n, 3.0)).unwrap();
    let scalars = |s: f32| vec![Arg::f32(s), Arg::u32(n as u32)];
    let first = group
        .call_async("scale", scalars(3.0), Launch::d1(n))
        .unwrap();
    // While `scale` may still run: `b` loaded ahead of its call, another buffer loaded,
    // and `shift` started on `b`.
    let loads = group.advanced_load_var_async("b", None).unwrap();
    let more = group.advanced_load_async(&other, None).unwrap();
    let second = group
        .call_async("shift", scalars(2.0), Launch::d1(n))
        .unwrap();
    // `a` is the pending `scale` call's: refused by name, nothing started.
    for err in [
        group
            .call_async("scale", scalars(5.0), Launch::d1(n))
            .err()
            .map(|e| e.to_string()),
        group
            .advanced_load_var("a", None)
            .err()
            .map(|e| e.to_string()),
    ] {
        let err = err.expect("a variable in use by a pending call is refused");
        assert!(
            err.contains("`a` is in use by the asynchronous call of codelet `scale`"),
            "{err}"
        );
    }
    loads.iter().chain(&more).for_each(|e| e.wait().unwrap());
    assert_eq!(first.synchronize().unwrap().target, target);
    assert_eq!(second.synchronize().unwrap().target, target);
    assert_eq!(
        group.var::<f32>("a").unwrap().to_vec().unwrap(),
        vec![3.0; n]
    );
    assert_eq!(
        group.var::<f32>("b").unwrap().to_vec().unwrap(),
        vec![3.0; n]
    );
    // Given back: the variable serves the next call.
    group
        .call(
            "scale",
            &mut [Arg::f32(2.0), Arg::u32(n as u32)],
            Launch::d1(n),
        )
        .unwrap();
    assert_eq!(
        group.var::<f32>("a").unwrap().to_vec().unwrap(),
        vec![6.0; n]
    );
}

/// OpenHMPP's asynchronous region: started, the caller goes on, `synchronize` waits.
fn an_asynchronous_region_runs_while_the_caller_goes_on(target: Location) {
    let n = 300;
    let scale = elementwise("r_scale", '*');
    let region = Region::new(&scale, &[target]).unwrap();
    let mut x = Buffer::from_slice(Location::Host, &vec![2.0f32; n]).unwrap();
    let mut host_runs = 0;
    let pending = region
        .run_async(
            vec![Arg::buf_mut(&mut x), Arg::f32(4.0), Arg::u32(n as u32)],
            Launch::d1(n),
            |args, _| {
                host_runs += 1;
                let s = args[1].f32();
                args[0].f32s_mut().iter_mut().for_each(|v| *v *= s);
            },
        )
        .unwrap();
    assert_eq!(pending.target(), target);
    assert_eq!(pending.synchronize().unwrap().target, target);
    assert_eq!(host_runs, usize::from(target == Location::Host));
    assert_eq!(x.to_vec().unwrap(), vec![8.0; n]);
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
        $(#[$m])* #[test] fn sections_move_only_their_elements() { run(super::sections_move_only_their_elements) }
        $(#[$m])* #[test] fn noupdate_and_const_behave_as_documented() { run(super::noupdate_and_const_behave_as_documented) }
        $(#[$m])* #[test] fn a_region_runs_its_block_where_the_target_is() { run(super::a_region_runs_its_block_where_the_target_is) }
        $(#[$m])* #[test] fn a_group_falls_back_with_its_resident() { run(super::a_group_falls_back_with_its_resident) }
        $(#[$m])* #[test] fn asynchronous_group_calls() { run(super::asynchronous_group_calls) }
        $(#[$m])* #[test] fn sgemm_matches_the_host_reference() { run(super::sgemm_matches_the_host_reference) }
        $(#[$m])* #[test] fn asynchronous_callsites_and_loads_overlap() { run(super::asynchronous_callsites_and_loads_overlap) }
        $(#[$m])* #[test] fn an_asynchronous_region_runs_while_the_caller_goes_on() { run(super::an_asynchronous_region_runs_while_the_caller_goes_on) }
        $(#[$m])* #[test] fn a_mapped_parameter_may_be_the_caller_s_own_buffer() { run(super::a_mapped_parameter_may_be_the_caller_s_own_buffer) }
    };
}

at_every_location!();

/// Sections against a brute-force model: the runs cover exactly the selected elements,
/// in order, merged where adjacent; bad sections are errors naming the dimension.
#[test]
fn section_runs_match_the_model() {
    let mut rng = common::Rng(0x5eed);
    for _ in 0..2000 {
        let dims = 1 + rng.below(3);
        let shape: Vec<usize> = (0..dims).map(|_| 1 + rng.below(6)).collect();
        let triplets: Vec<Triplet> = shape
            .iter()
            .map(|&e| {
                let start = rng.below(e);
                let end = start + rng.below(e - start);
                Triplet::new(start, end, 1 + rng.below(3))
            })
            .collect();
        let s = Section::new(&shape, &triplets);
        let len: usize = shape.iter().product();
        let mut want = Vec::new();
        for k in 0..len {
            let mut rest = k;
            let mut index = vec![0; dims];
            for d in (0..dims).rev() {
                index[d] = rest % shape[d];
                rest /= shape[d];
            }
            let inside = index
                .iter()
                .zip(&triplets)
                .all(|(&i, t)| i >= t.start && i <= t.end && (i - t.start) % t.stride == 0);
            if inside {
                want.push(k);
            }
        }
        let runs = s.runs(len).unwrap();
        let got: Vec<usize> = runs.iter().flat_map(|&(a, c)| a..a + c).collect();
        assert_eq!(got, want, "{s}");
        assert_eq!(s.elements().unwrap(), want.len());
        assert!(
            runs.windows(2).all(|w| w[0].0 + w[0].1 < w[1].0),
            "merged: {runs:?}"
        );
    }
    let bad = [
        (
            Section::new(&[4, 4], &[Triplet::all(4)]),
            "one triplet per dimension",
        ),
        (Section::d1(10, 0, 9, 1), "holds 10 elements, the buffer 12"),
        (Section::d1(12, 0, 12, 1), "dimension 0"),
        (Section::d1(12, 5, 3, 1), "dimension 0"),
        (Section::d1(12, 0, 3, 0), "stride is 0"),
    ];
    let huge = Section::d1(1 << 26, 0, (1 << 26) - 1, 2);
    let err = huge.runs(1 << 26).unwrap_err().to_string();
    assert!(err.contains("separate runs"), "{err}");
    for (s, says) in bad {
        let err = s.runs(12).unwrap_err().to_string();
        assert!(err.contains(says), "{s}: {err}");
    }
}

/// Misuse is a clear error, and nothing is launched or half-allocated.
#[test]
fn group_misuse_is_a_clear_error() {
    let _serial = common::serial();
    let (add, saxpy) = (kernels::vec_add(), kernels::saxpy());
    let err = |r: locus::Result<Group<'_>>| r.unwrap_err().to_string();
    let base = || {
        Group::new("g", &[Location::Host])
            .unwrap()
            .codelet("add", &add)
            .unwrap()
    };
    assert!(err(base().codelet("add", &saxpy)).contains("already has a codelet `add`"));
    assert!(err(base().noupdate("add", "c")).contains("out"));
    assert!(err(base().constant("add", "c")).contains("const applies to in buffers"));
    assert!(err(base().noupdate("add", "n")).contains("scalar"));
    assert!(err(base().noupdate("nope", "a")).contains("no codelet `nope`"));
    let mut g = base().map::<f64>("wrong", 4, &[("add", "a")]).unwrap();
    let e = g.allocate().unwrap_err().to_string();
    assert!(e.contains("identical types") && e.contains("f64"), "{e}");
    let mut g = base().map::<f32>("m", 4, &[("add", "zz")]).unwrap();
    assert!(g
        .allocate()
        .unwrap_err()
        .to_string()
        .contains("no parameter `zz`"));
    let mut g = base().map_by_name::<f32>("nothing", 4).unwrap();
    assert!(g
        .allocate()
        .unwrap_err()
        .to_string()
        .contains("no codelet has a parameter"));
    let mut g = base()
        .map::<f32>("both", 4, &[("add", "a"), ("add", "b")])
        .unwrap();
    assert!(g
        .allocate()
        .unwrap_err()
        .to_string()
        .contains("two parameters of codelet `add`"));
    // Before allocate, calls and variables say so; after, the argument count names them.
    let mut g = base().resident::<f32>("c", 4).unwrap();
    let a = Buffer::from_slice(Location::Host, &[1.0f32; 4]).unwrap();
    let e = g
        .call("add", &mut [Arg::buf(&a)], Launch::d1(4))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not allocated"), "{e}");
    assert!(g
        .var::<f32>("c")
        .unwrap_err()
        .to_string()
        .contains("allocate"));
    g.allocate().unwrap();
    let e = g
        .call("add", &mut [Arg::buf(&a)], Launch::d1(4))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("pass 3 arguments (a, b, n), the group holds c; got 1"),
        "{e}"
    );
    assert!(g
        .var::<u32>("c")
        .unwrap_err()
        .to_string()
        .contains("holds f32 elements, not u32"));
    assert!(g
        .var::<f32>("d")
        .unwrap_err()
        .to_string()
        .contains("no variable `d`"));
    g.release().unwrap();
    let twice = base()
        .resident::<f32>("c", 1)
        .and_then(|b| b.resident::<f32>("c", 1));
    assert!(err(twice).contains("already has a variable `c`"));
    // A group whose codelets run nowhere in its list: every reason.
    let f64_only = kernels::vec_add_f64();
    let no_wgsl = Group::new("w", &[Location::WebGpu(0), Location::Host]);
    if let Ok(g) = no_wgsl {
        let mut g = g.codelet("f", &f64_only).unwrap();
        let target = g.allocate().unwrap();
        assert_eq!(target, Location::Host, "WebGPU passed over: no f64");
        assert!(!g.skipped().is_empty());
    }
    assert!(Group::new("none", &[])
        .unwrap_err()
        .to_string()
        .contains("empty"));
}
