//! Codelets: every kernel on every available target against the host reference, the
//! transfers intents cause (and do not cause), target fallback, and misuse.

mod common;

use locus::codelet::{kernels, Arg, Codelet, DType, Intent, Kernel, Launch};
use locus::{Buffer, Location};

/// Relative tolerance for float kernels: targets may fuse multiply-adds (saxpy, Jacobi)
/// and so round differently from the host reference by an ulp or so.
const TOLERANCE: f32 = 1e-5;

fn close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let scale = x.abs().max(y.abs()).max(1.0);
        assert!(
            (x - y).abs() <= TOLERANCE * scale,
            "{what}[{i}]: {x} vs {y}"
        );
    }
}

fn data(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32 * 0.37 + seed).sin() * 10.0).round() / 4.0)
        .collect()
}

#[test]
fn every_kernel_on_every_target_matches_the_host_reference() {
    let _serial = common::serial();
    let n = 10_007;
    let (nx, ny) = (67, 45);
    for target in locus::available() {
        eprintln!("kernels at {target}");
        // vec_add, with `a` made at the target and `b` on the host.
        let k = kernels::vec_add();
        let c = Codelet::new(&k, &[target]).unwrap();
        let a = Buffer::from_slice(target, &data(n, 1.0)).unwrap();
        let b = Buffer::from_slice(Location::Host, &data(n, 2.0)).unwrap();
        let mut out = Buffer::<f32>::zeroed(Location::Host, n).unwrap();
        let report = c
            .call(
                &mut [
                    Arg::buf(&a),
                    Arg::buf(&b),
                    Arg::buf_mut(&mut out),
                    Arg::u32(n as u32),
                ],
                Launch::d1(n),
            )
            .unwrap();
        assert_eq!(report.target, target);
        let expect: Vec<f32> = data(n, 1.0)
            .iter()
            .zip(data(n, 2.0))
            .map(|(x, y)| x + y)
            .collect();
        assert_eq!(out.to_vec().unwrap(), expect, "vec_add at {target} (exact)");

        // saxpy.
        let k = kernels::saxpy();
        let c = Codelet::new(&k, &[target]).unwrap();
        let x = Buffer::from_slice(Location::Host, &data(n, 3.0)).unwrap();
        let mut y = Buffer::from_slice(Location::Host, &data(n, 4.0)).unwrap();
        c.call(
            &mut [
                Arg::f32(1.5),
                Arg::buf(&x),
                Arg::buf_mut(&mut y),
                Arg::u32(n as u32),
            ],
            Launch::d1(n),
        )
        .unwrap();
        let expect: Vec<f32> = data(n, 3.0)
            .iter()
            .zip(data(n, 4.0))
            .map(|(x, y)| 1.5 * x + y)
            .collect();
        close(&y.to_vec().unwrap(), &expect, &format!("saxpy at {target}"));

        // Jacobi, 2-D.
        let k = kernels::jacobi();
        let c = Codelet::new(&k, &[target]).unwrap();
        let grid = data(nx * ny, 5.0);
        let src = Buffer::from_slice(Location::Host, &grid).unwrap();
        let mut dst = Buffer::<f32>::zeroed(Location::Host, nx * ny).unwrap();
        c.call(
            &mut [
                Arg::buf(&src),
                Arg::buf_mut(&mut dst),
                Arg::u32(nx as u32),
                Arg::u32(ny as u32),
            ],
            Launch::d2(nx, ny),
        )
        .unwrap();
        let mut expect = vec![0.0; nx * ny];
        kernels::jacobi_reference(&grid, &mut expect, nx, ny);
        close(
            &dst.to_vec().unwrap(),
            &expect,
            &format!("jacobi at {target}"),
        );
    }
}

fn moved_bytes(b: &Buffer<f32>) -> u64 {
    b.stats().bytes_moved()
}

#[test]
fn jacobi_moves_the_grid_there_once_and_back_once() {
    let _serial = common::serial();
    let (nx, ny) = (64, 48);
    let bytes = (nx * ny * 4) as u64;
    let k = kernels::jacobi();
    for target in locus::available() {
        let c = Codelet::new(&k, &[target]).unwrap();
        let mut a = Buffer::from_slice(Location::Host, &data(nx * ny, 0.5)).unwrap();
        let mut b = Buffer::<f32>::zeroed(Location::Host, nx * ny).unwrap();
        for _ in 0..100 {
            c.call(
                &mut [
                    Arg::buf(&a),
                    Arg::buf_mut(&mut b),
                    Arg::u32(nx as u32),
                    Arg::u32(ny as u32),
                ],
                Launch::d2(nx, ny),
            )
            .unwrap();
            std::mem::swap(&mut a, &mut b);
        }
        let in_place = Buffer::from_slice(Location::Host, &[0f32])
            .unwrap()
            .memory_at(Location::Host)
            .unwrap()
            .is_accessible_from(target);
        let there = moved_bytes(&a) + moved_bytes(&b);
        assert_eq!(
            there,
            if in_place { 0 } else { bytes },
            "{target}: grid moved to the target once"
        );
        // The result (in `a` after the last swap) comes back once.
        let result = a.to_vec().unwrap();
        let back = moved_bytes(&a) + moved_bytes(&b) - there;
        assert_eq!(
            back,
            if in_place { 0 } else { bytes },
            "{target}: back once"
        );
        // And it is right.
        let mut expect = data(nx * ny, 0.5);
        let mut tmp = vec![0.0; nx * ny];
        for _ in 0..100 {
            kernels::jacobi_reference(&expect, &mut tmp, nx, ny);
            std::mem::swap(&mut expect, &mut tmp);
        }
        close(&result, &expect, &format!("100 Jacobi steps at {target}"));
    }
}

#[test]
fn out_is_never_uploaded_and_unchanged_inputs_move_nothing() {
    let _serial = common::serial();
    let n = 4096;
    let k = kernels::vec_add();
    for target in locus::available() {
        let c = Codelet::new(&k, &[target]).unwrap();
        let a = Buffer::from_slice(Location::Host, &data(n, 1.0)).unwrap();
        let b = Buffer::from_slice(Location::Host, &data(n, 2.0)).unwrap();
        // `out` made on the host with stale contents: never uploaded.
        let mut out = Buffer::filled(Location::Host, n, -1.0f32).unwrap();
        c.call(
            &mut [
                Arg::buf(&a),
                Arg::buf(&b),
                Arg::buf_mut(&mut out),
                Arg::u32(n as u32),
            ],
            Launch::d1(n),
        )
        .unwrap();
        assert_eq!(
            out.stats().copies(),
            0,
            "{target}: the out argument was not uploaded"
        );
        // An `in` argument is not marked written: its host copy stays valid.
        assert!(
            a.replicas().contains(&(Location::Host, true)),
            "{target}: {:?}",
            a.replicas()
        );
        // The same call again, inputs unchanged: nothing moves at all.
        let again = c
            .call(
                &mut [
                    Arg::buf(&a),
                    Arg::buf(&b),
                    Arg::buf_mut(&mut out),
                    Arg::u32(n as u32),
                ],
                Launch::d1(n),
            )
            .unwrap();
        assert_eq!(again.moved.copies(), 0, "{target}: {}", again.moved);
        assert_eq!(out.to_vec().unwrap()[7], data(n, 1.0)[7] + data(n, 2.0)[7]);
    }
}

#[test]
fn advancedload_async_and_delegatedstore() {
    let _serial = common::serial();
    let n = 2048;
    let k = kernels::saxpy();
    for target in locus::available() {
        let c = Codelet::new(&k, &[target]).unwrap();
        let x = Buffer::from_slice(Location::Host, &data(n, 1.0)).unwrap();
        let mut y = Buffer::from_slice(Location::Host, &data(n, 2.0)).unwrap();
        // advancedload: inputs moved ahead of the call, so the call itself moves nothing.
        c.advanced_load(&x).unwrap();
        c.advanced_load(&y).unwrap();
        let pending = c
            .call_async(
                vec![
                    Arg::f32(2.0),
                    Arg::buf(&x),
                    Arg::buf_mut(&mut y),
                    Arg::u32(n as u32),
                ],
                Launch::d1(n),
            )
            .unwrap();
        let report = pending.synchronize().unwrap();
        assert_eq!(report.moved.copies(), 0, "{target}: {}", report.moved);
        // delegatedstore: the output comes back when asked, not before.
        let before = y.stats().copies();
        c.delegated_store(&y).unwrap();
        let fetched = y.stats().copies() - before;
        let host_reaches = y
            .memory_at(target)
            .is_none_or(|m| m.is_accessible_from(Location::Host));
        assert_eq!(fetched, u64::from(!host_reaches), "{target}");
        let expect: Vec<f32> = data(n, 1.0)
            .iter()
            .zip(data(n, 2.0))
            .map(|(x, y)| 2.0 * x + y)
            .collect();
        close(
            &y.to_vec().unwrap(),
            &expect,
            &format!("async saxpy at {target}"),
        );
        // Reading again after the store moves nothing more.
        let settled = y.stats().copies();
        drop(y.access(Location::Host).unwrap());
        assert_eq!(y.stats().copies(), settled);
    }
}

#[test]
fn target_lists_fall_back_and_explain() {
    let k = kernels::vec_add();
    let missing = [Location::Cuda(7), Location::Hip(7), Location::OpenCl(99)];
    let c = Codelet::new(&k, &[missing[0], missing[1], missing[2], Location::Host]).unwrap();
    assert_eq!(c.target(), Location::Host);
    assert_eq!(c.skipped().len(), 3);
    for (l, why) in c.skipped() {
        assert!(!why.is_empty(), "{l} has a reason");
    }
    let err = Codelet::new(&k, &missing).unwrap_err().to_string();
    for l in missing {
        assert!(err.contains(&l.to_string()), "{err}");
    }
    assert!(Codelet::new(&k, &[])
        .unwrap_err()
        .to_string()
        .contains("empty"));
}

#[test]
fn misuse_is_a_clear_error_and_launches_nothing() {
    let _serial = common::serial();
    let k = kernels::vec_add();
    for target in locus::available() {
        let c = Codelet::new(&k, &[target]).unwrap();
        let a = Buffer::from_slice(Location::Host, &[1.0f32; 8]).unwrap();
        let b = Buffer::from_slice(Location::Host, &[2.0f32; 8]).unwrap();
        let short = Buffer::from_slice(Location::Host, &[2.0f32; 7]).unwrap();
        let ints = Buffer::from_slice(Location::Host, &[2u32; 8]).unwrap();
        let mut out = Buffer::filled(Location::Host, 8, 9.0f32).unwrap();
        let check = |args: &mut [Arg<'_>], launch: Launch, needle: &str| {
            let err = c.call(args, launch).unwrap_err().to_string();
            assert!(err.contains(needle), "{target}: `{needle}` not in: {err}");
        };
        check(
            &mut [Arg::buf(&a), Arg::buf(&b)],
            Launch::d1(8),
            "takes 4 arguments",
        );
        check(
            &mut [Arg::buf(&a), Arg::buf(&ints), Arg::buf(&b), Arg::u32(8)],
            Launch::d1(8),
            "must be a f32 buffer",
        );
        check(
            &mut [Arg::buf(&a), Arg::buf(&b), Arg::buf(&b), Arg::u32(8)],
            Launch::d1(8),
            "writable",
        );
        check(
            &mut [Arg::buf(&a), Arg::buf(&b), Arg::f32(1.0), Arg::u32(8)],
            Launch::d1(8),
            "must be",
        );
        check(
            &mut [
                Arg::buf(&a),
                Arg::buf(&b),
                Arg::buf_mut(&mut out),
                Arg::f32(8.0),
            ],
            Launch::d1(8),
            "u32 scalar",
        );
        check(
            &mut [
                Arg::buf(&a),
                Arg::buf(&short),
                Arg::buf_mut(&mut out),
                Arg::u32(8),
            ],
            Launch::d1(7),
            "equal lengths",
        );
        check(
            &mut [
                Arg::buf(&a),
                Arg::buf(&b),
                Arg::buf_mut(&mut out),
                Arg::u32(9),
            ],
            Launch::d1(9),
            "larger than buffer",
        );
        // Nothing ran, nothing moved.
        assert_eq!(out.to_vec().unwrap(), vec![9.0; 8]);
        assert_eq!(a.stats().copies() + b.stats().copies(), 0);
    }
    // A target without a source for its technology.
    let host_only = Kernel::new("double")
        .buffer("x", DType::F32, Intent::InOut)
        .host(|args, _| args[0].f32s_mut().iter_mut().for_each(|v| *v *= 2.0));
    for target in locus::available().into_iter().filter(|l| !l.is_host()) {
        let c = Codelet::new(&host_only, &[target]).unwrap();
        let mut x = Buffer::from_slice(Location::Host, &[1.0f32]).unwrap();
        let err = c
            .call(&mut [Arg::buf_mut(&mut x)], Launch::d1(1))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("kernel `double` has no") && err.contains("source"),
            "{err}"
        );
    }
    let c = Codelet::new(&host_only, &[Location::Host]).unwrap();
    let mut x = Buffer::from_slice(Location::Host, &[1.0f32, 3.0]).unwrap();
    c.call(&mut [Arg::buf_mut(&mut x)], Launch::d1(2)).unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![2.0, 6.0]);
}

/// The f64 kernels run, exactly, wherever the device has 64-bit floats, and elsewhere
/// (WebGPU: WGSL has no f64; an OpenCL device without cl_khr_fp64) the call is an
/// error naming the missing capability, never a wrong result.
#[test]
fn f64_kernels_run_where_there_are_64_bit_floats() {
    let _serial = common::serial();
    let n = 10_001;
    // Sums of these are exact in f64 and not in f32 (they need more than 24 bits).
    let a: Vec<f64> = (0..n).map(|i| 1e9 + i as f64 * 0.25).collect();
    let b: Vec<f64> = (0..n).map(|i| i as f64 * 3.0 + 0.125).collect();
    for location in locus::available() {
        let lacks = locus::registry().device(location).unwrap().lacks_f64();
        let x = Buffer::from_slice(Location::Host, &a).unwrap();
        let y0 = Buffer::from_slice(Location::Host, &b).unwrap();
        let mut c = Buffer::<f64>::zeroed(Location::Host, n).unwrap();
        let vec_add = kernels::vec_add_f64();
        let call = Codelet::new(&vec_add, &[location]).unwrap().call(
            &mut [
                Arg::buf(&x),
                Arg::buf(&y0),
                Arg::buf_mut(&mut c),
                Arg::u32(n as u32),
            ],
            Launch::d1(n),
        );
        let daxpy = kernels::daxpy();
        let mut y = Buffer::from_slice(Location::Host, &b).unwrap();
        let axpy = Codelet::new(&daxpy, &[location]).unwrap().call(
            &mut [
                Arg::f64(0.5),
                Arg::buf(&x),
                Arg::buf_mut(&mut y),
                Arg::u32(n as u32),
            ],
            Launch::d1(n),
        );
        match lacks {
            Some(why) => {
                for err in [call.unwrap_err(), axpy.unwrap_err()] {
                    assert!(err.to_string().contains("f64"), "{location}: {err}");
                }
                eprintln!("{location}: refused, as it should be: {why}");
                assert_eq!(c.to_vec().unwrap(), vec![0.0; n], "nothing written");
            }
            None => {
                call.unwrap();
                axpy.unwrap();
                let want: Vec<f64> = a.iter().zip(&b).map(|(p, q)| p + q).collect();
                assert_eq!(c.to_vec().unwrap(), want, "{location}: vec_add_f64");
                let want: Vec<f64> = a.iter().zip(&b).map(|(p, q)| 0.5 * p + q).collect();
                assert_eq!(y.to_vec().unwrap(), want, "{location}: daxpy");
            }
        }
    }
}

/// Half-precision scalars are refused before anything moves; 8- and 16-bit integer
/// scalars reach every technology that takes them (OpenCL, SYCL, OpenMP, the host).
#[test]
fn narrow_scalars() {
    let _serial = common::serial();
    let k = Kernel::new("half").scalar("s", DType::F16).host(|_, _| {});
    let err = Codelet::new(&k, &[Location::Host])
        .unwrap()
        .call(&mut [Arg::u32(1)], Launch::d1(1))
        .unwrap_err();
    assert!(err.to_string().contains("f16"), "{err}");
    let fill = Kernel::new("fill_u8")
        .buffer("x", DType::U8, Intent::Out)
        .scalar("v", DType::U8)
        .scalar("w", DType::I16)
        .scalar("n", DType::U32)
        .opencl_c(
            "__kernel void fill_u8(__global uchar *x, const uchar v, const short w, const uint n) {\n    size_t i = get_global_id(0);\n    if (i < n) x[i] = (uchar)(v + w);\n}\n",
            "fill_u8",
        )
        .openmp_c(
            "#include <stddef.h>\n#include <stdint.h>\nint locus_omp_k_fill_u8(void **args, size_t gx, size_t gy, int dev) {\n    (void)gy;\n    uint8_t *x = (uint8_t *)args[0];\n    uint8_t v = *(const uint8_t *)args[1];\n    int16_t w = *(const int16_t *)args[2];\n    size_t n = *(const unsigned *)args[3];\n    if (gx < n) n = gx;\n    #pragma omp target teams distribute parallel for device(dev) is_device_ptr(x)\n    for (size_t i = 0; i < n; ++i) x[i] = (uint8_t)(v + w);\n    return 0;\n}\n",
            "fill_u8",
        )
        .host(|args, global| {
            let (v, w): (u8, i16) = (args[1].scalar(), args[2].scalar());
            for x in args[0].elements_mut::<u8>().iter_mut().take(global[0]) {
                *x = (i16::from(v) + w) as u8;
            }
        });
    let cache = std::env::temp_dir().join(format!("locus-narrow-{}", std::process::id()));
    std::env::set_var("LOCUS_CACHE_DIR", &cache);
    for location in locus::available() {
        let mut x = Buffer::<u8>::zeroed(Location::Host, 100).unwrap();
        let call = Codelet::new(&fill, &[location]).unwrap().call(
            &mut [
                Arg::buf_mut(&mut x),
                Arg::u8(200),
                Arg::i16(-3),
                Arg::u32(100),
            ],
            Launch::d1(100),
        );
        if fill.has_source_for(location.technology()) {
            call.unwrap();
            assert_eq!(x.to_vec().unwrap(), vec![197; 100], "{location}");
        } else {
            assert!(call.is_err(), "{location}: no source, an error");
        }
    }
    let _ = std::fs::remove_dir_all(&cache);
}

/// The user's own OpenMP C, compiled at run time with `-fopenmp` and cached: a kernel
/// with a 64-bit scalar on every OpenMP device, and a broken one whose error carries
/// the compiler's diagnostics.
#[test]
fn openmp_kernels_from_the_user_s_own_c() {
    let _serial = common::serial();
    let Some(omp) = common::location("openmp:0") else {
        return;
    };
    let cache = std::env::temp_dir().join(format!("locus-omp-test-{}", std::process::id()));
    std::env::set_var("LOCUS_CACHE_DIR", &cache);
    let source = r#"
        #include <stddef.h>
        #include <stdint.h>
        int locus_omp_k_add_k(void **args, size_t gx, size_t gy, int dev) {
            (void)gy;
            uint64_t *x = (uint64_t *)args[0];
            uint64_t k = *(const uint64_t *)args[1];
            size_t n = *(const unsigned *)args[2];
            if (gx < n) n = gx;
            #pragma omp target teams distribute parallel for device(dev) is_device_ptr(x)
            for (size_t i = 0; i < n; ++i) x[i] += k;
            return 0;
        }
    "#;
    let kernel = Kernel::new("add_k")
        .buffer("x", DType::U64, Intent::InOut)
        .scalar("k", DType::U64)
        .scalar("n", DType::U32)
        .openmp_c(source, "add_k");
    let n = 1000;
    let data: Vec<u64> = (0..n as u64).collect();
    for round in 0..2 {
        let mut x = Buffer::from_slice(Location::Host, &data).unwrap();
        let k = (1u64 << 40) + round;
        Codelet::new(&kernel, &[omp])
            .unwrap()
            .call(
                &mut [Arg::buf_mut(&mut x), Arg::u64(k), Arg::u32(n as u32)],
                Launch::d1(n),
            )
            .unwrap();
        let want: Vec<u64> = data.iter().map(|v| v + k).collect();
        assert_eq!(x.to_vec().unwrap(), want, "round {round}");
    }
    let objects = std::fs::read_dir(cache.join("openmp"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "so")
        })
        .count();
    assert_eq!(objects, 1, "compiled once, cached");
    let broken = Kernel::new("broken").scalar("n", DType::U32).openmp_c(
        "int locus_omp_k_broken(void **args) { return undeclared_name; }",
        "broken",
    );
    let err = Codelet::new(&broken, &[omp])
        .unwrap()
        .call(&mut [Arg::u32(1)], Launch::d1(1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("undeclared_name") && err.contains(&omp.to_string()),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// An offloading GCC whose LTO link is broken (the CUDA image of an H200 machine: its
/// `/opt/gcc/bin/gcc`, built for nvptx and amdgcn offload, failed every `target` region
/// with "could not run lto-wrapper"): where libgomp has no offload device, locus builds
/// the kernel again without LTO, and it runs. A stand-in compiler fails as that one did
/// unless given `-fno-lto`, then hands over to the system's `cc`.
#[test]
fn an_offloading_gcc_with_a_broken_lto_link_still_builds_host_kernels() {
    let _serial = common::serial();
    let Some(omp) = common::location("openmp:0") else {
        return;
    };
    if locus::available()
        .iter()
        .any(|l| *l == "openmp:1".parse().unwrap())
    {
        eprintln!(
            "SKIPPED: libgomp has an offload device here; the retry is for host-only libgomp"
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("locus-omp-lto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fake = dir.join("offload-gcc");
    std::fs::write(
        &fake,
        "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -fno-lto ] && exec cc \"$@\"; done\n\
         echo '/usr/bin/ld: error: could not run lto-wrapper' >&2\n\
         echo 'collect2: error: ld returned 1 exit status' >&2\nexit 1\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::env::set_var("LOCUS_CACHE_DIR", dir.join("cache"));
    std::env::set_var("LOCUS_OPENMP_CC", &fake);
    let kernel = Kernel::new("triple")
        .buffer("x", DType::F32, Intent::InOut)
        .openmp_c(
            r#"
        #include <stddef.h>
        int locus_omp_k_triple(void **args, size_t gx, size_t gy, int dev) {
            float *x = (float *)args[0];
            (void)gy;
            #pragma omp target teams distribute parallel for device(dev) is_device_ptr(x)
            for (size_t i = 0; i < gx; ++i) x[i] *= 3.0f;
            return 0;
        }
        "#,
            "triple",
        );
    let outcome = Codelet::new(&kernel, &[omp]).and_then(|c| {
        let mut x = Buffer::from_slice(Location::Host, &data(500, 1.0))?;
        c.call(&mut [Arg::buf_mut(&mut x)], Launch::d1(500))?;
        x.to_vec()
    });
    std::env::remove_var("LOCUS_OPENMP_CC");
    let _ = std::fs::remove_dir_all(&dir);
    let want: Vec<f32> = data(500, 1.0).iter().map(|v| v * 3.0).collect();
    assert_eq!(outcome.unwrap(), want);
}

/// A codelet call comes after the moves and the producer's work its arguments wait for
/// (HAMR's stream order): the producer writes `y` behind a gate that opens 100 ms
/// later; a kernel launched before it would read the old values.
#[test]
fn calls_come_after_the_work_their_arguments_wait_for() {
    let _serial = common::serial();
    let n = 4096;
    let saxpy = kernels::saxpy();
    for location in locus::available() {
        let x = Buffer::filled(Location::Host, n, 1.0f32).unwrap();
        let mut y = Buffer::filled(Location::Host, n, 1.0f32).unwrap();
        let memory = y.memory_at(Location::Host).unwrap();
        let (gate, open) = locus::Event::user();
        y.order_after(&gate);
        let producer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            memory
                .write(0, bytemuck::cast_slice(&vec![5.0f32; n]))
                .unwrap();
            open.complete();
        });
        Codelet::new(&saxpy, &[location])
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
        assert_eq!(
            y.to_vec().unwrap(),
            vec![7.0; n],
            "{location}: the kernel ran before the producer's work"
        );
        producer.join().unwrap();
    }
}

/// OpenHMPP's fallback at run time: a kernel whose source does not build at the first
/// targets (broken OpenCL C, WGSL and OpenMP C here) falls back, call by call, to the
/// next target of the list, moving the data it needs; the report says where it ran and
/// why each target before it did not. A target with a good source after broken ones runs.
#[test]
fn a_launch_that_fails_falls_back_to_the_next_target() {
    let _serial = common::serial();
    let devices: Vec<Location> = locus::available()
        .into_iter()
        .filter(|l| !l.is_host())
        .collect();
    let broken = Kernel::new("double_or_fall_back")
        .buffer("x", DType::F32, Intent::InOut)
        .opencl_c("this is not OpenCL C", "double_or_fall_back")
        .wgsl("this is not WGSL", "double_or_fall_back", [64, 1, 1])
        .openmp_c("this is not C", "double_or_fall_back")
        .host(|args, _| args[0].f32s_mut().iter_mut().for_each(|v| *v *= 2.0));
    let mut targets = devices.clone();
    targets.push(Location::Host);
    let c = Codelet::new(&broken, &targets).unwrap();
    assert_eq!(c.fallbacks().last(), Some(&Location::Host));
    for &home in &targets {
        let mut x = Buffer::from_slice(home, &data(300, 1.0)).unwrap();
        let report = c
            .call(&mut [Arg::buf_mut(&mut x)], Launch::d1(300))
            .unwrap();
        assert_eq!(report.target, Location::Host, "from {home}");
        let tried: Vec<Location> = report.fell_back.iter().map(|(l, _)| *l).collect();
        assert_eq!(tried, devices, "from {home}");
        for (l, why) in &report.fell_back {
            assert!(why.len() > 10, "{l}: the reason is said: {why}");
            eprintln!("fell back past {l}: {}", why.lines().next().unwrap_or(""));
        }
        let expect: Vec<f32> = data(300, 1.0).iter().map(|v| v * 2.0).collect();
        assert_eq!(x.to_vec().unwrap(), expect, "from {home}");
    }
    // Broken WGSL, good OpenCL C: WebGPU falls back to OpenCL, which runs it.
    let (Some(&webgpu), Some(&opencl)) = (
        devices
            .iter()
            .find(|l| l.technology() == locus::Technology::WebGpu),
        devices
            .iter()
            .find(|l| l.technology() == locus::Technology::OpenCl),
    ) else {
        eprintln!("SKIPPED: the WebGPU-to-OpenCL fallback needs both");
        return;
    };
    let half = Kernel::new("half_or_fall_back")
        .buffer("x", DType::F32, Intent::InOut)
        .wgsl("this is not WGSL", "half_or_fall_back", [64, 1, 1])
        .opencl_c(
            "__kernel void half_or_fall_back(__global float *x) { x[get_global_id(0)] *= 0.5f; }",
            "half_or_fall_back",
        );
    let c = Codelet::new(&half, &[webgpu, opencl]).unwrap();
    let mut x = Buffer::from_slice(webgpu, &[4.0f32; 64]).unwrap();
    let report = c.call(&mut [Arg::buf_mut(&mut x)], Launch::d1(64)).unwrap();
    assert_eq!(report.target, opencl);
    assert_eq!(report.fell_back.len(), 1);
    assert_eq!(report.fell_back[0].0, webgpu);
    assert_eq!(x.to_vec().unwrap(), vec![2.0f32; 64]);
    // Nowhere to go: every failure is named.
    let c = Codelet::new(&half, &[webgpu]).unwrap();
    let err = c
        .call(&mut [Arg::buf_mut(&mut x)], Launch::d1(64))
        .unwrap_err()
        .to_string();
    assert!(!err.is_empty());
    assert_eq!(
        x.to_vec().unwrap(),
        vec![2.0f32; 64],
        "a failed launch leaves the data"
    );
}

/// OpenHMPP's `cond`: the condition, evaluated at each call, offloads the call or keeps
/// it on the host (with the host implementation); the buffers stay coherent as the
/// condition flips inside a loop, on every device as the offload target.
#[test]
fn cond_flips_between_the_device_and_the_host() {
    let _serial = common::serial();
    let k = kernels::saxpy();
    let n = 1000;
    for device in common::required_locations() {
        let c = Codelet::new(&k, &[device, Location::Host]).unwrap();
        let x = Buffer::from_slice(device, &data(n, 3.0)).unwrap();
        let mut y = Buffer::from_slice(Location::Host, &data(n, 4.0)).unwrap();
        let mut reference = data(n, 4.0);
        for step in 0..6u32 {
            let offload = step % 3 != 1; // device, host, device, device, host, device
            let a = 0.5 + step as f32;
            let report = c
                .call_if(
                    offload,
                    &mut [
                        Arg::f32(a),
                        Arg::buf(&x),
                        Arg::buf_mut(&mut y),
                        Arg::u32(n as u32),
                    ],
                    Launch::d1(n),
                )
                .unwrap();
            let expected_at = if offload { device } else { Location::Host };
            assert_eq!(report.target, expected_at, "{device}, step {step}");
            for (r, xv) in reference.iter_mut().zip(data(n, 3.0)) {
                *r += a * xv;
            }
            close(
                &y.to_vec().unwrap(),
                &reference,
                &format!("{device}, step {step}"),
            );
        }
    }
}
