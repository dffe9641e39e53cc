//! OpenHMPP's groups beyond residency, on every location: sections in `advancedload` /
//! `delegatedstore` (and their runs against a brute-force model), `noupdate` and
//! `const`, asynchronous callsites, loads and regions, and misuse as clear errors.
//! Transfer counters prove what moved; results are checked against the host reference.

#[macro_use]
mod common;

use common::groups::{copy_at, data, elementwise, moved};
use locus::codelet::{kernels, Arg, Codelet, Group, Launch, Region};
use locus::{Buffer, Location, Section, Triplet};

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

macro_rules! suite {
    ($(#[$m:meta])*) => {
        $(#[$m])* #[test] fn sections_move_only_their_elements() { run(super::sections_move_only_their_elements) }
        $(#[$m])* #[test] fn noupdate_and_const_behave_as_documented() { run(super::noupdate_and_const_behave_as_documented) }
        $(#[$m])* #[test] fn asynchronous_group_calls() { run(super::asynchronous_group_calls) }
        $(#[$m])* #[test] fn asynchronous_callsites_and_loads_overlap() { run(super::asynchronous_callsites_and_loads_overlap) }
        $(#[$m])* #[test] fn an_asynchronous_region_runs_while_the_caller_goes_on() { run(super::an_asynchronous_region_runs_while_the_caller_goes_on) }
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
