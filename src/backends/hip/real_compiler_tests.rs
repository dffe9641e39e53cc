//! Every HIP kernel locus ships (the codelets and stream kernels in `shaders/`, the
//! conversion kernels) compiled by the real hiprtc through HipApi's compile path (the
//! options it passes on a GPU: `--offload-arch` of the device) for AMD's data-centre and
//! desktop architectures that the installed hiprtc knows: gfx908 (MI100), gfx90a
//! (MI200) and gfx1030 (RDNA 2) (issue 61, item 3). Debian's ROCm 5.2 comgr does not
//! know gfx940 / gfx942 (MI300) or gfx1100 (RDNA 3): its `hiprtcCompileProgram` corrupts
//! the heap and aborts on them instead of failing, so for those the same path runs with
//! ROCm 5.7's hiprtc (Debian 13's, unpacked with its C library by
//! `scripts/hiprtc-5.7-env.sh`, in a child process under that C library's loader).
//! Only the runtime's module loading is a stand-in (no GPU here):
//! what this proves is that the code compiles (SKIPPED-RUN), never that it works. hiprtc
//! comes with the HIP runtime (Debian's `libamdhip64-5`); without it the test prints
//! SKIPPED, and fails where `LOCUS_REQUIRE_COMPILERS` names `hiprtc` (CI).

use super::simulated::SimHip;
use super::*;
use crate::backends::cuda_hip::shipped_kernels_tests::{conversions, shipped, Kernel};

/// Whether this process is the one to compile in: a child of its own, run for `test`
/// alone. The real hiprtc brings comgr's LLVM, and another LLVM in the same process (the
/// OpenCL or Vulkan CPU drivers', loaded by other unit tests when `cargo test` runs them
/// all in one process) aborts it ("Option ... registered more than once"). The parent
/// runs the child and checks that it passed.
fn in_a_process_of_its_own(test: &str) -> bool {
    in_a_process_under(test, None)
}

/// As [`in_a_process_of_its_own`], the child run under the loader of the unpacked
/// system at `root` (its C library and its HIP runtime) where `root` is given.
fn in_a_process_under(test: &str, root: Option<&str>) -> bool {
    if crate::core::config::is_set("LOCUS_REAL_COMPILER_CHILD") {
        return true;
    }
    let name = format!(
        "{}::{test}",
        module_path!().split_once("::").map_or("", |(_, rest)| rest)
    );
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut child = match root {
        Some(root) => {
            let mut c =
                std::process::Command::new(format!("{root}/usr/lib64/ld-linux-x86-64.so.2"));
            c.arg("--library-path")
                .arg(format!(
                    "{root}/usr/lib/x86_64-linux-gnu:{root}/lib/x86_64-linux-gnu"
                ))
                .arg(exe);
            c
        }
        None => std::process::Command::new(exe),
    };
    let out = child
        .args([name.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env("LOCUS_REAL_COMPILER_CHILD", "1")
        .output()
        .expect("the test binary runs");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        out.status.success(),
        "{name} failed in its own process:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{name} did not run in its own process"
    );
    false
}

/// One real compile at a time: ROCm 5.2's hiprtc (comgr) is not known to be safe on
/// several threads at once, and `cargo test` runs these tests on parallel threads.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The real hiprtc, where the HIP runtime loads.
fn hiprtc() -> Option<Box<dyn Hiprtc>> {
    let required = crate::core::config::text("LOCUS_REQUIRE_COMPILERS")
        .is_some_and(|list| list.split(',').any(|c| c.trim() == "hiprtc"));
    let found = load().ok().and_then(|(_, rtc, _, _)| rtc.ok());
    match (found, required) {
        (Some(rtc), _) => Some(Box::new(rtc)),
        (None, true) => panic!(
            "LOCUS_REQUIRE_COMPILERS names hiprtc and it was not found: apt-get install \
             libamdhip64-5 (Debian's HIP runtime carries hiprtc)"
        ),
        (None, false) => {
            println!("SKIPPED: hiprtc not found (no HIP runtime)");
            None
        }
    }
}

fn compile_all(kernels: &[Kernel], archs: &[&str]) -> bool {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for arch in archs {
        let Some(rtc) = hiprtc() else {
            return false;
        };
        let api = HipApi {
            raw: Box::new(SimHip::new(1 << 20)),
            rtc: Ok(rtc),
            pool: None,
            pools: Default::default(),
            streams: vec![std::ptr::null_mut()],
            archs: vec![Some(arch.to_string())],
        };
        for k in kernels {
            api.compile(&k.source, &k.entry)
                .unwrap_or_else(|e| panic!("{} `{}` for {arch}: {e}", k.origin, k.entry));
        }
    }
    true
}

const ARCHS: [&str; 3] = ["gfx908", "gfx90a", "gfx1030"];

#[test]
fn every_shipped_hip_kernel_compiles_for_mi100_mi200_and_rdna2() {
    if !in_a_process_of_its_own("every_shipped_hip_kernel_compiles_for_mi100_mi200_and_rdna2") {
        return;
    }
    let kernels = shipped("hip");
    assert!(
        kernels.len() >= 10,
        "found {} kernels in shaders/",
        kernels.len()
    );
    if compile_all(&kernels, &ARCHS) {
        println!(
            "SKIPPED-RUN: {} kernels compiled by hiprtc for gfx908, gfx90a, gfx1030; no GPU ran them",
            kernels.len()
        );
    }
}

#[test]
fn every_conversion_kernel_compiles_for_mi100_mi200_and_rdna2() {
    if !in_a_process_of_its_own("every_conversion_kernel_compiles_for_mi100_mi200_and_rdna2") {
        return;
    }
    let kernels = conversions();
    if compile_all(&kernels, &ARCHS) {
        println!(
            "SKIPPED-RUN: {} conversion kernels compiled by hiprtc for gfx908, gfx90a, gfx1030; no GPU ran them",
            kernels.len()
        );
    }
}

/// gfx942 (MI300) and gfx1100 (RDNA 3) through the same path, by ROCm 5.7's hiprtc: the
/// child runs under the loader of `LOCUS_HIPRTC_ROOT` (`scripts/hiprtc-5.7-env.sh`), so
/// the HIP runtime locus opens is that one (checked: a ROCm older than 5.7 fails).
#[test]
fn every_hip_kernel_compiles_for_mi300_and_rdna3_with_rocm_5_7() {
    const TEST: &str = "every_hip_kernel_compiles_for_mi300_and_rdna3_with_rocm_5_7";
    let root = crate::core::config::text("LOCUS_HIPRTC_ROOT");
    let required = crate::core::config::text("LOCUS_REQUIRE_COMPILERS")
        .is_some_and(|list| list.split(',').any(|c| c.trim() == "hiprtc-5.7"));
    if !crate::core::config::is_set("LOCUS_REAL_COMPILER_CHILD") {
        match root {
            Some(root) => {
                in_a_process_under(TEST, Some(&root));
            }
            None => {
                assert!(
                    !required,
                    "LOCUS_REQUIRE_COMPILERS names hiprtc-5.7 and LOCUS_HIPRTC_ROOT is unset: \
                     . scripts/hiprtc-5.7-env.sh"
                );
                println!("SKIPPED: LOCUS_HIPRTC_ROOT unset (scripts/hiprtc-5.7-env.sh)");
            }
        }
        return;
    }
    let Ok((raw, ..)) = load() else {
        panic!("the HIP runtime of LOCUS_HIPRTC_ROOT did not load")
    };
    let mut version = 0;
    // SAFETY: a plain query with an out-pointer to a local.
    unsafe { raw.hipRuntimeGetVersion(&mut version) };
    assert!(
        version >= 50_700_000,
        "the child opened ROCm {version}, not LOCUS_HIPRTC_ROOT's 5.7"
    );
    let kernels: Vec<Kernel> = shipped("hip").into_iter().chain(conversions()).collect();
    if compile_all(&kernels, &["gfx942", "gfx1100"]) {
        println!(
            "SKIPPED-RUN: {} kernels compiled by ROCm {}.{}'s hiprtc for gfx942 and gfx1100; no GPU ran them",
            kernels.len(),
            version / 10_000_000,
            version / 100_000 % 100
        );
    }
}
