//! Every HIP kernel locus ships (the codelets and stream kernels in `shaders/`, the
//! conversion kernels) compiled by the real hiprtc through HipApi's compile path (the
//! options it passes on a GPU: `--offload-arch` of the device) for AMD's data-centre and
//! desktop architectures that the installed hiprtc knows: gfx908 (MI100), gfx90a
//! (MI200) and gfx1030 (RDNA 2) (issue 61, item 3). Debian's ROCm 5.2 comgr does not
//! know gfx940 / gfx942 (MI300) or gfx1100 (RDNA 3): its `hiprtcCompileProgram` corrupts
//! the heap and aborts on them instead of failing, so those wait for a newer ROCm
//! (`docs/gpu-runs.md`). Only the runtime's module loading is a stand-in (no GPU here):
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
    if crate::core::config::is_set("LOCUS_REAL_COMPILER_CHILD") {
        return true;
    }
    let name = format!(
        "{}::{test}",
        module_path!().split_once("::").map_or("", |(_, rest)| rest)
    );
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
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
