//! Every HIP kernel locus ships, compiled for the architectures ROCm 5.2's hiprtc (the
//! one Debian carries) cannot compile for: MI300 (gfx942) and RDNA3 (gfx1100), by
//! LLVM 19's AMDGPU back end (Debian's clang 19 in HIP mode, device code only, to
//! assembly: no device library or linker is needed). Not locus's run-time path (hiprtc
//! is: `real_compiler_tests.rs`), but the same sources with the declarations hiprtc
//! builds in (`hip/hip_runtime.h`), so a construct those targets reject shows here. No
//! GPU runs the code (SKIPPED-RUN). Without clang 19 or newer the test prints SKIPPED,
//! and fails where `LOCUS_REQUIRE_COMPILERS` names `clang-hip` (CI).

use std::process::Command;

use crate::backends::cuda_hip::shipped_kernels_tests::{conversions, shipped, Kernel};

const ARCHS: [&str; 2] = ["gfx942", "gfx1100"];

/// A clang that knows gfx942 and gfx1100 (LLVM 19 or newer).
fn clang() -> Option<&'static str> {
    let found = ["clang++-21", "clang++-20", "clang++-19"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    let required = crate::core::config::text("LOCUS_REQUIRE_COMPILERS")
        .is_some_and(|list| list.split(',').any(|c| c.trim() == "clang-hip"));
    if found.is_none() {
        assert!(
            !required,
            "LOCUS_REQUIRE_COMPILERS names clang-hip and no clang++-19 or newer was found: \
             apt-get install clang-19 (scripts/cuda-clang-env.sh installs it)"
        );
        println!("SKIPPED: no clang++-19 or newer");
    }
    found
}

/// Compiles `source` for `arch` and checks that each of `entries` is a kernel of the
/// result.
fn compile(clang: &str, name: &str, source: &str, entries: &[&str], arch: &str) {
    let dir = std::env::temp_dir().join(format!("locus-clang-hip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let file = dir.join(format!("{name}.hip"));
    std::fs::write(&file, source).expect("the source written");
    let out = Command::new(clang)
        .args([
            "-x",
            "hip",
            "--offload-device-only",
            "-nogpulib",
            "--rocm-path=/usr",
        ])
        .args(["-include", "hip/hip_runtime.h", "-O2", "-S", "-o", "-"])
        .arg(format!("--offload-arch={arch}"))
        .arg(&file)
        .output()
        .expect("clang runs");
    let assembly = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name} for {arch}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for entry in entries {
        assert!(
            assembly.contains(&format!(".amdhsa_kernel {entry}\n")),
            "{name} for {arch}: no kernel `{entry}` in the code"
        );
    }
}

#[test]
fn every_shipped_hip_kernel_compiles_for_mi300_and_rdna3_with_llvm_19() {
    let Some(clang) = clang() else { return };
    let mut kernels: Vec<Kernel> = shipped("hip");
    let count = kernels.len();
    // One translation unit per source file; the conversions (one module each at run
    // time, every kernel named `locus_convert`) as one, each renamed apart.
    let mut units: Vec<(String, String, Vec<String>)> = Vec::new();
    for k in kernels.drain(..) {
        match units.iter_mut().find(|(origin, _, _)| *origin == k.origin) {
            Some((_, _, entries)) => entries.push(k.entry),
            None => units.push((k.origin, k.source, vec![k.entry])),
        }
    }
    let converts = conversions();
    let mut all = String::new();
    let mut entries = Vec::new();
    for (i, k) in converts.iter().enumerate() {
        let e = &k.entry;
        all += &format!("#define {e} {e}_{i}\n{}\n#undef {e}\n", k.source);
        entries.push(format!("{e}_{i}"));
    }
    units.push(("conversions".into(), all, entries));
    for (i, (_, source, entries)) in units.iter().enumerate() {
        let entries: Vec<&str> = entries.iter().map(String::as_str).collect();
        for arch in ARCHS {
            compile(clang, &format!("unit{i}"), source, &entries, arch);
        }
    }
    println!(
        "SKIPPED-RUN: {count} shipped kernels and {} conversion kernels compiled by {clang} for gfx942 and gfx1100; no GPU ran them",
        converts.len()
    );
}
