//! Every CUDA kernel locus ships (the codelets and stream kernels in `shaders/`, the
//! conversion kernels) compiled by NVIDIA's own NVRTC through locus's compile path
//! ([`compile_image`]: the options it passes on a GPU) for the architectures of the
//! GPUs people run: Volta (sm_70), Ampere (sm_80), Hopper (sm_90) and Blackwell
//! (sm_100) (issue 61, item 3). No GPU runs the code here: what this proves is that it
//! compiles (SKIPPED-RUN), never that it works. NVRTC comes from PyPI
//! (`nvidia-cuda-nvrtc-cu12`, found through `LD_LIBRARY_PATH`); without it the test
//! prints SKIPPED, and fails where `LOCUS_REQUIRE_COMPILERS` names `nvrtc` (CI).

use super::kernels::compile_image;
use crate::backends::cuda_hip::shipped_kernels_tests::{conversions, shipped, Kernel};

fn nvrtc_found() -> bool {
    // SAFETY: only tries to open the library (cudarc panics on a call into one missing).
    let found = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    let required = crate::core::config::text("LOCUS_REQUIRE_COMPILERS")
        .is_some_and(|list| list.split(',').any(|c| c.trim() == "nvrtc"));
    match (found, required) {
        (true, _) => true,
        (false, true) => panic!(
            "LOCUS_REQUIRE_COMPILERS names nvrtc and libnvrtc was not found: pip install \
             nvidia-cuda-nvrtc-cu12 and put its nvidia/cuda_nvrtc/lib on LD_LIBRARY_PATH"
        ),
        (false, false) => {
            println!("SKIPPED: NVRTC (libnvrtc) not found");
            false
        }
    }
}

fn compile_all(kernels: &[Kernel], archs: &[(i32, i32)]) {
    for &arch in archs {
        for k in kernels {
            let image = compile_image(&k.source, arch).unwrap_or_else(|e| {
                panic!(
                    "{} `{}` for sm_{}{}: {e}",
                    k.origin, k.entry, arch.0, arch.1
                )
            });
            // A cubin (ELF), not PTX: NVRTC knew the architecture.
            assert!(
                image.starts_with(b"\x7fELF"),
                "{} for sm_{}{}: not a cubin",
                k.origin,
                arch.0,
                arch.1
            );
        }
    }
}

#[test]
fn every_shipped_cuda_kernel_compiles_for_volta_ampere_hopper_and_blackwell() {
    if !nvrtc_found() {
        return;
    }
    let kernels = shipped("cu");
    assert!(
        kernels.len() >= 10,
        "found {} kernels in shaders/",
        kernels.len()
    );
    compile_all(&kernels, &[(7, 0), (8, 0), (9, 0), (10, 0)]);
    println!(
        "SKIPPED-RUN: {} kernels compiled by NVRTC for sm_70, sm_80, sm_90, sm_100; no GPU ran them",
        kernels.len()
    );
}

#[test]
fn every_conversion_kernel_compiles_for_volta_ampere_hopper_and_blackwell() {
    if !nvrtc_found() {
        return;
    }
    let kernels = conversions();
    assert!(kernels.len() >= 100, "{} conversion kernels", kernels.len());
    compile_all(&kernels, &[(7, 0), (8, 0), (9, 0), (10, 0)]);
    println!(
        "SKIPPED-RUN: {} conversion kernels compiled by NVRTC for sm_70, sm_80, sm_90, sm_100; no GPU ran them",
        kernels.len()
    );
}
